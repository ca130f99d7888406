// LMDB as its users run it: one environment, the unnamed database, MDB_NOSYNC for bulk loads
// (one mdb_env_sync at the end) and the default, synced commits for fillsync and syncconc8.
// LMDB serialises write transactions itself; a reader keeps one read-only transaction and
// resets and renews it around each get, as LMDB's documentation recommends.
import CLMDBPeer
import Foundation
import PeerSupport
import StrataBenchmarkKit

struct LMDBAPI: @unchecked Sendable {
    // @unchecked Sendable because: C function pointers, set once at load and never changed.
    let version: mdb_version_fn
    let strerror: mdb_strerror_fn
    let envCreate: mdb_env_create_fn
    let envSetMapsize: mdb_env_set_mapsize_fn
    let envOpen: mdb_env_open_fn
    let envSync: mdb_env_sync_fn
    let envClose: mdb_env_close_fn
    let txnBegin: mdb_txn_begin_fn
    let txnCommit: mdb_txn_commit_fn
    let txnAbort: mdb_txn_abort_fn
    let txnReset: mdb_txn_reset_fn
    let txnRenew: mdb_txn_renew_fn
    let dbiOpen: mdb_dbi_open_fn
    let get: mdb_get_fn
    let put: mdb_put_fn
    let cursorOpen: mdb_cursor_open_fn
    let cursorClose: mdb_cursor_close_fn
    let cursorGet: mdb_cursor_get_fn

    init(_ library: PeerLibrary) throws {
        version = try library.function("mdb_version")
        strerror = try library.function("mdb_strerror")
        envCreate = try library.function("mdb_env_create")
        envSetMapsize = try library.function("mdb_env_set_mapsize")
        envOpen = try library.function("mdb_env_open")
        envSync = try library.function("mdb_env_sync")
        envClose = try library.function("mdb_env_close")
        txnBegin = try library.function("mdb_txn_begin")
        txnCommit = try library.function("mdb_txn_commit")
        txnAbort = try library.function("mdb_txn_abort")
        txnReset = try library.function("mdb_txn_reset")
        txnRenew = try library.function("mdb_txn_renew")
        dbiOpen = try library.function("mdb_dbi_open")
        get = try library.function("mdb_get")
        put = try library.function("mdb_put")
        cursorOpen = try library.function("mdb_cursor_open")
        cursorClose = try library.function("mdb_cursor_close")
        cursorGet = try library.function("mdb_cursor_get")
    }

    func check(_ code: Int32, _ what: String) throws {
        guard code == MDB_SUCCESS else {
            throw PeerError(engine: "lmdb", message: "\(what) failed: \(strerror(code).map { String(cString: $0) } ?? "error \(code)")")
        }
    }
}

struct LMDBEngine: BenchmarkEngine {
    /// The most the map may grow to. Address space only: the file grows as pages are written.
    static let mapSizeBytes = 64 << 30

    let api: LMDBAPI
    let version: String

    init() throws {
        let library = try PeerLibrary(engine: "lmdb", sonames: ["liblmdb.so.0", "liblmdb.so", "liblmdb.dylib"],
                                      debianPackage: "liblmdb-dev")
        api = try LMDBAPI(library)
        // "LMDB 0.9.24: (July 24, 2019)" → "LMDB 0.9.24"
        let full = api.version(nil, nil, nil).map { String(cString: $0) } ?? "LMDB"
        version = full.split(separator: ":").first.map(String.init) ?? full
    }

    var name: String { "lmdb" }
    var displayName: String { "LMDB" }

    func configuration(for durability: BenchmarkDurability) -> String {
        switch durability {
        case .buffered: "\(version): `MDB_NOSYNC`, one write transaction per batch, `mdb_env_sync` at the end"
        case .synced: "\(version): default flags (every commit synced)"
        }
    }

    var compaction: CompactionSupport {
        .notApplicable("no compaction: LMDB's B+tree is updated in place")
    }

    func open(directory: String, durability: BenchmarkDurability) throws -> any BenchmarkStore {
        try LMDBStore(api: api, directory: directory, flags: durability == .buffered ? UInt32(MDB_NOSYNC) : 0)
    }
}

final class LMDBStore: BenchmarkStore, @unchecked Sendable {
    // @unchecked Sendable because: LMDB's environment is thread-safe; each write transaction
    // is begun, used and committed on one thread, and LMDB serialises them.
    let api: LMDBAPI
    let env: OpaquePointer
    let dbi: MDB_dbi

    init(api: LMDBAPI, directory: String, flags: UInt32) throws {
        self.api = api
        var handle: OpaquePointer?
        try api.check(api.envCreate(&handle), "mdb_env_create")
        guard let handle else { throw PeerError(engine: "lmdb", message: "mdb_env_create returned no environment") }
        env = handle
        do {
            try api.check(api.envSetMapsize(env, LMDBEngine.mapSizeBytes), "mdb_env_set_mapsize")
            try api.check(api.envOpen(env, directory, flags, 0o644), "mdb_env_open")
            var txn: OpaquePointer?
            try api.check(api.txnBegin(env, nil, 0, &txn), "mdb_txn_begin")
            var dbi: MDB_dbi = 0
            let code = api.dbiOpen(txn, nil, 0, &dbi)
            guard code == MDB_SUCCESS else {
                api.txnAbort(txn)
                try api.check(code, "mdb_dbi_open")
                throw PeerError(engine: "lmdb", message: "mdb_dbi_open")
            }
            try api.check(api.txnCommit(txn), "mdb_txn_commit")
            self.dbi = dbi
        } catch {
            api.envClose(env)
            throw error
        }
    }

    func write(_ pairs: [KeyValue]) throws {
        var txn: OpaquePointer?
        try api.check(api.txnBegin(env, nil, 0, &txn), "mdb_txn_begin")
        for pair in pairs {
            let code = pair.key.withUnsafeBytes { key in
                pair.value.withUnsafeBytes { value in
                    var keyVal = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
                    var dataVal = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
                    return api.put(txn, dbi, &keyVal, &dataVal, 0)
                }
            }
            if code != MDB_SUCCESS {
                api.txnAbort(txn)
                try api.check(code, "mdb_put")
            }
        }
        try api.check(api.txnCommit(txn), "mdb_txn_commit")
    }

    func sync() throws {
        try api.check(api.envSync(env, 1), "mdb_env_sync")
    }

    func makeReader() throws -> any BenchmarkReader {
        try LMDBReader(store: self)
    }

    func close() throws {
        api.envClose(env)
    }
}

final class LMDBReader: BenchmarkReader {
    private let store: LMDBStore
    private let txn: OpaquePointer

    init(store: LMDBStore) throws {
        self.store = store
        var txn: OpaquePointer?
        try store.api.check(store.api.txnBegin(store.env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin (read-only)")
        guard let txn else { throw PeerError(engine: "lmdb", message: "mdb_txn_begin returned no transaction") }
        store.api.txnReset(txn)
        self.txn = txn
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        let api = store.api
        try api.check(api.txnRenew(txn), "mdb_txn_renew")
        defer { api.txnReset(txn) }
        var data = MDB_val(mv_size: 0, mv_data: nil)
        let code = key.withUnsafeBytes { key in
            var keyVal = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
            return api.get(txn, store.dbi, &keyVal, &data)
        }
        if code == MDB_NOTFOUND { return nil }
        try api.check(code, "mdb_get")
        return data.mv_size
    }

    func scanAll(expectedValueLength: Int) throws -> ScanTally {
        let api = store.api
        try api.check(api.txnRenew(txn), "mdb_txn_renew")
        defer { api.txnReset(txn) }
        var cursor: OpaquePointer?
        try api.check(api.cursorOpen(txn, store.dbi, &cursor), "mdb_cursor_open")
        defer { api.cursorClose(cursor) }
        var tally = ScanTally()
        var key = MDB_val(mv_size: 0, mv_data: nil)
        var data = MDB_val(mv_size: 0, mv_data: nil)
        var code = api.cursorGet(cursor, &key, &data, MDB_FIRST)
        while code == MDB_SUCCESS {
            tally.entries += 1
            if data.mv_size != expectedValueLength { tally.wrongValueLengths += 1 }
            code = api.cursorGet(cursor, &key, &data, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { try api.check(code, "mdb_cursor_get") }
        return tally
    }

    func close() {
        store.api.txnAbort(txn)
    }
}
