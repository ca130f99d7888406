import Strata

/// A collection of `Codable` records, each stored under its identifier, with optional
/// secondary indexes.
///
/// A collection is a description, not a connection: declare it once, as a constant, and use
/// it in any transaction of any store.
///
/// ```swift
/// struct Note: Codable, Sendable, Identifiable {
///     var id: UUID
///     var folder: String
///     var title: String
///     var edited: Date
/// }
///
/// let byFolder = RecordIndex<Note>("folder") { [$0.folder, $0.edited.descending] }
/// let notes = RecordCollection<Note>("notes", indexes: [byFolder])
///
/// try store.write { tx in
///     try notes.insert(Note(id: UUID(), folder: "inbox", title: "Hello", edited: .now), in: tx)
/// }
/// let inbox = try store.read { tx in try notes.find(byFolder, equalTo: ["inbox"], in: tx) }
/// print(inbox.map(\.title))   // newest first
/// ```
///
/// Every operation comes in two forms: one that takes a transaction (`in: tx`), for use
/// inside `store.read`, `store.write` or a snapshot, and one that returns a `StoreIO`
/// operation, to compose with others and run in one transaction, or to observe.
///
/// Records are stored in the record format (docs/format/records.md): field names and values,
/// so a record written by an older version of the type still decodes. A field the stored
/// record lacks decodes as `nil` when it is optional; for other fields, give the collection
/// a `defaults` record whose values fill them in.
///
/// The collection owns the store keys that begin with its name as a ``KeyTuple`` string
/// element (records under `(name, 0, id)`, index entries under `(name, 1, index, key...)`);
/// keep raw keys out of that range.
public struct RecordCollection<Record: Codable & Sendable & Identifiable>: Sendable
where Record.ID: KeyElementConvertible {
    /// The collection's name; part of every key it stores.
    public let name: String
    /// The secondary indexes kept for every record.
    public let indexes: [RecordIndex<Record>]
    let layout: CollectionLayout
    let defaults: Result<[UInt8], RecordError>?

    /// A collection named `name`.
    ///
    /// - Parameters:
    ///   - name: Unique within the store; names starting with a zero character are
    ///     reserved for Strata's own records.
    ///   - indexes: Indexes to keep, with distinct names.
    ///   - defaults: A record whose fields stand in for fields a stored record lacks (one
    ///     written before the field was added). Its identifier is not used.
    /// - Precondition: `name` is not empty and does not start with `"\0"`; index names are
    ///   distinct.
    public init(_ name: String, indexes: [RecordIndex<Record>] = [], defaults: Record? = nil) {
        precondition(!name.isEmpty, "a collection needs a name")
        precondition(!name.hasPrefix("\u{0}"), "collection names starting with a zero character are reserved")
        precondition(Set(indexes.map(\.name)).count == indexes.count, "index names in collection \"\(name)\" repeat")
        self.name = name
        self.indexes = indexes
        self.layout = CollectionLayout(name: name, indexes: indexes.map(\.name))
        self.defaults = defaults.map { record in
            Result {
                try RecordEncoder.encode(record)
            }
            .mapError { RecordError(.encoding, "the defaults record did not encode: \($0)", collection: name) }
        }
    }
}

/// Where a collection's records and index entries live in the store's key space.
struct CollectionLayout: Sendable {
    /// `(name, 0)`: the prefix of every record key.
    let records: [UInt8]
    /// `(name, 1, index)` for each index, by name.
    let indexPrefixes: [String: [UInt8]]
    /// `(name, 1)`: the prefix of every index entry.
    let allIndexes: [UInt8]

    init(name: String, indexes: [String]) {
        records = KeyTuple([.string(name), .int(0)]).bytes
        allIndexes = KeyTuple([.string(name), .int(1)]).bytes
        var prefixes: [String: [UInt8]] = [:]
        for index in indexes {
            prefixes[index] = KeyTuple([.string(name), .int(1), .string(index)]).bytes
        }
        indexPrefixes = prefixes
    }

    /// The encoded identifier: the part of a record key after ``records``, and the value of
    /// every index entry that points at the record.
    static func idBytes(_ id: KeyElement) -> [UInt8] {
        KeyTuple([id]).bytes
    }

    func recordKey(idBytes: [UInt8]) -> [UInt8] {
        records + idBytes
    }

    /// An index entry's key: a unique index's key is the index key alone; an ordinary index
    /// appends the identifier, so records that share a key each have an entry.
    func entryKey(index: String, key: [KeyElement], idBytes: [UInt8], unique: Bool) -> [UInt8] {
        var bytes = indexPrefixes[index]! + KeyTuple(key).bytes
        if !unique { bytes += idBytes }
        return bytes
    }
}

extension RecordCollection {
    func encode(_ record: Record) throws -> [UInt8] {
        do {
            return try RecordEncoder.encode(record)
        } catch {
            throw RecordError(.encoding, "a record did not encode: \(error)", collection: name)
        }
    }

    func decode(_ bytes: [UInt8], key: [UInt8]) throws -> Record {
        let defaultBytes = try defaults?.get()
        do {
            return try RecordDecoder.decode(Record.self, from: bytes, defaults: defaultBytes)
        } catch {
            throw RecordError(
                .decoding, "the record at key \(Self.describe(key)) did not decode as \(Record.self): \(error)",
                collection: name)
        }
    }

    static func describe(_ key: [UInt8]) -> String {
        if let tuple = try? KeyTuple(decoding: key) { return tuple.description }
        return key.map { String($0, radix: 16) }.joined(separator: " ")
    }

    func index(named index: RecordIndex<Record>) throws -> RecordIndex<Record> {
        guard let own = indexes.first(where: { $0.name == index.name }) else {
            throw StoreError(
                .invalidArgument, "collection \"\(name)\" has no index \"\(index.name)\"; list it in the collection's indexes")
        }
        return own
    }
}
