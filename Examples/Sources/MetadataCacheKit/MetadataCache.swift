// The pattern apps write by hand around Realm or SQLite looks like this:
//
//     let writerQueue = DispatchQueue(label: "db.writer")   // one writer at a time
//     var isSuspending = false                               // set by the app delegate
//     func performWrite(sync: Bool, _ block: @escaping (Database) -> Void) {
//         guard !isSuspending else { return }                // the write is silently lost
//         if sync { writerQueue.sync { db.write(block) } } else { writerQueue.async { db.write(block) } }
//     }
//
// On Strata neither the queue nor the flag is needed. The store has one writer queue of its
// own, so `performWrite` is a thin wrapper over `store.write`. Suspension is the store's job:
// `suspend()` finishes or fails every queued write and releases the file lock, and while
// suspended every call throws a `StoreError` whose `isRetryable` is true. The caller is
// always told, so this cache keeps each refused record and writes it once the store resumes.
import Foundation
import Strata
import Synchronization

/// What happened to a record handed to `MetadataCache.save(_:sync:)`.
public enum SaveResult: Sendable, Equatable {
    /// The record is committed: on disk if `sync` was true, handed to the system otherwise.
    case committed
    /// The store was suspended. The record waits in the cache and is written when the
    /// store resumes.
    case retryAfterResume
}

/// An app's cache of file metadata, kept in a Strata store. Share one instance across the
/// app's threads and tasks, as you would the store.
public final class MetadataCache: Sendable {
    public let store: Store

    /// Records whose write was refused because the store was suspended, oldest first.
    private let waiting = Mutex<[FileMetadata]>([])

    /// Opens (or creates) the cache at `path`. Throws `.locked` if another process, an app
    /// extension for instance, has it open right now.
    public init(path: String) throws {
        store = try Store(path: path)
    }

    // MARK: The two helpers

    /// Runs `body` on a snapshot of the latest commit, on the calling thread. Reads never
    /// wait for writes, so this is safe on the main thread.
    public func performRead<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        try store.read(body)
    }

    /// Runs `body` as one transaction on the store's writer queue and returns its result
    /// after the commit. `sync: true` returns once the commit is on disk (`.synced`);
    /// `sync: false` once the system has it (`.buffered`): it survives the app being killed,
    /// and `suspend()` makes it durable before the app is frozen.
    ///
    /// Blocks the calling thread until the commit; from async code the `async` overload is
    /// chosen instead.
    public func performWrite<T>(sync: Bool, _ body: (WriteTransaction) throws -> T) throws -> T {
        try store.write(durability: Self.durability(sync: sync), body)
    }

    /// The `async` form of blocking `performWrite(sync:_:)`: suspends the
    /// task instead of blocking a thread.
    public func performWrite<T: Sendable>(sync: Bool, _ body: @Sendable (WriteTransaction) throws -> T) async throws -> T {
        try await store.write(durability: Self.durability(sync: sync), body)
    }

    /// The callback form: returns at once; `completion` gets the result after the commit, on
    /// a Strata queue, in commit order.
    public func performWrite<T: Sendable>(
        sync: Bool,
        _ body: @escaping @Sendable (WriteTransaction) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        store.asyncWrite(durability: Self.durability(sync: sync), body, completion: completion)
    }

    private static func durability(sync: Bool) -> Durability {
        sync ? .synced : .buffered
    }

    // MARK: Records

    /// The cached metadata of the file at `path`, if any.
    public func metadata(forPath path: String) throws -> FileMetadata? {
        try performRead { tx in
            try tx.get(FileMetadata.key(forPath: path)).map(FileMetadata.init(decoding:))
        }
    }

    /// Every cached record, in path order.
    public func allMetadata() throws -> [FileMetadata] {
        try performRead { tx in
            try tx.scan(prefix: FileMetadata.keyPrefix).map { try FileMetadata(decoding: $0.value) }
        }
    }

    /// Saves `record`, blocking until it is committed. If the store is suspended, the record
    /// is kept and written when the store resumes: the call returns `.retryAfterResume`
    /// instead of losing it. Other errors (a full disk, say) are thrown.
    @discardableResult
    public func save(_ record: FileMetadata, sync: Bool) throws -> SaveResult {
        do {
            let value = try record.encoded()
            try performWrite(sync: sync) { tx in try tx.put(record.key, value) }
            return .committed
        } catch {
            return try keepIfSuspended(record, error)
        }
    }

    /// Saves `record` as `save(_:sync:)` does, suspending the task instead of
    /// blocking.
    @discardableResult
    public func save(_ record: FileMetadata, sync: Bool) async throws -> SaveResult {
        do {
            let value = try record.encoded()
            try await performWrite(sync: sync) { tx in try tx.put(record.key, value) }
            return .committed
        } catch {
            return try keepIfSuspended(record, error)
        }
    }

    /// Saves `record` as `save(_:sync:)` does, returning at once; `completion` is
    /// told what happened.
    public func save(_ record: FileMetadata, sync: Bool, completion: @escaping @Sendable (Result<SaveResult, any Error>) -> Void) {
        let value: [UInt8]
        do {
            value = try record.encoded()
        } catch {
            completion(.failure(error))
            return
        }
        performWrite(sync: sync, { tx in try tx.put(record.key, value) }) { result in
            switch result {
            case .success: completion(.success(.committed))
            case .failure(let error): completion(Result { try self.keepIfSuspended(record, error) })
            }
        }
    }

    /// Keeps `record` for `writeWaitingRecords()` when `error` says the store was suspended
    /// (`isRetryable`); rethrows any other error.
    private func keepIfSuspended(_ record: FileMetadata, _ error: any Error) throws -> SaveResult {
        guard let error = error as? StoreError, error.isRetryable else { throw error }
        waiting.withLock { $0.append(record) }
        return .retryAfterResume
    }

    /// How many refused records wait to be written.
    public var waitingCount: Int { waiting.withLock { $0.count } }

    /// Writes every record a suspension refused, in one synced transaction. `resume()` and
    /// `close()` call it; call it yourself to write sooner a record whose refusal was
    /// reported after the store had resumed (a callback's completion can arrive late).
    ///
    /// A record the app has saved again since, with a newer modification date, is skipped,
    /// so a late retry never writes an old version over a newer one. If the store is
    /// suspended again, the records stay waiting.
    public func writeWaitingRecords() throws {
        let records = waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
        guard !records.isEmpty else { return }
        do {
            try performWrite(sync: true) { tx in
                for record in records {
                    let current = try tx.get(record.key).map(FileMetadata.init(decoding:))
                    if let current, current.modified > record.modified { continue }
                    try tx.put(record.key, try record.encoded())
                }
            }
        } catch {
            // Back in front of anything refused meanwhile, so the order stays oldest first.
            waiting.withLock { $0.insert(contentsOf: records, at: 0) }
            throw error
        }
    }

    // MARK: Following the app's lifecycle

    /// The app left the foreground (scene phase `.inactive` or `.background`): every call is
    /// still served, but the store starts no new compaction, so a suspension soon after is
    /// quick.
    public func enterBackground() {
        store.enterBackground()
    }

    /// The app may be frozen at any moment now (a background task's time ran out, or its
    /// work is done): queued writes are committed or refused (and then kept here), every
    /// commit is made durable and the file lock is released, so the system has no reason to
    /// terminate the frozen app (0xdead10cc). Blocks until done, as an expiration handler
    /// must.
    public func suspend() throws {
        try store.suspend()
    }

    /// `suspend()` for async code: suspends the task instead of blocking.
    public func suspend() async throws {
        try await store.suspend()
    }

    /// The app may touch the store again (scene phase `.active`, a background task or an
    /// extension point started): resumes the store, then writes the records a suspension
    /// refused.
    ///
    /// - Returns: `.reloaded` when another process (an app extension) changed the store while
    ///   this one was suspended: the cache now reads what it wrote.
    /// - Throws: `.locked` while another process has the store open; the store stays
    ///   suspended, so try again a little later.
    @discardableResult
    public func resume() throws -> ResumeOutcome {
        let outcome = try store.resume()
        do {
            try writeWaitingRecords()
        } catch let error as StoreError where error.isRetryable {
            // Suspended again already: the records wait for the next resume.
        }
        return outcome
    }

    /// Writes the waiting records, then closes the store. Throws `.suspended`, leaving the
    /// store open, when records wait and the store is suspended: resume first, or they are
    /// lost.
    public func close() throws {
        try writeWaitingRecords()
        try store.close()
    }
}
