// SQLite's function table and one connection with its prepared statements, shared by the
// benchmarks that measure SQLite (strata-bench's key-value table, strata-records' table of
// typed fields). The engines' tables and workloads stay with their executables.
import CSQLitePeer
import Foundation

public struct SQLiteAPI: @unchecked Sendable {
    // @unchecked Sendable because: C function pointers, set once at load and never changed.
    public let libversion: sqlite3_libversion_fn
    public let open: sqlite3_open_v2_fn
    public let close: sqlite3_close_v2_fn
    public let exec: sqlite3_exec_fn
    public let free: sqlite3_free_fn
    public let busyTimeout: sqlite3_busy_timeout_fn
    public let errmsg: sqlite3_errmsg_fn
    public let prepare: sqlite3_prepare_v2_fn
    public let bindBlob: sqlite3_bind_blob_fn
    public let bindInt64: sqlite3_bind_int64_fn
    public let bindText: sqlite3_bind_text_fn
    public let step: sqlite3_step_fn
    public let reset: sqlite3_reset_fn
    public let columnBytes: sqlite3_column_bytes_fn
    public let columnInt64: sqlite3_column_int64_fn
    public let columnText: sqlite3_column_text_fn
    public let finalize: sqlite3_finalize_fn

    public init(_ library: PeerLibrary) throws {
        libversion = try library.function("sqlite3_libversion")
        open = try library.function("sqlite3_open_v2")
        close = try library.function("sqlite3_close_v2")
        exec = try library.function("sqlite3_exec")
        free = try library.function("sqlite3_free")
        busyTimeout = try library.function("sqlite3_busy_timeout")
        errmsg = try library.function("sqlite3_errmsg")
        prepare = try library.function("sqlite3_prepare_v2")
        bindBlob = try library.function("sqlite3_bind_blob")
        bindInt64 = try library.function("sqlite3_bind_int64")
        bindText = try library.function("sqlite3_bind_text")
        step = try library.function("sqlite3_step")
        reset = try library.function("sqlite3_reset")
        columnBytes = try library.function("sqlite3_column_bytes")
        columnInt64 = try library.function("sqlite3_column_int64")
        columnText = try library.function("sqlite3_column_text")
        finalize = try library.function("sqlite3_finalize")
    }

    /// Loads the system's SQLite (or the override's); throws `PeerLibrary.Unavailable` when
    /// it is missing.
    public static func load() throws -> SQLiteAPI {
        let library = try PeerLibrary(
            engine: "sqlite", sonames: ["libsqlite3.so.0", "libsqlite3.so", "libsqlite3.dylib"],
            debianPackage: "libsqlite3-dev")
        return try SQLiteAPI(library)
    }

    /// The loaded library's version, "3.40.1".
    public var version: String {
        libversion().map { String(cString: $0) } ?? "?"
    }
}

/// One connection, used by one thread at a time.
public final class SQLiteConnection {
    public let api: SQLiteAPI
    public let db: OpaquePointer
    private var statements: [OpaquePointer] = []

    public init(api: SQLiteAPI, path: String) throws {
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

    public func fail(_ what: String, _ code: Int32) -> PeerError {
        PeerError(engine: "sqlite", message: "\(what) failed (\(code)): \(api.errmsg(db).map { String(cString: $0) } ?? "?")")
    }

    public func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = api.exec(db, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error \(code)"
            api.free(message)
            throw PeerError(engine: "sqlite", message: "\(sql) failed: \(text)")
        }
    }

    /// A prepared statement, finalized by `close()`.
    public func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = api.prepare(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw fail("prepare \(sql)", code) }
        statements.append(statement)
        return statement
    }

    /// Runs a statement that returns no rows.
    public func run(_ statement: OpaquePointer, _ what: String) throws {
        let code = api.step(statement)
        _ = api.reset(statement)
        guard code == SQLITE_DONE else { throw fail(what, code) }
    }

    public func bind(_ statement: OpaquePointer, _ index: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        // A nil destructor is SQLITE_STATIC: the bytes stay alive until the statement is reset.
        let code = api.bindBlob(statement, index, bytes.baseAddress, Int32(bytes.count), nil)
        guard code == SQLITE_OK else { throw fail("bind", code) }
    }

    public func bind(_ statement: OpaquePointer, _ index: Int32, _ value: Int64) throws {
        let code = api.bindInt64(statement, index, value)
        guard code == SQLITE_OK else { throw fail("bind", code) }
    }

    /// Binds UTF-8 text without copying it (SQLITE_STATIC): `text` must stay alive until the
    /// statement is stepped and reset.
    public func bind(_ statement: OpaquePointer, _ index: Int32, text: UnsafeBufferPointer<UInt8>) throws {
        let code = text.withMemoryRebound(to: CChar.self) { text in
            api.bindText(statement, index, text.baseAddress, Int32(text.count), nil)
        }
        guard code == SQLITE_OK else { throw fail("bind", code) }
    }

    /// Column `column` of the current row as a Swift string (a copy of SQLite's bytes).
    public func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        // sqlite3_column_text first, then sqlite3_column_bytes: the length of the text it gave.
        guard let start = api.columnText(statement, column) else { return "" }
        let count = Int(api.columnBytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    public func close() {
        for statement in statements { _ = api.finalize(statement) }
        statements = []
        _ = api.close(db)
    }
}
