/// A secondary index of a ``RecordCollection``: a key computed from each record, kept in the
/// same transaction as the record, so records can be found by field values in key order.
///
/// ```swift
/// let byFolder = RecordIndex<Mail>("folder-date") { [$0.folder, $0.received.descending] }
/// let byMessageID = RecordIndex<Mail>("message-id", unique: true) { [$0.messageID] }
/// let mail = RecordCollection<Mail>("mail", indexes: [byFolder, byMessageID])
/// let inbox = try store.read { tx in try mail.find(byFolder, equalTo: ["inbox"], in: tx) }   // newest first
/// print(inbox.map(\.messageID))
/// ```
///
/// The key is a list of elements compared as a ``KeyTuple``: queries match its first
/// elements exactly (``RecordCollection/find(_:equalTo:in:reverse:limit:)``) or take a range of
/// them (``RecordCollection/find(_:from:to:in:reverse:limit:)``), and return records in the
/// index's order, ties in identifier order. Mark an element `.descending` for newest-first.
///
/// A unique index refuses a write that would give two records the same key: the write
/// throws ``RecordError/Code/uniqueViolation`` and changes nothing.
///
/// The stored entries depend on the index's name, its `unique` flag and its key function.
/// After changing the key function or the flag, rebuild the index in a migration
/// (``RecordCollection/rebuildIndexes(in:)``); otherwise queries return what the old
/// definition stored.
public struct RecordIndex<Record>: Sendable {
    /// The index's name, unique within its collection; part of its stored keys.
    public let name: String
    /// Whether two records may share a key.
    public let isUnique: Bool
    let key: @Sendable (Record) throws -> [KeyElement]

    /// An index named `name` whose key for a record is the elements `key` returns.
    ///
    /// When `key` throws, the write (or delete) of that record throws the same error and
    /// changes nothing.
    ///
    /// - Precondition: `name` is not empty.
    public init(
        _ name: String, unique: Bool = false, _ key: @escaping @Sendable (Record) throws -> [any KeyElementConvertible]
    ) {
        precondition(!name.isEmpty, "an index needs a name")
        self.name = name
        self.isUnique = unique
        self.key = { record in try key(record).map(\.keyElement) }
    }
}
