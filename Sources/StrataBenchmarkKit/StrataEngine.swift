// Strata measured through its public API only, as an app would use it: one `Store`, a write
// transaction per batch, a point read of the store per get.
import Strata

public struct StrataEngine: BenchmarkEngine {
    /// Options for every store the engine opens; `durability` is set per store from the
    /// workload.
    public var options: StoreOptions

    public init(options: StoreOptions = StoreOptions()) {
        self.options = options
    }

    public var name: String { "strata" }
    public var displayName: String { "Strata" }

    public func configuration(for durability: BenchmarkDurability) -> String {
        switch durability {
        case .buffered: "default options, `.buffered` commits, one `sync()` at the end"
        case .synced: "default options, `.synced` commits (group commit)"
        }
    }

    /// The overwrite workload ends with a full compaction, timed with the puts.
    public var compaction: CompactionSupport {
        .supported("store.compact(): flushes the memtables and merges every segment file into the deepest level")
    }

    public func open(directory: String, durability: BenchmarkDurability) throws -> any BenchmarkStore {
        var options = self.options
        options.durability = durability == .synced ? .synced : .buffered
        return StrataBenchmarkStore(store: try Store(path: directory, options: options), durability: options.durability)
    }
}

final class StrataBenchmarkStore: BenchmarkStore {
    let store: Store
    let durability: Durability

    init(store: Store, durability: Durability) {
        self.store = store
        self.durability = durability
    }

    func write(_ pairs: [KeyValue]) throws {
        try store.write(durability: durability) { tx in
            // Each pair borrowed in place, not copied (`for pair in pairs`): a copy retains and
            // releases its key and value, work the peers' C calls do not do.
            try pairs.withUnsafeBufferPointer { pairs in
                for i in pairs.indices {
                    try tx.put(pairs[i].key, pairs[i].value)
                }
            }
        }
    }

    func sync() throws {
        try store.sync()
    }

    /// Full compaction: the runner calls it at the end of overwrite when `compaction` is
    /// `.supported`.
    func compact() throws {
        try store.compact()
    }

    func makeReader() throws -> any BenchmarkReader {
        StrataBenchmarkReader(store: store)
    }

    func close() throws {
        try store.close()
    }

    var writeStalls: WriteStalls? {
        guard let stats = try? store.stats() else { return nil }
        return WriteStalls(count: stats.writeStalls, seconds: stats.writeStallSeconds)
    }
}

final class StrataBenchmarkReader: BenchmarkReader {
    let store: Store

    init(store: Store) {
        self.store = store
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        // Borrowed bytes, as LMDB's mdb_get hands them out: nothing is copied. A point read
        // of the store's own, as LevelDB's and RocksDB's Get are, with no transaction around it.
        try store.withUnsafeValue(key) { $0?.count }
    }

    func scanAll(expectedValueLength: Int) throws -> ScanTally {
        try store.read { tx in
            // Borrowed bytes, as the peers' cursors hand them out: nothing is copied.
            var tally = ScanTally()
            try tx.forEachUnsafe(from: []) { _, value in
                tally.entries += 1
                if value.count != expectedValueLength { tally.wrongValueLengths += 1 }
                return true
            }
            return tally
        }
    }

    func close() {}
}
