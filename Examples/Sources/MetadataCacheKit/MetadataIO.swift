// The metadata cache's read and write helpers, rewritten to return `StoreIO` values.
//
// `MetadataCache.metadata(forPath:)` and `save(_:sync:)` each run a transaction of their
// own: a sync pass that updates ten records with them makes ten commits, and a crash halfway
// leaves five. The helpers below only describe their work, so a caller composes as many as
// it likes (reads, read-modify-writes, an eviction pass) and runs the whole as one
// transaction: one commit, all or nothing. They use the same keys and JSON encoding as
// `MetadataCache` (FileMetadata.swift), so both work on the same store.
import Foundation
import Strata

/// Thrown by ``MetadataIO/touch(_:size:modified:)`` for a path the cache does not hold.
public struct NotCached: Error, Equatable {
    public var path: String

    public init(path: String) {
        self.path = path
    }
}

/// Operations on the metadata cache, each a `StoreIO` to compose and run later.
public enum MetadataIO {
    /// The record of the file at `path`, if cached.
    public static func entry(forPath path: String) -> StoreIO<ReadOnly, FileMetadata?> {
        let bytes: StoreIO<ReadOnly, [UInt8]?> = .get(FileMetadata.key(forPath: path))
        return bytes.map { bytes in try bytes.map(FileMetadata.init(decoding:)) }
    }

    /// Every cached record, in path order.
    public static func all() -> StoreIO<ReadOnly, [FileMetadata]> {
        let entries: StoreIO<ReadOnly, [Entry]> = .scan(prefix: FileMetadata.keyPrefix)
        return entries.map { entries in try entries.map { try FileMetadata(decoding: $0.value) } }
    }

    /// Saves `metadata`, replacing any record of the same path.
    public static func record(_ metadata: FileMetadata) -> StoreIO<ReadWrite, Void> {
        .write { tx in try tx.put(metadata.key, metadata.encoded()) }
    }

    /// Removes the record of `path`.
    public static func remove(_ path: String) -> StoreIO<ReadWrite, Void> {
        .delete(FileMetadata.key(forPath: path))
    }

    /// The file at `path` changed: a read-modify-write of its record (new size and date;
    /// the rest kept). Fails with ``NotCached`` if there is no record, and then a composition
    /// containing it applies nothing.
    public static func touch(_ path: String, size: Int64, modified: Date) -> StoreIO<ReadWrite, FileMetadata> {
        entry(forPath: path).flatMap { current in
            guard var updated = current else { throw NotCached(path: path) }
            updated.size = size
            updated.modified = modified
            let saved = updated
            return record(saved).map { saved }
        }
    }

    /// Keeps the `limit` most recently modified records and removes the others; gives the
    /// removed paths. Run in a composition, it sees the records the earlier steps wrote.
    public static func evict(keepingAtMost limit: Int) -> StoreIO<ReadWrite, [String]> {
        all().flatMap { records in
            let doomed = records.sorted { $0.modified < $1.modified }.dropLast(limit).map(\.path)
            return StoreIO.sequence(doomed.map(remove)).map { _ in doomed }
        }
    }

    /// One sync pass of a folder, built from the helpers above: updates the records of the
    /// files that changed, adds the new files, then evicts down to `limit` records.
    public static func syncPass(changed: [FileChange], added: [FileMetadata], limit: Int) -> StoreIO<ReadWrite, SyncPassResult> {
        let touches = StoreIO.sequence(changed.map { touch($0.path, size: $0.size, modified: $0.modified) })
        let additions = StoreIO.sequence(added.map(record))
        return touches.zip(additions).flatMap { touched, _ in
            evict(keepingAtMost: limit).map { evicted in
                SyncPassResult(touched: touched.map(\.path), added: added.map(\.path), evicted: evicted)
            }
        }
    }
}

/// A file the sync pass found changed on disk.
public struct FileChange: Sendable {
    public var path: String
    public var size: Int64
    public var modified: Date

    public init(path: String, size: Int64, modified: Date) {
        self.path = path
        self.size = size
        self.modified = modified
    }
}

/// What ``MetadataIO/syncPass(changed:added:limit:)`` did.
public struct SyncPassResult: Sendable, Equatable {
    public var touched: [String]
    public var added: [String]
    public var evicted: [String]
}
