import Strata

extension RecordCollection {
    /// Stores `record` under its identifier, replacing any record there, and updates every
    /// index.
    ///
    /// - Throws: ``RecordError/Code/uniqueViolation`` when a unique index already holds the
    ///   record's key for another record; the transaction is then unchanged by this call.
    public func put(_ record: Record, in tx: WriteTransaction) throws {
        try write(record, in: tx, expecting: nil)
    }

    /// Stores a new record.
    ///
    /// - Throws: ``RecordError/Code/duplicateID`` when a record with the same identifier
    ///   exists, ``RecordError/Code/uniqueViolation`` as ``put(_:in:)``; either way nothing
    ///   is written.
    public func insert(_ record: Record, in tx: WriteTransaction) throws {
        try write(record, in: tx, expecting: false)
    }

    /// Replaces an existing record.
    ///
    /// - Throws: ``RecordError/Code/notFound`` when no record has the identifier,
    ///   ``RecordError/Code/uniqueViolation`` as ``put(_:in:)``; either way nothing is
    ///   written.
    public func update(_ record: Record, in tx: WriteTransaction) throws {
        try write(record, in: tx, expecting: true)
    }

    /// Deletes the record with identifier `id` and its index entries.
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
    ///   unique index.
    public func rebuildIndexes(in tx: WriteTransaction) throws {
        _ = try tx.deleteRange(from: layout.allIndexes, to: layout.allIndexes + [0xFF])
        for entry in try tx.scan(from: layout.records, to: layout.records + [0xFF]) {
            let record = try decode(entry.value, key: entry.key)
            let idBytes = Array(entry.key[layout.records.count...])
            for (key, value) in try checkedEntries(for: record, idBytes: idBytes, replacing: [], in: tx) {
                try tx.put(key, value)
            }
        }
    }

    // MARK: Shared with the StoreIO forms

    /// Writes `record`; `expecting` says whether a record must exist (update), must not
    /// (insert), or either (put). Every check is made before the first write, so a throw
    /// leaves the transaction as it was.
    func write(_ record: Record, in tx: WriteTransaction, expecting existing: Bool?) throws {
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
        if !indexes.isEmpty {
            for entry in try entries(for: decode(oldBytes, key: key), idBytes: idBytes) { try tx.delete(entry.key) }
        }
        try tx.delete(key)
        return true
    }

    /// The index entries a record has: key, and the identifier as the value.
    func entries(for record: Record, idBytes: [UInt8]) -> [(key: [UInt8], value: [UInt8])] {
        indexes.map { index in
            (layout.entryKey(index: index.name, key: index.key(record), idBytes: idBytes, unique: index.isUnique), idBytes)
        }
    }

    /// The record's entries, after checking that no unique one belongs to another record
    /// (entries in `replacing`, the record's current ones, are its own).
    private func checkedEntries(
        for record: Record, idBytes: [UInt8], replacing current: [(key: [UInt8], value: [UInt8])], in tx: WriteTransaction
    ) throws -> [(key: [UInt8], value: [UInt8])] {
        let entries = entries(for: record, idBytes: idBytes)
        let currentKeys = Set(current.map(\.key))
        for (index, entry) in zip(indexes, entries) where index.isUnique && !currentKeys.contains(entry.key) {
            if let owner = try tx.get(entry.key), owner != idBytes {
                throw RecordError(
                    .uniqueViolation,
                    "unique index \"\(index.name)\" already holds \(KeyElement.tuple(index.key(record))) for record \(Self.describe(owner)); record \(record.id) was not written",
                    collection: name)
            }
        }
        return entries
    }
}
