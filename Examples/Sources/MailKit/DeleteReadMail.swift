// "Delete read emails in the background": the user taps "Delete read mail" in a list the UI
// built a moment ago; the deletion runs later, on the store's writer queue. With Realm the UI
// hands the background thread a ThreadSafeReference to its query results; here it hands over
// a `QueryReference`, a small Sendable value that pins nothing. The background transaction
// resolves it, which runs the query again now: a mail marked unread in between (by a sync
// from another device, say) is no longer in the results and is not deleted.
import Foundation
import Strata

/// What the scenario saw; `failures` is empty when every check passed.
public struct MailReport: Sendable {
    public var inboxBefore: [Mail] = []
    /// The read mail the UI listed, and the version it listed them at.
    public var listedAsRead: [Int] = []
    public var referenceVersion: UInt64 = 0
    /// The mail another write marked unread after the UI had listed it.
    public var markedUnread = 0
    public var deletion = Deletion(changedSinceReference: false, deleted: [])
    public var inboxAfter: [Mail] = []
    public var failures: [String] = []
}

/// The inbox the scenario starts with: three read mails, two unread.
public let sampleInbox = [
    Mail(id: 1, subject: "Welcome to Strata Mail", isRead: true),
    Mail(id: 2, subject: "Your invoice", isRead: true),
    Mail(id: 3, subject: "Lunch on Friday?", isRead: false),
    Mail(id: 4, subject: "Weekly digest", isRead: true),
    Mail(id: 5, subject: "Re: the release", isRead: false)
]

/// Runs the scenario against a store in `directory` and checks its outcome: the mail marked
/// unread survives, the other read mails are deleted, the unread ones are untouched, and the
/// reference reported the change.
public func runDeleteReadMailScenario(directory: String) async throws -> MailReport {
    let store = try Store(path: directory + "/mail.strata")
    defer { try? store.close() }
    var report = MailReport()

    try await store.write { tx in
        for mail in sampleInbox { try Mailbox.save(mail, in: tx) }
    }
    report.inboxBefore = try await store.read { tx in try Mailbox.all(in: tx) }

    // The UI shows the read mail and, in the same read transaction, takes a reference to the
    // query behind the list: what it will hand to the background job.
    let (listed, readMail) = try await store.read { tx in
        (try Mailbox.readIDs(in: tx), try tx.reference(prefix: Mailbox.readPrefix))
    }
    report.listedAsRead = listed
    report.referenceVersion = readMail.version

    // Meanwhile, before the deletion runs, a sync from another device marks mail 2 unread.
    report.markedUnread = 2
    try await store.write { tx in try Mailbox.markUnread(2, in: tx) }

    // The user tapped "Delete read mail": the job is queued with asyncWrite and runs on the
    // writer queue; only the reference crosses over, never the UI's stale list.
    report.deletion = try await withCheckedThrowingContinuation { continuation in
        store.asyncWrite({ tx in try deleteReadMail(readMail, in: tx) }) { result in continuation.resume(with: result) }
    }
    report.inboxAfter = try await store.read { tx in try Mailbox.all(in: tx) }

    // The checks.
    let expectedAfter = sampleInbox.filter { !$0.isRead || $0.id == 2 }.map { mail in
        Mail(id: mail.id, subject: mail.subject, isRead: false)
    }
    if report.listedAsRead != [1, 2, 4] { report.failures.append("the UI listed \(report.listedAsRead) as read") }
    if !report.deletion.changedSinceReference { report.failures.append("changedSince(readMail) was false after mail 2 was marked unread") }
    if report.deletion.deleted != [1, 4] { report.failures.append("the deletion deleted \(report.deletion.deleted), not [1, 4]") }
    if report.inboxAfter != expectedAfter { report.failures.append("the inbox holds \(report.inboxAfter), not \(expectedAfter)") }
    return report
}
