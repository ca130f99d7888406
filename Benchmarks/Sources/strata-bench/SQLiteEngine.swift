// SQLite as its users run it for a key-value table: WAL mode, one WITHOUT ROWID table,
// synchronous=NORMAL for bulk loads and FULL where every commit must be durable. One write
// connection shared under a lock (SQLite admits one writer at a time anyway; GRDB's
// DatabasePool works the same way) and one connection per reading thread. The function
// table and the connection are PeerSupport's (SQLiteConnection.swift).
import CSQLitePeer
import Foundation
import PeerSupport
import StrataBenchmarkKit

struct SQLiteEngine: BenchmarkEngine {
    let api: SQLiteAPI
    let version: String

    init() throws {
        api = try SQLiteAPI.load()
        version = api.version
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
