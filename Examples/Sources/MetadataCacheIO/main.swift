// metadata-cache-io: the metadata cache's helpers as StoreIO values
// (MetadataCacheKit/MetadataIO.swift), composed into a folder sync pass that runs as one
// commit, and a pass with a failing step that applies nothing. Exits 1 if a check failed.
//
//   swift run --package-path Examples metadata-cache-io [directory]
import Foundation
import MetadataCacheKit

let arguments = CommandLine.arguments.dropFirst()
let directory = arguments.first ?? FileManager.default.temporaryDirectory.appendingPathComponent("metadata-cache-io-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let report = try await runMetadataIOScenario(directory: directory)
if arguments.isEmpty { try? FileManager.default.removeItem(atPath: directory) }

func show(_ records: [FileMetadata]) {
    for record in records {
        print("  \(record.path)  \(record.size) bytes, modified \(record.modified.ISO8601Format().prefix(10))")
    }
}
func names(_ paths: [String]) -> String { paths.joined(separator: ", ") }

print("cached \(report.seeded.count) files in \(report.commitsToSeed) commit(s), StoreIO.sequence of record(_:):")
show(report.seeded)
print("sync pass: touch(_:) the changed files, record(_:) the new ones, evict(keepingAtMost: 5); one composition, one store.run")
print("  \(report.commitsForPass) commit(s)")
print("  touched (read-modify-write): \(names(report.pass.touched))")
print("  added: \(names(report.pass.added))")
print("  evicted: \(names(report.pass.evicted)): Budget.numbers was older, but the eviction, in the same transaction, saw its new date")
print("cache now:")
show(report.afterPass)
if let error = report.failedPassError {
    let notes = report.afterFailedPass.first { $0.path == "/Documents/Notes.txt" }
    print("a pass that touches Notes.txt, then \(error.path), which is not cached, failed with NotCached")
    print("  \(report.commitsForFailedPass) commit(s); nothing of it applied: Notes.txt still \(notes?.size ?? 0) bytes, Draft.txt not added")
}

for failure in report.failures { print("FAILED: \(failure)") }
print(report.failures.isEmpty ? "PASS" : "FAIL")
exit(report.failures.isEmpty ? 0 : 1)
