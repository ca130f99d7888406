import Strata

/// A handle on one record, taken in a transaction and resolved in a later one, on any thread
/// or task: the records layer's answer to handing a model object to a background write. It
/// holds the collection's name, the record's primary key and the version it was read at; it
/// pins nothing, so holding many costs no disk space and does not hold back compaction.
///
/// ```swift
/// let ref = try store.read { tx in try notes.reference(to: id, in: tx) }
/// store.asyncWrite({ tx in
///     switch try notes.resolve(ref, in: tx) {
///     case .unchanged(var note), .changed(var note):
///         note.folder = "archive"
///         try notes.update(note, in: tx)
///     case .deleted:
///         break                                   // deleted meanwhile: nothing to archive
///     }
/// }) { result in print(result) }
/// ```
///
/// The answer holds whatever flushes and compactions did between the two transactions: it is
/// built on Strata's `KeyReference` and `changedSince(_:)`
/// on the record's own key (index entries are derived from the record, so they change with
/// it). A reference is refused with `StoreError` `.invalidArgument` by another store and by
/// another collection.
public struct RecordReference<Record: Codable & Sendable & Identifiable>: Sendable, Hashable, Codable
where Record.ID: KeyElementConvertible {
    /// The name of the collection the record belongs to.
    public let collection: String
    /// The record's primary key, as the collection stores it.
    public let primaryKey: KeyElement
    /// The reference on the record's key in the store.
    public let key: KeyReference
    /// The commit sequence the record was read at: commits after it are changes.
    public var version: UInt64 { key.version }

    init(collection: String, primaryKey: KeyElement, key: KeyReference) {
        self.collection = collection
        self.primaryKey = primaryKey
        self.key = key
    }

    private enum CodingKeys: String, CodingKey { case collection, key }

    /// Encodes the collection's name and the key reference; the primary key is read back
    /// from the record key, which holds it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(collection, forKey: .collection)
        try container.encode(key, forKey: .key)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        collection = try container.decode(String.self, forKey: .collection)
        key = try container.decode(KeyReference.self, forKey: .key)
        // A record key is (collection, 0, primary key).
        let elements = try? KeyTuple(decoding: key.key).elements
        guard let elements, elements.count == 3, elements[0] == .string(collection), elements[1] == .int(0) else {
            throw DecodingError.dataCorruptedError(
                forKey: .key, in: container, debugDescription: "the key is not a record key of collection \"\(collection)\"")
        }
        primaryKey = elements[2]
    }
}

/// What became of a referenced record by the time a later transaction resolved it.
public enum RecordResolution<Record: Sendable>: Sendable {
    /// No commit since the reference changed the record: this is the record as it was read
    /// (or as the resolving transaction itself has changed it; its own writes are not
    /// commits).
    case unchanged(Record)
    /// A commit since the reference replaced the record (or deleted it and inserted another
    /// with the same identifier): this is the record now.
    case changed(Record)
    /// The record no longer exists.
    case deleted

    /// The record as the resolving transaction sees it, nil when deleted.
    public var record: Record? {
        switch self {
        case .unchanged(let record), .changed(let record): record
        case .deleted: nil
        }
    }

    /// True unless the record is exactly as the reference saw it.
    public var changedSinceReference: Bool {
        if case .unchanged = self { return false }
        return true
    }
}

extension RecordResolution: Equatable where Record: Equatable {}

extension RecordCollection {
    /// A reference to the record with identifier `id` at this transaction's version. In a
    /// write transaction it refers to the committed record, before this transaction's own
    /// writes.
    ///
    /// - Throws: ``RecordError/Code/notFound`` when the transaction sees no such record.
    public func reference(to id: Record.ID, in tx: some ReadableTransaction) throws -> RecordReference<Record> {
        try reference(primaryKey: id.keyElement, in: tx)
    }

    func reference(primaryKey: KeyElement, in tx: some ReadableTransaction) throws -> RecordReference<Record> {
        let recordKey = layout.recordKey(idBytes: CollectionLayout.idBytes(primaryKey))
        guard try tx.contains(recordKey) else {
            throw RecordError(.notFound, "no record \(primaryKey) to refer to", collection: name)
        }
        return RecordReference(collection: name, primaryKey: primaryKey, key: try tx.reference(recordKey))
    }

    /// A reference to `record`, by its identifier; see ``reference(to:in:)-(Record.ID,_)``.
    public func reference(to record: Record, in tx: some ReadableTransaction) throws -> RecordReference<Record> {
        try reference(to: record.id, in: tx)
    }

    /// The referenced record as this transaction sees it (its own writes included), and
    /// whether a commit since the reference changed or deleted it.
    public func resolve(_ reference: RecordReference<Record>, in tx: some ReadableTransaction) throws -> RecordResolution<Record> {
        let key = try recordKey(of: reference)
        guard let bytes = try tx.get(key) else { return .deleted }
        let record = try decode(bytes, key: key)
        return try tx.changedSince(reference.key) ? .changed(record) : .unchanged(record)
    }

    /// The referenced record, after checking that no commit since the reference changed it.
    ///
    /// - Throws: `StoreError` `.conflict` when a commit changed or deleted the record since
    ///   the reference was taken: read it again and redo the change.
    public func require(unchanged reference: RecordReference<Record>, in tx: some ReadableTransaction) throws -> Record {
        if case .unchanged(let record) = try resolve(reference, in: tx) { return record }
        throw StoreError(
            .conflict,
            "record \(reference.primaryKey) of collection \"\(name)\" changed after version \(reference.version), when it was read; read it again and redo the change"
        )
    }

    /// The record key a reference names, after checking it belongs to this collection.
    private func recordKey(of reference: RecordReference<Record>) throws -> [UInt8] {
        guard reference.collection == name else {
            throw StoreError(
                .invalidArgument,
                "the reference is to a record of collection \"\(reference.collection)\", not of \"\(name)\"; resolve it with the collection that took it"
            )
        }
        let key = layout.recordKey(idBytes: CollectionLayout.idBytes(reference.primaryKey))
        guard key == reference.key.key else {
            throw StoreError(.invalidArgument, "the reference's key does not match its primary key; it was not made by reference(to:in:)")
        }
        return key
    }
}

extension RecordCollection {
    /// A reference to the record with identifier `id`; see ``reference(to:in:)-(Record.ID,_)``.
    public func reference(to id: Record.ID) -> StoreIO<ReadOnly, RecordReference<Record>> {
        let primaryKey = id.keyElement
        return .read { tx in try self.reference(primaryKey: primaryKey, in: tx) }
    }

    /// The referenced record and what became of it; see ``resolve(_:in:)``.
    public func resolve(_ reference: RecordReference<Record>) -> StoreIO<ReadOnly, RecordResolution<Record>> {
        .read { tx in try self.resolve(reference, in: tx) }
    }
}
