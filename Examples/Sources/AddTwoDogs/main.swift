// Adds two dogs in one transaction, then shows that a composition that fails halfway
// applies nothing. Usage: add-two-dogs [directory] (default: a new temporary directory).
import DogsKit
import Foundation

let arguments = CommandLine.arguments.dropFirst()
let directory = arguments.first ?? FileManager.default.temporaryDirectory.appendingPathComponent("add-two-dogs-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let report = try runTwoDogsScenario(directory: directory)
if arguments.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
print("two dogs added in \(report.commitsForTwoDogs) commit(s): \(report.dogsAfterTwo.map(\.name).joined(separator: ", "))")
print("adding Bella and Rex again failed with: \(report.refusedError.map { "DogExists(\($0.name))" } ?? "nothing")")
print("dogs afterwards: \(report.dogsAfterRefusal.map(\.name).joined(separator: ", "))")
for failure in report.failures { print("FAILED: \(failure)") }
exit(report.failures.isEmpty ? 0 : 1)
