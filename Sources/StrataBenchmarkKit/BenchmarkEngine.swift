// What an engine must offer to be measured. Strata's adapter is `StrataEngine`; the peers'
// adapters live in the strata-bench executable, next to the C libraries they load.
//
// The split follows how the engines are used from several threads:
//   - `BenchmarkEngine` names an engine and opens stores; it holds no state of a run.
//   - `BenchmarkStore` is one open store. `write` may be called from several threads at
//     once (syncconc8, readwhilewriting); the adapter serialises where its engine needs it.
//   - `BenchmarkReader` is one thread's read handle (an LMDB read transaction is bound to its
//     thread, a SQLite connection should be used by one thread at a time). It is made,
//     used and closed on one thread.

/// How durable each write of an opened store is, which is also how each engine is
/// configured (SQLite `synchronous`, LMDB `MDB_NOSYNC`, LevelDB/RocksDB `sync` writes).
public enum BenchmarkDurability: String, Sendable, CaseIterable {
    /// Fills: a commit is handed to the OS; one `sync()` at the end makes it all durable.
    case buffered
    /// fillsync and syncconc8: every commit is durable before its write returns.
    case synced
}

/// Whether the overwrite workload's final compaction means anything for an engine.
public enum CompactionSupport: Sendable, Equatable {
    /// `compact()` does the engine's full compaction (or its nearest equivalent).
    case supported(String)
    /// The engine keeps its data in place (a B-tree): there is nothing to compact.
    case notApplicable(String)
    /// The engine will need compaction but does not have it yet.
    case notImplemented(String)

    public var isSupported: Bool {
        if case .supported = self { return true }
        return false
    }

    /// What the output says about it.
    public var note: String {
        switch self {
        case .supported(let text), .notApplicable(let text), .notImplemented(let text): return text
        }
    }
}

public protocol BenchmarkEngine: Sendable {
    /// The lower-case name used in `--engines` and in the JSON lines ("strata", "sqlite").
    var name: String { get }
    /// The name in the table ("Strata", "SQLite").
    var displayName: String { get }
    /// How the engine is configured for `durability`, printed beside the figures.
    func configuration(for durability: BenchmarkDurability) -> String
    var compaction: CompactionSupport { get }
    /// Opens (creating when missing) the store kept in `directory`, which the runner has
    /// created and which belongs to this store alone.
    func open(directory: String, durability: BenchmarkDurability) throws -> any BenchmarkStore
}

public protocol BenchmarkStore: AnyObject, Sendable {
    /// Commits `pairs` as one transaction, as durable as the store was opened for. May be
    /// called from several threads at once.
    func write(_ pairs: [KeyValue]) throws
    /// Makes every earlier write durable.
    func sync() throws
    /// Full compaction. Called only when the engine's `compaction` is `.supported`.
    func compact() throws
    /// A read handle for the calling thread, to be used and closed on that thread only.
    func makeReader() throws -> any BenchmarkReader
    /// Closes the store. Every reader has been closed before.
    func close() throws
    /// The store's write stalls since it opened (waits of its writes for a flush or a
    /// compaction), or nil when the engine does not report them. Read before and after each
    /// workload, so a run shows where a fill waited on background work.
    var writeStalls: WriteStalls? { get }
}

extension BenchmarkStore {
    public func compact() throws {}

    /// Engines that do not report their stalls.
    public var writeStalls: WriteStalls? { nil }
}

/// The outcome of a full scan: how many entries, and how many had a value of another length
/// than asked (the check reports both).
public struct ScanTally: Sendable, Equatable {
    public var entries: Int
    public var wrongValueLengths: Int

    public init(entries: Int = 0, wrongValueLengths: Int = 0) {
        self.entries = entries
        self.wrongValueLengths = wrongValueLengths
    }
}

public protocol BenchmarkReader: AnyObject {
    /// The length of `key`'s value, or nil when the key has none.
    func valueLength(_ key: [UInt8]) throws -> Int?
    /// Scans every entry in key order, counting entries and values whose length is not
    /// `expectedValueLength`.
    func scanAll(expectedValueLength: Int) throws -> ScanTally
    func close()
}
