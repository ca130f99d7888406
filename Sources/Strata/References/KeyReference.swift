import Foundation

/// A handle on one key, taken in a transaction and usable in any later one, on any thread:
/// Strata's answer to handing an object to a background thread. It holds the key, the version
/// it was taken at and the store it belongs to; it pins nothing, so holding a million of them
/// costs no disk space.
///
/// ```swift
/// let ref = try store.read { tx in try tx.reference(key) }
/// store.asyncWrite({ tx in
///     try tx.require(unchanged: ref)        // .conflict if a commit touched the key
///     try tx.put(ref.key, edited)
/// }) { result in }
/// ```
///
/// Resolve it with ``ReadableTransaction/resolve(_:)-(KeyReference)`` and ask whether it
/// changed with ``ReadableTransaction/changedSince(_:)-(KeyReference)``. A reference taken
/// from one store is refused by another with `.invalidArgument`.
public struct KeyReference: Sendable, Hashable, Codable {
    /// The key referred to.
    public let key: [UInt8]
    /// The commit sequence the reference was taken at: commits after it are changes.
    public let version: UInt64
    /// The store it belongs to.
    public let storeID: UUID
    /// Whether the key had a committed value at `version`.
    let existed: Bool
}

/// A handle on a range query (a prefix, or `from..<to`), taken in a transaction and usable in
/// any later one, on any thread. Resolving it runs the query again, against the data the
/// resolving transaction sees; it pins nothing.
///
/// ```swift
/// let unread = try store.read { tx in try tx.reference(prefix: Array("mail/read/".utf8)) }
/// try store.write { tx in
///     for mail in try tx.resolve(unread) { try tx.delete(mail.key) }
/// }
/// ```
public struct QueryReference: Sendable, Hashable, Codable {
    /// The first key of the range.
    public let lower: [UInt8]
    /// The end of the range (exclusive), nil for no upper bound.
    public let upper: [UInt8]?
    /// The commit sequence the reference was taken at.
    public let version: UInt64
    /// The store it belongs to.
    public let storeID: UUID
    /// How many committed entries the range held at `version`: with the sequences kept on
    /// each entry, it is what tells that an entry was removed (HistoryProbe).
    let entryCount: Int
}
