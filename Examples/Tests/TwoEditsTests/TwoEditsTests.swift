import Foundation
import Testing
import TwoEditsKit

@Suite("Two background edits of the same record")
struct TwoEditsTests {
    @Test("plain saves lose one edit without an error; checked saves keep both after one conflict")
    func twoEdits() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("two-edits-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = try await runTwoEditsScenario(directory: directory)
        #expect(report.failures == [])

        // (a) Both saves committed, no conflict, and the contact holds only the later save's
        // edit: the earlier one is lost.
        #expect(report.plain.saveOrder.count == 2)
        #expect(report.plain.totalConflicts == 0)
        #expect(report.plain.lostEdits.count == 1)
        #expect(report.plain.lostEdits == [report.plain.saveOrder[0]])
        let onlyOneEdit = [Contact(name: "Ada King", phone: "555-0100"), Contact(name: "Ada Lovelace", phone: "555-0199")]
        #expect(onlyOneEdit.contains(report.plain.contact))

        // (b) The later save saw one conflict, retried on what the earlier one wrote, and
        // both edits are in the contact.
        #expect(report.checked.lostEdits == [])
        #expect(report.checked.totalConflicts == 1)
        #expect(report.checked.conflicts[report.checked.saveOrder[1]] == 1)
        #expect(report.checked.contact == Contact(name: "Ada King", phone: "555-0199"))
    }
}
