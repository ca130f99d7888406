// References: taking them, resolving them, and asking whether they changed. The design and
// why the answers hold across flushes and compactions are in HistoryProbe.swift and
// docs/architecture.md ("References").

extension ReadableTransaction {
    /// A reference to `key` at this transaction's version, to resolve or check in a later
    /// transaction. In a write transaction it refers to the committed data, before this
    /// transaction's own writes.
    public func reference(_ key: [UInt8]) throws -> KeyReference {
        try KeyValidation.checkKey(key)
        let probe = try HistoryProbe(self)
        let existed = try probe.newest(key).map { !$0.isDeletion } ?? false
        return KeyReference(key: key, version: probe.view.sequence, storeID: probe.storeID, existed: existed)
    }

    /// A reference to the entries whose key starts with `prefix`. Taking it counts the
    /// entries once, so it costs a scan of the range.
    public func reference(prefix: [UInt8]) throws -> QueryReference {
        try reference(from: prefix, to: Scan.upperBound(forPrefix: prefix))
    }

    /// A reference to the entries with `from <= key < to` (no upper bound when `to` is nil).
    /// Taking it counts the entries once, so it costs a scan of the range.
    public func reference(from: [UInt8], to: [UInt8]? = nil) throws -> QueryReference {
        try KeyValidation.checkBound(from)
        if let to { try KeyValidation.checkBound(to) }
        let probe = try HistoryProbe(self)
        return QueryReference(
            lower: from, upper: to, version: probe.view.sequence, storeID: probe.storeID,
            entryCount: try probe.liveCount(lower: from, upper: to))
    }

    /// The key's value as this transaction sees it (its own writes included), nil when it
    /// has none.
    public func resolve(_ reference: KeyReference) throws -> [UInt8]? {
        try HistoryProbe(self).checkStore(reference.storeID)
        return try get(reference.key)
    }

    /// The query run again, as this transaction sees the data (its own writes included).
    public func resolve(_ reference: QueryReference) throws -> [Entry] {
        try HistoryProbe(self).checkStore(reference.storeID)
        return Array(try scan(from: reference.lower, to: reference.upper))
    }

    /// True when a commit after `reference.version`, up to this transaction's version, put or
    /// deleted the key. It never misses such a commit, whatever flushes and compactions did
    /// meanwhile. It is false when nothing changed, except in one case: a key absent at the
    /// reference and absent now, once compaction has dropped a deletion newer than the
    /// reference, is reported as changed, because the store keeps no record of which keys
    /// such deletions touched. A write transaction's own writes are not commits and do not
    /// count.
    public func changedSince(_ reference: KeyReference) throws -> Bool {
        try HistoryProbe(self).changed(reference)
    }

    /// True when a commit after `reference.version`, up to this transaction's version,
    /// changed, added or removed an entry of the range (a put and a later delete of the same
    /// key count too). Never misses a change; false when nothing changed, except that once
    /// compaction has dropped a deletion newer than the reference, an unchanged range is
    /// reported as changed (the store cannot tell where that deletion was).
    public func changedSince(_ reference: QueryReference) throws -> Bool {
        try HistoryProbe(self).changed(reference)
    }

    /// Throws `StoreError` `.conflict` when ``changedSince(_:)-(KeyReference)`` is true: the
    /// optimistic check before writing what was read at the reference's version.
    public func require(unchanged reference: KeyReference) throws {
        if try changedSince(reference) {
            throw StoreError(
                .conflict, "the key changed after version \(reference.version), when it was read; read it again and redo the change")
        }
    }

    /// Throws `StoreError` `.conflict` when ``changedSince(_:)-(QueryReference)`` is true.
    public func require(unchanged reference: QueryReference) throws {
        if try changedSince(reference) {
            throw StoreError(
                .conflict, "the range changed after version \(reference.version), when it was read; run the query again and redo the change")
        }
    }
}

extension ReadTransaction: CommittedStateReading {
    func committedView() throws -> ReadView { view }
}

extension ReadOnlyTransaction: CommittedStateReading {
    func committedView() throws -> ReadView {
        try HistoryProbe(base).view
    }
}
