// LevelDB and RocksDB, with their default options and `sync=true` writes for fillsync and
// syncconc8. Their C APIs have the same shape (RocksDB's began as a copy of LevelDB's), and
// every handle is an OpaquePointer in Swift, so one function table and one adapter serve
// both; LevelDBEngine.swift and RocksDBEngine.swift fill the table from their own shim
// header's types, so the compiler checks each against its library's declarations.
import Foundation
import PeerSupport
import StrataBenchmarkKit

typealias CErrorPointer = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?

struct LSMAPI: @unchecked Sendable {
    // @unchecked Sendable because: C function pointers, set once at load and never changed.
    var engine: String
    var open: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, CErrorPointer) -> OpaquePointer?
    var close: @convention(c) (OpaquePointer?) -> Void
    var write: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, CErrorPointer) -> Void
    var get: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafePointer<CChar>?, Int, UnsafeMutablePointer<Int>?, CErrorPointer) -> UnsafeMutablePointer<CChar>?
    var createIterator: @convention(c) (OpaquePointer?, OpaquePointer?) -> OpaquePointer?
    var compactRange: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?, Int) -> Void
    var iterDestroy: @convention(c) (OpaquePointer?) -> Void
    var iterValid: @convention(c) (OpaquePointer?) -> UInt8
    var iterSeekToFirst: @convention(c) (OpaquePointer?) -> Void
    var iterNext: @convention(c) (OpaquePointer?) -> Void
    var iterValue: @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>?
    var iterGetError: @convention(c) (OpaquePointer?, CErrorPointer) -> Void
    var writebatchCreate: @convention(c) () -> OpaquePointer?
    var writebatchDestroy: @convention(c) (OpaquePointer?) -> Void
    var writebatchPut: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?, Int) -> Void
    var optionsCreate: @convention(c) () -> OpaquePointer?
    var optionsDestroy: @convention(c) (OpaquePointer?) -> Void
    var optionsSetCreateIfMissing: @convention(c) (OpaquePointer?, UInt8) -> Void
    var readoptionsCreate: @convention(c) () -> OpaquePointer?
    var readoptionsDestroy: @convention(c) (OpaquePointer?) -> Void
    var writeoptionsCreate: @convention(c) () -> OpaquePointer?
    var writeoptionsDestroy: @convention(c) (OpaquePointer?) -> Void
    var writeoptionsSetSync: @convention(c) (OpaquePointer?, UInt8) -> Void
    var free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    /// Makes every earlier write durable: RocksDB's `rocksdb_flush_wal(db, sync=1)`; nil for
    /// LevelDB, which has no such call and writes an empty batch with `sync=true` instead.
    var flushWAL: (@convention(c) (OpaquePointer?, UInt8, CErrorPointer) -> Void)?

    /// Calls `body` with an error out-pointer; throws the message the library left there.
    func checked<T>(_ what: String, _ body: (CErrorPointer) -> T) throws -> T {
        var error: UnsafeMutablePointer<CChar>?
        let result = body(&error)
        if let error {
            let message = String(cString: error)
            free(error)
            throw PeerError(engine: engine, message: "\(what) failed: \(message)")
        }
        return result
    }
}

struct LSMEngine: BenchmarkEngine {
    let api: LSMAPI
    let name: String
    let displayName: String
    let version: String

    func configuration(for durability: BenchmarkDurability) -> String {
        switch durability {
        case .buffered:
            "\(displayName) \(version): default options, one write batch per transaction, "
                + (api.flushWAL == nil ? "an empty `sync=true` write at the end" : "`rocksdb_flush_wal(sync)` at the end")
        case .synced:
            "\(displayName) \(version): default options, `sync=true` writes"
        }
    }

    var compaction: CompactionSupport {
        .supported("full compaction (`compact_range` over every key)")
    }

    func open(directory: String, durability: BenchmarkDurability) throws -> any BenchmarkStore {
        try LSMStore(api: api, path: directory, sync: durability == .synced)
    }
}

final class LSMStore: BenchmarkStore, @unchecked Sendable {
    // @unchecked Sendable because: LevelDB's and RocksDB's databases are thread-safe, and the
    // option objects are only read after init.
    let api: LSMAPI
    let db: OpaquePointer
    private let options: OpaquePointer?
    private let writeOptions: OpaquePointer?
    private let syncWriteOptions: OpaquePointer?

    init(api: LSMAPI, path: String, sync: Bool) throws {
        self.api = api
        let options = api.optionsCreate()
        api.optionsSetCreateIfMissing(options, 1)
        let writeOptions = api.writeoptionsCreate()
        api.writeoptionsSetSync(writeOptions, sync ? 1 : 0)
        let syncWriteOptions = api.writeoptionsCreate()
        api.writeoptionsSetSync(syncWriteOptions, 1)
        do {
            let opened = try api.checked("open \(path)") { api.open(options, path, $0) }
            guard let opened else { throw PeerError(engine: api.engine, message: "open \(path) returned no database") }
            db = opened
        } catch {
            api.writeoptionsDestroy(writeOptions)
            api.writeoptionsDestroy(syncWriteOptions)
            api.optionsDestroy(options)
            throw error
        }
        self.options = options
        self.writeOptions = writeOptions
        self.syncWriteOptions = syncWriteOptions
    }

    func write(_ pairs: [KeyValue]) throws {
        try write(pairs, options: writeOptions)
    }

    private func write(_ pairs: [KeyValue], options: OpaquePointer?) throws {
        let batch = api.writebatchCreate()
        defer { api.writebatchDestroy(batch) }
        for pair in pairs {
            pair.key.withUnsafeBytes { key in
                pair.value.withUnsafeBytes { value in
                    api.writebatchPut(batch, key.baseAddress?.assumingMemoryBound(to: CChar.self), key.count,
                                      value.baseAddress?.assumingMemoryBound(to: CChar.self), value.count)
                }
            }
        }
        try api.checked("write") { api.write(db, options, batch, $0) }
    }

    func sync() throws {
        if let flushWAL = api.flushWAL {
            try api.checked("flush_wal") { flushWAL(db, 1, $0) }
        } else {
            try write([], options: syncWriteOptions)
        }
    }

    func compact() throws {
        api.compactRange(db, nil, 0, nil, 0)
    }

    func makeReader() throws -> any BenchmarkReader {
        LSMReader(store: self)
    }

    func close() throws {
        api.close(db)
        api.writeoptionsDestroy(writeOptions)
        api.writeoptionsDestroy(syncWriteOptions)
        api.optionsDestroy(options)
    }
}

final class LSMReader: BenchmarkReader {
    private let store: LSMStore
    private let readOptions: OpaquePointer?

    init(store: LSMStore) {
        self.store = store
        readOptions = store.api.readoptionsCreate()
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        let api = store.api
        var length = 0
        let value = try key.withUnsafeBytes { key in
            try api.checked("get") {
                api.get(store.db, readOptions, key.baseAddress?.assumingMemoryBound(to: CChar.self), key.count, &length, $0)
            }
        }
        guard let value else { return nil }
        api.free(value)
        return length
    }

    func scanAll(expectedValueLength: Int) throws -> ScanTally {
        let api = store.api
        let iterator = api.createIterator(store.db, readOptions)
        defer { api.iterDestroy(iterator) }
        var tally = ScanTally()
        api.iterSeekToFirst(iterator)
        while api.iterValid(iterator) != 0 {
            var length = 0
            _ = api.iterValue(iterator, &length)
            tally.entries += 1
            if length != expectedValueLength { tally.wrongValueLengths += 1 }
            api.iterNext(iterator)
        }
        try api.checked("iterate") { api.iterGetError(iterator, $0) }
        return tally
    }

    func close() {
        store.api.readoptionsDestroy(readOptions)
    }
}
