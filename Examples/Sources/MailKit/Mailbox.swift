import Foundation
import Strata

/// A mail as the example stores it: JSON under `mail/<id>`.
public struct Mail: Codable, Sendable, Equatable, CustomStringConvertible {
    public var id: Int
    public var subject: String
    public var isRead: Bool

    public init(id: Int, subject: String, isRead: Bool) {
        self.id = id
        self.subject = subject
        self.isRead = isRead
    }

    public var description: String { "\(id) \"\(subject)\" (\(isRead ? "read" : "unread"))" }
}

/// The key layout, and the few operations the app needs.
///
/// Every mail is a record under `mail/<id>`, and every read mail also has an empty entry
/// under `read/<id>`: an index, so "the read mail" is one prefix, `read/`, that a scan lists
/// and a query reference can point at. `save` writes the record and its index entry in the
/// same transaction, so the two always agree.
public enum Mailbox {
    static let mailPrefix = Array("mail/".utf8)
    public static let readPrefix = Array("read/".utf8)

    /// The id, zero-padded to six digits so that keys sort in id order.
    static func suffix(_ id: Int) -> [UInt8] {
        let digits = String(id)
        return Array((String(repeating: "0", count: max(0, 6 - digits.count)) + digits).utf8)
    }

    static func mailKey(_ id: Int) -> [UInt8] { mailPrefix + suffix(id) }
    static func readKey(_ id: Int) -> [UInt8] { readPrefix + suffix(id) }

    /// The id an index entry (`read/<id>`) stands for.
    static func id(ofIndexKey key: [UInt8]) -> Int { Int(String(decoding: key.dropFirst(readPrefix.count), as: UTF8.self))! }

    /// Saves `mail` and puts or removes its `read/` entry to match its flag.
    public static func save(_ mail: Mail, in tx: WriteTransaction) throws {
        try tx.put(mailKey(mail.id), Array(try JSONEncoder().encode(mail)))
        if mail.isRead {
            try tx.put(readKey(mail.id), [])
        } else {
            try tx.delete(readKey(mail.id))
        }
    }

    /// Marks mail `id` unread, as a sync from another device would.
    public static func markUnread(_ id: Int, in tx: WriteTransaction) throws {
        guard let bytes = try tx.get(mailKey(id)) else { return }
        var mail = try JSONDecoder().decode(Mail.self, from: Data(bytes))
        mail.isRead = false
        try save(mail, in: tx)
    }

    /// Every mail, in id order.
    public static func all(in tx: some ReadableTransaction) throws -> [Mail] {
        try tx.scan(prefix: mailPrefix).map { try JSONDecoder().decode(Mail.self, from: Data($0.value)) }
    }

    /// The ids of the read mail, from the index.
    public static func readIDs(in tx: some ReadableTransaction) throws -> [Int] {
        try tx.scan(prefix: readPrefix).map { id(ofIndexKey: $0.key) }
    }
}

/// What ``deleteReadMail(_:in:)`` found and did.
public struct Deletion: Sendable, Equatable {
    /// Whether a commit changed the read mail after the reference was taken.
    public var changedSinceReference: Bool
    /// The mails deleted: those read now.
    public var deleted: [Int]
}

/// The background job behind "Delete read mail": deletes the mails the query `readMail`
/// (the `read/` prefix) finds now, in the transaction it runs in.
///
/// The UI listed the read mail when it took the reference, but that list may be stale by the
/// time the job runs: resolving the reference runs the query again against the data this
/// transaction sees, so a mail marked unread meanwhile is not deleted.
public func deleteReadMail(_ readMail: QueryReference, in tx: WriteTransaction) throws -> Deletion {
    let changed = try tx.changedSince(readMail)
    let stillRead = try tx.resolve(readMail).map { Mailbox.id(ofIndexKey: $0.key) }
    for id in stillRead {
        try tx.delete(Mailbox.mailKey(id))
        try tx.delete(Mailbox.readKey(id))
    }
    return Deletion(changedSinceReference: changed, deleted: stillRead)
}
