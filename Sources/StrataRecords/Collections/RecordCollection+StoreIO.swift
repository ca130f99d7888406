import Strata

/// The collection's operations as `StoreIO` values: compose them with each other and with
/// the byte-level operations, run them in one transaction, or observe the reading ones.
///
/// ```swift
/// let move: StoreIO<ReadWrite, Void> = notes.get(id).flatMap { note in
///     guard var note else { return .just(()) }
///     note.folder = "archive"
///     return notes.update(note)
/// }
/// try await store.run(move)
/// for await update in store.observe(notes.find(byFolder, equalTo: ["inbox"])) {
///     if case .value(let inbox, _) = update { print(inbox.map(\.title)) }   // [Note]
/// }
/// ```
extension RecordCollection {
    /// Reads the record with identifier `id`; see ``get(_:in:)``.
    public func get(_ id: Record.ID) -> StoreIO<ReadOnly, Record?> {
        let idBytes = CollectionLayout.idBytes(id.keyElement)
        return .read { tx in try self.get(idBytes: idBytes, in: tx) }
    }

    /// Reads records by identifier range; see ``scan(in:from:to:reverse:limit:)``.
    public func scan(
        from: Record.ID? = nil, to: Record.ID? = nil, reverse: Bool = false, limit: Int? = nil
    ) -> StoreIO<ReadOnly, [Record]> {
        let (lower, upper) = idRange(from: from.map(\.keyElement), to: to.map(\.keyElement))
        return .read { tx in try self.records(keysFrom: lower, to: upper, in: tx, reverse: reverse, limit: limit) }
    }

    /// Counts the records; see ``count(in:)``.
    public func count() -> StoreIO<ReadOnly, Int> {
        .read { tx in try self.count(in: tx) }
    }

    /// Finds records by index key prefix; see ``find(_:equalTo:in:reverse:limit:)``.
    public func find(
        _ index: RecordIndex<Record>, equalTo values: [any KeyElementConvertible], reverse: Bool = false,
        limit: Int? = nil
    ) -> StoreIO<ReadOnly, [Record]> {
        let elements = values.map(\.keyElement)
        return .read { tx in try self.find(index, equalTo: elements, in: tx, reverse: reverse, limit: limit) }
    }

    /// Finds records by index key range; see ``find(_:from:to:in:reverse:limit:)``.
    public func find(
        _ index: RecordIndex<Record>, from: [any KeyElementConvertible], to: [any KeyElementConvertible]?,
        reverse: Bool = false, limit: Int? = nil
    ) -> StoreIO<ReadOnly, [Record]> {
        let lower = from.map(\.keyElement)
        let upper = to?.map(\.keyElement)
        return .read { tx in try self.find(index, from: lower, to: upper, in: tx, reverse: reverse, limit: limit) }
    }

    /// Stores a record, replacing any with its identifier; see ``put(_:in:)``.
    public func put(_ record: Record) -> StoreIO<ReadWrite, Void> {
        .write { tx in try self.write(record, in: tx, expecting: nil) }
    }

    /// Stores a new record; see ``insert(_:in:)``.
    public func insert(_ record: Record) -> StoreIO<ReadWrite, Void> {
        .write { tx in try self.write(record, in: tx, expecting: false) }
    }

    /// Replaces an existing record; see ``update(_:in:)``.
    public func update(_ record: Record) -> StoreIO<ReadWrite, Void> {
        .write { tx in try self.write(record, in: tx, expecting: true) }
    }

    /// Deletes a record and its index entries; see ``delete(_:in:)``.
    public func delete(_ id: Record.ID) -> StoreIO<ReadWrite, Bool> {
        let idBytes = CollectionLayout.idBytes(id.keyElement)
        return .write { tx in try self.delete(idBytes: idBytes, in: tx) }
    }
}
