import Foundation
import MailKit
import Testing

@Suite("Delete read mail in the background")
struct MailTests {
    @Test("the deletion resolves the query reference now: a mail marked unread meanwhile survives")
    func deleteReadMail() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mail-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = try await runDeleteReadMailScenario(directory: directory)
        #expect(report.failures == [])

        #expect(report.listedAsRead == [1, 2, 4])
        #expect(report.deletion.changedSinceReference)
        #expect(report.deletion.deleted == [1, 4])
        // Mail 2, marked unread after the UI listed it, survives; so do the unread 3 and 5.
        #expect(report.inboxAfter.map(\.id) == [2, 3, 5])
        #expect(report.inboxAfter.allSatisfy { !$0.isRead })
    }
}
