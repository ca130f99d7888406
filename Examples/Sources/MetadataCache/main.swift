// metadata-cache: runs the lifecycle scenario (MetadataCacheKit/LifecycleScenario.swift)
// against a store in a temporary directory, or in the directory given as the argument, and
// prints what it saw. Exits 1 if any check failed.
//
//   swift run --package-path Examples metadata-cache [directory]
import Foundation
import MetadataCacheKit

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count <= 1 else {
    FileHandle.standardError.write(Data("usage: metadata-cache [directory]\n".utf8))
    exit(2)
}

// A directory of our own unless one was given. Ours is removed after a run that passed; a
// failed run keeps it, to look at the store.
let directory: URL
let ownsDirectory = arguments.isEmpty
if let argument = arguments.first {
    directory = URL(fileURLWithPath: argument)
} else {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-cache-\(UUID().uuidString)")
}

let started = ContinuousClock.now
let report: ScenarioReport
do {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    report = try await runLifecycleScenario(directory: directory.path) { print($0) }
} catch {
    print("metadata-cache: the scenario stopped: \(error) (store in \(directory.path))")
    exit(1)
}
print(report.summary)
print("took \(ContinuousClock.now - started)")

if !report.passed {
    print("store kept in \(directory.path)")
    exit(1)
}
if ownsDirectory {
    try? FileManager.default.removeItem(at: directory)
}
