// SQLite as its users run it for a key-value table: WAL mode, one WITHOUT ROWID table,
// synchronous=NORMAL for bulk loads and FULL where every commit must be durable. One write
// connection shared under a lock (SQLite admits one writer at a time anyway; GRDB's
// DatabasePool works the same way) and one connection per reading thread.
import CSQLitePeer
import Foundation
import StrataBenchmarkKit

struct SQLiteAPI: @unchecked Sendable {
    // @unchecked Sendable because: C function pointers, set once at load and never changed.
    let libversion: sqlite3_libversion_fn
    let open: sqlite3_open_v2_fn
    let close: sqlite3_close_v2_fn
    let exec: sqlite3_exec_fn
    let free: sqlite3_free_fn
    let busyTimeout: sqlite3_busy_timeout_fn
    let errmsg: sqlite3_errmsg_fn
    let prepare: sqlite3_prepare_v2_fn
    let bindBlob: sqlite3_bind_blob_fn
    let step: sqlite3_step_fn
    let reset: sqlite3_reset_fn
    let columnBytes: sqlite3_column_bytes_fn
    let finalize: sqlite3_finalize_fn

    init(_ library: PeerLibrary) throws {
        libversion = try library.function("sqlite3_libversion")
        open = try library.function("sqlite3_open_v2")
        close = try library.function("sqlite3_close_v2")
        exec = try library.function("sqlite3_exec")
        free = try library.function("sqlite3_free")
        busyTimeout = try library.function("sqlite3_busy_timeout")
        errmsg = try library.function("sqlite3_errmsg")
        prepare = try library.function("sqlite3_prepare_v2")
        bindBlob = try library.function("sqlite3_bind_blob")
        step = try library.function("sqlite3_step")
        reset = try library.function("sqlite3_reset")
        columnBytes = try library.function("sqlite3_column_bytes")
        finalize = try library.function("sqlite3_finalize")
    }
}

struct SQLiteEngine: BenchmarkEngine {
    let api: SQLiteAPI
    let version: String

    init() throws {
        let library = try PeerLibrary(engine: "sqlite", sonames: ["libsqlite3.so.0", "libsqlite3.so", "libsqlite3.dylib"],
                                      debianPackage: "libsqlite3-dev")
        api = try SQLiteAPI(library)
        version = api.libversion().map { String(cString: $0) } ?? "?"
    }

    var name: String { "sqlite" }
    var displayName: String { "SQLite" }

    func configuration(for durability: BenchmarkDurability) -> String {
        let synchronous = durability == .synced ? "FULL" : "NORMAL"
        let end = durability == .buffered ? "; the final sync is `PRAGMA wal_checkpoint(FULL)`" : ""
        return "SQLite \(version): WAL mode, `synchronous=\(synchronous)`, one `WITHOUT ROWID` table, "
            + "`INSERT OR REPLACE` in BEGIN/COMMIT\(end)"
    }

    var compaction: CompactionSupport {
        .notApplicable("no compaction: SQLite's B-tree is updated in place")
    }

    func open(directory: String, durability: BenchmarkDurability) throws -> any BenchmarkStore {
        try SQLiteStore(api: api, path: directory + "/kv.sqlite", durability: durability)
    }
}

/// One connection, used by one thread at a time.
final class SQLiteConnection {
    let api: SQLiteAPI
    let db: OpaquePointer
    private var statements: [OpaquePointer] = []

    init(api: SQLiteAPI, path: String) throws {
        self.api = api
        var handle: OpaquePointer?
        let code = api.open(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.flatMap { api.errmsg($0) }.map { String(cString: $0) } ?? "error \(code)"
            if let handle { _ = api.close(handle) }
            throw PeerError(engine: "sqlite", message: "cannot open \(path): \(message)")
        }
        db = handle
        _ = api.busyTimeout(db, 10_000)
    }

    func fail(_ what: String, _ code: Int32) -> PeerError {
        PeerError(engine: "sqlite", message: "\(what) failed (\(code)): \(api.errmsg(db).map { String(cString: $0) } ?? "?")")
    }

    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = api.exec(db, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error \(code)"
            api.free(message)
            throw PeerError(engine: "sqlite", message: "\(sql) failed: \(text)")
        }
    }

    /// A prepared statement, finalized by `close()`.
    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = api.prepare(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw fail("prepare \(sql)", code) }
        statements.append(statement)
        return statement
    }

    /// Runs a statement that returns no rows.
    func run(_ statement: OpaquePointer, _ what: String) throws {
        let code = api.step(statement)
        _ = api.reset(statement)
        guard code == SQLITE_DONE else { throw fail(what, code) }
    }

    func bind(_ statement: OpaquePointer, _ index: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        // A nil destructor is SQLITE_STATIC: the bytes stay alive until the statement is reset.
        let code = api.bindBlob(statement, index, bytes.baseAddress, Int32(bytes.count), nil)
        guard code == SQLITE_OK else { throw fail("bind", code) }
    }

    func close() {
        for statement in statements { _ = api.finalize(statement) }
        statements = []
        _ = api.close(db)
    }
}

final class SQLiteStore: BenchmarkStore, @unchecked Sendable {
    // @unchecked Sendable because: the write connection and its statements are used only
    // under `lock`; readers open connections of their own.
    private let api: SQLiteAPI
    private let path: String
    private let lock = NSLock()
    private let writer: SQLiteConnection
    private let begin: OpaquePointer
    private let commit: OpaquePointer
    private let rollback: OpaquePointer
    private let insert: OpaquePointer

    init(api: SQLiteAPI, path: String, durability: BenchmarkDurability) throws {
        self.api = api
        self.path = path
        writer = try SQLiteConnection(api: api, path: path)
        do {
            try writer.exec("PRAGMA journal_mode=WAL")
            try writer.exec("PRAGMA synchronous=\(durability == .synced ? "FULL" : "NORMAL")")
            try writer.exec("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
            begin = try writer.prepare("BEGIN IMMEDIATE")
            commit = try writer.prepare("COMMIT")
            rollback = try writer.prepare("ROLLBACK")
            insert = try writer.prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)")
        } catch {
            writer.close()
            throw error
        }
    }

    func write(_ pairs: [KeyValue]) throws {
        try lock.withLock {
            try writer.run(begin, "BEGIN")
            do {
                for pair in pairs {
                    try pair.key.withUnsafeBytes { key in
                        try pair.value.withUnsafeBytes { value in
                            try writer.bind(insert, 1, key)
                            try writer.bind(insert, 2, value)
                            try writer.run(insert, "INSERT")
                        }
                    }
                }
                try writer.run(commit, "COMMIT")
            } catch {
                try? writer.run(rollback, "ROLLBACK")
                throw error
            }
        }
    }

    func sync() throws {
        // In WAL mode with synchronous=NORMAL, a checkpoint syncs the log, then the database.
        try lock.withLock { try writer.exec("PRAGMA wal_checkpoint(FULL)") }
    }

    func makeReader() throws -> any BenchmarkReader {
        try SQLiteReader(connection: SQLiteConnection(api: api, path: path))
    }

    func close() throws {
        lock.withLock { writer.close() }
    }
}

final class SQLiteReader: BenchmarkReader {
    private let connection: SQLiteConnection
    private let get: OpaquePointer
    private let scan: OpaquePointer

    init(connection: SQLiteConnection) throws {
        self.connection = connection
        do {
            get = try connection.prepare("SELECT v FROM kv WHERE k = ?1")
            scan = try connection.prepare("SELECT v FROM kv ORDER BY k")
        } catch {
            connection.close()
            throw error
        }
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        try key.withUnsafeBytes { key in
            try connection.bind(get, 1, key)
            defer { _ = connection.api.reset(get) }
            switch connection.api.step(get) {
            case SQLITE_ROW: return Int(connection.api.columnBytes(get, 0))
            case SQLITE_DONE: return nil
            case let code: throw connection.fail("SELECT", code)
            }
        }
    }

    func scanAll(expectedValueLength: Int) throws -> ScanTally {
        defer { _ = connection.api.reset(scan) }
        var tally = ScanTally()
        while true {
            switch connection.api.step(scan) {
            case SQLITE_ROW:
                tally.entries += 1
                if Int(connection.api.columnBytes(scan, 0)) != expectedValueLength { tally.wrongValueLengths += 1 }
            case SQLITE_DONE:
                return tally
            case let code:
                throw connection.fail("scan", code)
            }
        }
    }

    func close() {
        connection.close()
    }
}
