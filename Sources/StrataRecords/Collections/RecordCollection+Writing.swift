import Strata

extension RecordCollection {
    /// Stores `record` under its identifier, replacing any record there, and updates every
    /// index.
    ///
    /// A call that throws leaves the record and every index entry exactly as they were, so
    /// a caller may catch the error and go on with the transaction.
    ///
    /// - Throws: ``RecordError/Code/uniqueViolation`` when a unique index already holds the
    ///   record's key for another record; ``RecordError/Code/encoding`` when the record's
    ///   `encode(to:)` throws; `StoreError` `.invalidArgument` when the encoded record is over
    ///   the value limit or an index key over the key limit (docs/limits.md); whatever an
    ///   index's key function throws. The transaction is then unchanged by this call.
    public func put(_ record: Record, in tx: WriteTransaction) throws {
        try write(record, in: tx, expecting: nil)
    }

    /// Stores a new record.
    ///
    /// - Throws: ``RecordError/Code/duplicateID`` when a record with the same identifier
    ///   exists, or what ``put(_:in:)`` throws; either way nothing is written.
    public func insert(_ record: Record, in tx: WriteTransaction) throws {
        try write(record, in: tx, expecting: false)
    }

    /// Replaces an existing record.
    ///
    /// - Throws: ``RecordError/Code/notFound`` when no record has the identifier, or what
    ///   ``put(_:in:)`` throws; either way nothing is written.
    public func update(_ record: Record, in tx: WriteTransaction) throws {
        try write(record, in: tx, expecting: true)
    }

    /// Deletes the record with identifier `id` and its index entries.
    ///
    /// A call that throws (the stored record does not decode, or an index's key function
    /// throws) deletes nothing.
    ///
    /// - Returns: Whether there was such a record.
    @discardableResult
    public func delete(_ id: Record.ID, in tx: WriteTransaction) throws -> Bool {
        try delete(idBytes: CollectionLayout.idBytes(id.keyElement), in: tx)
    }

    /// Deletes every index entry of the collection and writes them again from the records:
    /// for a migration after an index's key function or `unique` flag changed, or after an
    /// index was added to a collection that already has records.
    ///
    /// - Throws: ``RecordError/Code/uniqueViolation`` when two records share a key in a
    ///   unique index; the index entries are then as they were before the call.
    public func rebuildIndexes(in tx: WriteTransaction) throws {
        try tx.savepoint {
            _ = try tx.deleteRange(from: layout.allIndexes, to: layout.allIndexes + [0xFF])
            for entry in try tx.scan(from: layout.records, to: layout.records + [0xFF]) {
                let record = try decode(entry.value, key: entry.key)
                let idBytes = Array(entry.key[layout.records.count...])
                for (key, value) in try checkedEntries(for: record, idBytes: idBytes, replacing: [], in: tx) {
                    try tx.put(key, value)
                }
            }
        }
    }

    // MARK: Shared with the StoreIO forms

    /// Writes `record`; `expecting` says whether a record must exist (update), must not
    /// (insert), or either (put). The record's checks come first, but some failures can only
    /// come from a write itself (a key or value over the store's limits, the transaction's
    /// size): the writes go in one savepoint, so any throw leaves the transaction as it was.
    func write(_ record: Record, in tx: WriteTransaction, expecting existing: Bool?) throws {
        try tx.savepoint { try writeSteps(record, in: tx, expecting: existing) }
    }

    private func writeSteps(_ record: Record, in tx: WriteTransaction, expecting existing: Bool?) throws {
        let idBytes = CollectionLayout.idBytes(record.id.keyElement)
        let key = layout.recordKey(idBytes: idBytes)
        let value = try encode(record)
        // Without indexes the old record matters only for insert and update.
        let oldBytes = indexes.isEmpty && existing == nil ? nil : try tx.get(key)
        if let existing, existing != (oldBytes != nil) {
            throw existing
                ? RecordError(.notFound, "no record with identifier \(record.id) to update", collection: name)
                : RecordError(.duplicateID, "a record with identifier \(record.id) already exists", collection: name)
        }
        guard !indexes.isEmpty else { return try tx.put(key, value) }

        let oldEntries = try oldBytes.map { try entries(for: decode($0, key: key), idBytes: idBytes) } ?? []
        let newEntries = try checkedEntries(for: record, idBytes: idBytes, replacing: oldEntries, in: tx)
        let newKeys = Set(newEntries.map(\.key))
        let oldKeys = Set(oldEntries.map(\.key))
        for old in oldEntries where !newKeys.contains(old.key) { try tx.delete(old.key) }
        for new in newEntries where !oldKeys.contains(new.key) { try tx.put(new.key, new.value) }
        try tx.put(key, value)
    }

    func delete(idBytes: [UInt8], in tx: WriteTransaction) throws -> Bool {
        let key = layout.recordKey(idBytes: idBytes)
        guard let oldBytes = try tx.get(key) else { return false }
        // Computed before the first delete, and the deletes in one savepoint, as `write`.
        let oldEntries = indexes.isEmpty ? [] : try entries(for: decode(oldBytes, key: key), idBytes: idBytes)
        try tx.savepoint {
            for entry in oldEntries { try tx.delete(entry.key) }
            try tx.delete(key)
        }
        return true
    }

    /// The index entries a record has: key, and the identifier as the value.
    func entries(for record: Record, idBytes: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])] {
        try indexes.map { index in
            (layout.entryKey(index: index.name, key: try index.key(record), idBytes: idBytes, unique: index.isUnique), idBytes)
        }
    }

    /// The record's entries, after checking that no unique one belongs to another record
    /// (entries in `replacing`, the record's current ones, are its own).
    private func checkedEntries(
        for record: Record, idBytes: [UInt8], replacing current: [(key: [UInt8], value: [UInt8])], in tx: WriteTransaction
    ) throws -> [(key: [UInt8], value: [UInt8])] {
        let entries = try entries(for: record, idBytes: idBytes)
        let currentKeys = Set(current.map(\.key))
        for (index, entry) in zip(indexes, entries) where index.isUnique && !currentKeys.contains(entry.key) {
            if let owner = try tx.get(entry.key), owner != idBytes {
                throw RecordError(
                    .uniqueViolation,
                    "unique index \"\(index.name)\" already holds \(KeyElement.tuple(try index.key(record))) for record \(Self.describe(owner)); record \(record.id) was not written",
                    collection: name)
            }
        }
        return entries
    }
}
