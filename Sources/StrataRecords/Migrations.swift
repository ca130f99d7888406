import Strata

/// Named changes to a store's data, each run once, in the order registered, and recorded in
/// the store in the same transaction as its writes.
///
/// ```swift
/// var migrations = Migrations()
/// migrations.register("index notes by folder") { tx in try notes.rebuildIndexes(in: tx) }
/// migrations.register("drop drafts") { tx in
///     for note in try notes.find(byFolder, equalTo: ["drafts"], in: tx) { try notes.delete(note.id, in: tx) }
/// }
/// try migrations.run(on: store)   // at launch, before the app reads
/// ```
///
/// Each migration is one write transaction: it either runs completely and is recorded, or
/// leaves nothing, so an interrupted launch runs it again next time. Register new migrations
/// after the old ones and never rename, reorder or remove one that has shipped: ``run(on:)``
/// checks that the store's recorded migrations are the first ones registered and throws
/// ``RecordError/Code/migration`` otherwise (for example when an older app version opens a
/// store a newer one migrated).
///
/// The records are in the reserved key range `("\0strata", "migration", n)`.
public struct Migrations: Sendable {
    private var steps: [(name: String, operation: StoreIO<ReadWrite, Void>)] = []

    public init() {}

    /// The registered migrations' names, in order.
    public var names: [String] { steps.map(\.name) }

    /// Adds a migration that runs `body` in its write transaction.
    ///
    /// - Precondition: no migration with the same name is registered.
    public mutating func register(_ name: String, _ body: @escaping @Sendable (WriteTransaction) throws -> Void) {
        register(name, .write(body))
    }

    /// Adds a migration made of a `StoreIO` operation.
    ///
    /// - Precondition: no migration with the same name is registered.
    public mutating func register(_ name: String, _ operation: StoreIO<ReadWrite, Void>) {
        precondition(!names.contains(name), "migration \"\(name)\" is registered twice")
        steps.append((name, operation))
    }

    /// The names of the migrations recorded in the store, in the order they ran.
    public static func applied(in tx: some ReadableTransaction) throws -> [String] {
        try tx.scan(prefix: migrationPrefix).map { entry in
            String(decoding: entry.value, as: UTF8.self)
        }
    }

    /// Runs, in order, each registered migration the store has not recorded, each in its own
    /// write transaction (on the writer queue, so another process or `Store` running the same
    /// migrations cannot run one twice).
    ///
    /// - Returns: The names of the migrations this call ran.
    @discardableResult
    public func run(on store: Store) throws -> [String] {
        var ran: [String] = []
        for position in try pending(in: store.read { tx in try Self.applied(in: tx) }) {
            if try store.write({ tx in try self.apply(position, in: tx) }) { ran.append(steps[position].name) }
        }
        return ran
    }

    /// Runs the pending migrations; see ``run(on:)``.
    @discardableResult
    public func run(on store: Store) async throws -> [String] {
        var ran: [String] = []
        for position in try pending(in: await store.read { tx in try Self.applied(in: tx) }) {
            let migrations = self
            if try await store.write({ tx in try migrations.apply(position, in: tx) }) { ran.append(steps[position].name) }
        }
        return ran
    }

    private static let migrationPrefix = KeyTuple([.string("\u{0}strata"), .string("migration")]).bytes

    private static func key(_ position: Int) -> [UInt8] {
        migrationPrefix + KeyTuple([.int(Int64(position))]).bytes
    }

    /// The positions of the migrations still to run, after checking the recorded ones.
    private func pending(in applied: [String]) throws -> Range<Int> {
        guard applied.count <= steps.count else {
            throw RecordError(
                .migration,
                "the store has \(applied.count) migrations recorded but the app registers \(steps.count); the newest recorded is \"\(applied.last!)\". It was probably migrated by a newer version of the app"
            )
        }
        for (position, name) in applied.enumerated() where steps[position].name != name {
            throw RecordError(
                .migration,
                "migration \(position + 1) recorded in the store is \"\(name)\" but the app registers \"\(steps[position].name)\" there; migrations must keep their names and order"
            )
        }
        return applied.count..<steps.count
    }

    /// Runs the migration at `position` unless another writer recorded it since the check.
    private func apply(_ position: Int, in tx: WriteTransaction) throws -> Bool {
        let recorded = try Self.applied(in: tx)
        _ = try pending(in: recorded)
        guard recorded.count == position else { return false }
        try tx.run(steps[position].operation)
        try tx.put(Self.key(position), Array(steps[position].name.utf8))
        return true
    }
}
