// two-edits: two background tasks edit the same contact at once (TwoEditsKit/TwoEdits.swift).
// Shows that plain read-change-put saves lose one edit without any error, and that
// `require(unchanged: reference)` in the save turns that into a conflict the task retries, so
// both edits are kept. Exits 1 if a check failed.
//
//   swift run --package-path Examples two-edits [directory]
import Foundation
import TwoEditsKit

let arguments = CommandLine.arguments.dropFirst()
let directory = arguments.first ?? FileManager.default.temporaryDirectory.appendingPathComponent("two-edits-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let report = try await runTwoEditsScenario(directory: directory)
if arguments.isEmpty { try? FileManager.default.removeItem(atPath: directory) }

print("the contact: \(TwoEditsReport.original)")
for edit in TwoEditsReport.edits { print("the \(edit.task) \(edit.summary)") }
print("each task reads the contact, waits until the other has read it too, changes its field and saves")

func describe(_ round: EditRound) {
    print("  saves committed in order: \(round.saveOrder.joined(separator: ", "))")
    for (task, count) in round.conflicts.sorted(by: { $0.key < $1.key }) where count > 0 {
        print("  the \(task)'s save failed with .conflict \(count)x; it read the contact again (a new reference), redid its change and saved")
    }
    print("  contact now: \(round.contact)")
}

print("\n(a) plain saves: read, change, put")
describe(report.plain)
print("  no error and no merge policy: the one writer queue ran the saves one after the other")
if let lost = report.plain.lostEdits.first, let winner = report.plain.saveOrder.last {
    print("  ONE EDIT LOST: the \(winner) put the whole contact as it had read it, over the \(lost)'s save (last writer wins)")
}

print("\n(b) saves that require(unchanged:) the reference taken with the read")
describe(report.checked)
if report.checked.lostEdits.isEmpty { print("  both edits kept") }

for failure in report.failures { print("FAILED: \(failure)") }
print(report.failures.isEmpty ? "PASS" : "FAIL")
exit(report.failures.isEmpty ? 0 : 1)
