import Strata

extension RecordCollection {
    /// The record with identifier `id`, or nil.
    public func get(_ id: Record.ID, in tx: some ReadableTransaction) throws -> Record? {
        try get(idBytes: CollectionLayout.idBytes(id.keyElement), in: tx)
    }

    /// True when a record with identifier `id` exists.
    public func contains(_ id: Record.ID, in tx: some ReadableTransaction) throws -> Bool {
        try tx.contains(layout.recordKey(idBytes: CollectionLayout.idBytes(id.keyElement)))
    }

    /// The records with `from <= id < to`, in identifier order (or reverse); all of them when
    /// both bounds are nil. At most `limit` records when a limit is given.
    public func scan(
        in tx: some ReadableTransaction, from: Record.ID? = nil, to: Record.ID? = nil, reverse: Bool = false,
        limit: Int? = nil
    ) throws -> [Record] {
        let (lower, upper) = idRange(from: from.map(\.keyElement), to: to.map(\.keyElement))
        return try records(keysFrom: lower, to: upper, in: tx, reverse: reverse, limit: limit)
    }

    /// How many records the collection holds. Counts keys without decoding records.
    public func count(in tx: some ReadableTransaction) throws -> Int {
        var count = 0
        try tx.forEachUnsafe(from: layout.records, to: layout.records + [0xFF]) { _, _ in
            count += 1
            return true
        }
        return count
    }

    /// The records whose key in `index` starts with `values`, in index order (or reverse).
    ///
    /// `values` may be shorter than the index's key: `find(byFolder, equalTo: ["inbox"], ...)`
    /// on an index keyed `[folder, date]` gives the inbox's records by date.
    public func find(
        _ index: RecordIndex<Record>, equalTo values: [any KeyElementConvertible], in tx: some ReadableTransaction,
        reverse: Bool = false, limit: Int? = nil
    ) throws -> [Record] {
        let prefix = try indexPrefix(index) + KeyTuple(values.map(\.keyElement)).bytes
        return try records(entriesFrom: prefix, to: prefix + [0xFF], in: tx, reverse: reverse, limit: limit)
    }

    /// The records whose key in `index` is at least `from` and below `to` (no upper bound
    /// when nil), compared as tuples, in index order (or reverse).
    ///
    /// Bounds may be shorter than the key: on an index keyed `[folder, date]`,
    /// `from: ["inbox", monday], to: ["inbox", friday]` gives the inbox's records from Monday
    /// up to, not including, Friday.
    public func find(
        _ index: RecordIndex<Record>, from: [any KeyElementConvertible], to: [any KeyElementConvertible]?,
        in tx: some ReadableTransaction, reverse: Bool = false, limit: Int? = nil
    ) throws -> [Record] {
        let prefix = try indexPrefix(index)
        let lower = prefix + KeyTuple(from.map(\.keyElement)).bytes
        let upper = to.map { prefix + KeyTuple($0.map(\.keyElement)).bytes } ?? prefix + [0xFF]
        return try records(entriesFrom: lower, to: upper, in: tx, reverse: reverse, limit: limit)
    }

    // MARK: Shared with the StoreIO forms and the writers

    func get(idBytes: [UInt8], in tx: some ReadableTransaction) throws -> Record? {
        let key = layout.recordKey(idBytes: idBytes)
        return try tx.get(key).map { try decode($0, key: key) }
    }

    func idRange(from: KeyElement?, to: KeyElement?) -> (lower: [UInt8], upper: [UInt8]) {
        let lower = from.map { layout.recordKey(idBytes: CollectionLayout.idBytes($0)) } ?? layout.records
        let upper = to.map { layout.recordKey(idBytes: CollectionLayout.idBytes($0)) } ?? layout.records + [0xFF]
        return (lower, upper)
    }

    /// The records whose keys are in `[lower, upper)`.
    func records(
        keysFrom lower: [UInt8], to upper: [UInt8], in tx: some ReadableTransaction, reverse: Bool, limit: Int?
    ) throws -> [Record] {
        var records: [Record] = []
        for entry in try tx.scan(from: lower, to: upper, reverse: reverse) {
            if let limit, records.count >= limit { break }
            records.append(try decode(entry.value, key: entry.key))
        }
        return records
    }

    func indexPrefix(_ index: RecordIndex<Record>) throws -> [UInt8] {
        layout.indexPrefixes[try self.index(named: index).name]!
    }

    /// Follows index entries in `[lower, upper)` to their records.
    private func records(
        entriesFrom lower: [UInt8], to upper: [UInt8], in tx: some ReadableTransaction, reverse: Bool, limit: Int?
    ) throws -> [Record] {
        var ids: [[UInt8]] = []
        if limit.map({ $0 > 0 }) ?? true {
            try tx.forEachUnsafe(from: lower, to: upper, reverse: reverse) { _, value in
                ids.append(Array(value))
                return limit.map { ids.count < $0 } ?? true
            }
        }
        return try ids.map { idBytes in
            guard let record = try get(idBytes: idBytes, in: tx) else {
                throw RecordError(
                    .invalidKey,
                    "an index entry points at record \(Self.describe(idBytes)), which does not exist; the index was changed by something other than this collection",
                    collection: name)
            }
            return record
        }
    }
}
