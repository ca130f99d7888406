import Dispatch
import StrataIO
import Synchronization

/// An open Strata store: a directory of files holding sorted keys and values, with MVCC
/// snapshots for readers and one writer queue for every change.
///
/// ```swift
/// let store = try Store(path: "data.strata")
/// try store.write { tx in try tx.put(key, value) }
/// let value = try store.read { tx in try tx.get(key) }
/// try store.close()
/// ```
///
/// A `Store` is `Sendable`: share one instance between threads and actors. Only one `Store`
/// may have a given path open at a time, in any process.
public final class Store: Sendable {
    /// The store's directory.
    public let path: String
    /// What opening the store found in its log.
    public let recovery: RecoveryReport

    private let options: StoreOptions
    private let writer: Writer
    private let maintenance: Maintenance
    /// Signalled when the store's flush and compaction threads end; for tests.
    var maintenanceThreadsEnded: [DispatchSemaphore] { maintenance.threadsEnded }
    private let cache: BlockCache
    private let lock: any FileLock
    private let published: PublishedState
    private let versions: VersionSet
    private let snapshots = SnapshotRegistry()
    private let state = Locked<State>(.open)
    /// Callback completions run here, in commit order, never on the writer queue.
    private let completionQueue = DispatchQueue(label: "strata.completions")

    private enum State {
        case open
        case closing
        case closed
    }
    /// Signalled once the first close() has finished; later calls wait on it.
    private let closed = DispatchSemaphore(value: 0)

    /// Opens the store at `path`, creating it when missing (unless
    /// `options.createIfMissing` is false), and replays its log.
    ///
    /// - Throws: `StoreError` with code `.locked` when another `Store` has it open,
    ///   `.notAStore` when the path holds something else, `.corruption` or `.formatVersion`
    ///   when its files cannot be read.
    public init(path: String, options: StoreOptions = StoreOptions()) throws {
        let opened = try Recovery.open(path: path, options: options)
        self.path = path
        self.options = options
        self.recovery = opened.report
        self.lock = opened.lock
        self.published = opened.versions.published
        self.versions = opened.versions
        self.cache = opened.cache
        let snapshots = self.snapshots
        let maintenance = Maintenance(
            directory: path, options: options, versions: opened.versions, cache: opened.cache,
            oldestPinned: { snapshots.summary.oldest })
        self.maintenance = maintenance
        self.writer = Writer(
            memtable: opened.memtable, lastSequence: opened.lastSequence, wal: opened.wal,
            maintenance: maintenance, options: options)
        // Files left over from before the open may already call for a compaction.
        maintenance.schedule()
    }

    deinit {
        try? close()
    }

    /// Closes the store: waits for queued writes, makes `.buffered` commits durable, lets a
    /// flush or compaction already running finish (it starts no new one), closes the files
    /// and releases the lock. Idempotent. Later calls on the store throw `.closed`.
    ///
    /// A compaction can take a few seconds on a large store. Closing is not needed for
    /// safety: a process killed without closing loses no commit (a `.buffered` one is lost
    /// only if the machine also loses power before the system writes it out).
    public func close() throws {
        if writer.isCurrentThreadWriter {
            throw StoreError(.invalidArgument, "close() was called from inside a write transaction; close the store after the write returns")
        }
        let mustClose = state.withLock { state -> Bool in
            guard case .open = state else { return false }
            state = .closing
            return true
        }
        if mustClose { published.markClosing() }
        guard mustClose else {
            // Another call is closing or has closed the store: wait until it is done, so
            // that after any close() returns the files and the lock are released.
            closed.wait()
            closed.signal()
            return
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<(any Error)?>(nil)
        let queued = writer.submit(
            .close({ error in
                outcome.withLock { $0 = error }
                done.signal()
            }))
        if queued { done.wait() }
        maintenance.shutdown()
        try? lock.unlock()
        let error = outcome.withLock { $0 }
        state.withLock { $0 = .closed }
        closed.signal()
        if let error { throw error }
    }

    private var isOpen: Bool {
        state.withLock { if case .open = $0 { return true } else { return false } }
    }

    private func checkOpen() throws {
        guard isOpen else { throw StoreError.closed() }
    }

    // MARK: Reading

    /// Runs `body` on a snapshot of the latest commit, on the calling thread. Never waits for
    /// the writer.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        guard let view = published.current() else { throw StoreError.closed() }
        return try ReadTransaction(view: view).run(body)
    }

    /// Runs `body` on a snapshot of the latest commit. The async form, for async contexts;
    /// it suspends nowhere, since reads never wait.
    public func read<T>(_ body: (ReadTransaction) throws -> T) async throws -> T {
        guard let view = published.current() else { throw StoreError.closed() }
        return try ReadTransaction(view: view).run(body)
    }

    /// A long-lived snapshot of the latest commit. On a closed store, the snapshot's reads
    /// throw `.closed`.
    public func snapshot() -> Snapshot {
        guard let view = published.current() else {
            return Snapshot(view: published.latest(), registry: snapshots, storeIsOpen: { false })
        }
        return Snapshot(
            view: view, registry: snapshots,
            storeIsOpen: { [weak self] in
                self?.isOpen ?? false
            })
    }

    /// The latest commit sequence readers can see.
    public var version: UInt64 { published.latest().sequence }

    // MARK: Writing

    /// Runs `body` as one transaction on the writer queue and returns its result once the
    /// transaction is committed as durably as `durability` (default: the store's option)
    /// asks. Blocks the calling thread; from async code use the async overload.
    ///
    /// If `body` throws, nothing it wrote is applied and its error is rethrown unchanged.
    public func write<T>(durability: Durability? = nil, _ body: (WriteTransaction) throws -> T) throws -> T {
        try checkOpen()
        if writer.isCurrentThreadWriter {
            throw StoreError(
                .invalidArgument,
                "a synchronous write was started from inside a write transaction on the same store, and would wait for itself; do the work in the outer transaction, or use asyncWrite"
            )
        }
        return try withoutActuallyEscaping(body) { body in
            // The caller blocks until the writer has run `body`, so the closure and what it
            // captures are never used by two threads at once. The cell is emptied before
            // returning, so the closure does not outlive this call even though the writer
            // may still hold the request for a moment.
            let cell = BodyCell(body)
            defer { cell.clear() }
            let result = ResultSlot<T>()
            let done = DispatchSemaphore(value: 0)
            let request = Writer.TransactionRequest(
                durability: durability ?? options.durability,
                run: { tx in result.store(try cell.run(tx)) },
                complete: { error in
                    result.fail(error)
                    done.signal()
                })
            guard writer.submit(.transaction(request)) else { throw StoreError.closed() }
            done.wait()
            return try result.take()
        }
    }

    /// Runs `body` as one transaction on the writer queue. Suspends (never blocks a thread)
    /// until the transaction is committed as durably as `durability` asks.
    public func write<T: Sendable>(durability: Durability? = nil, _ body: @Sendable (WriteTransaction) throws -> T) async throws -> T {
        try checkOpen()
        return try await withoutActuallyEscaping(body) { body in
            // The task stays suspended until the writer has run `body`; the cell is emptied
            // before returning, so the closure does not outlive this call.
            let cell = BodyCell(body)
            defer { cell.clear() }
            let result = ResultSlot<T>()
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let request = Writer.TransactionRequest(
                    durability: durability ?? options.durability,
                    run: { tx in result.store(try cell.run(tx)) },
                    complete: { error in
                        result.fail(error)
                        continuation.resume(with: Result { try result.take() })
                    })
                if !writer.submit(.transaction(request)) {
                    continuation.resume(throwing: StoreError.closed())
                }
            }
        }
    }

    /// Queues `body` as one transaction and returns at once. `completion` gets the body's
    /// result after the commit (or the error), on a Strata queue, in commit order.
    public func asyncWrite<T: Sendable>(
        durability: Durability? = nil,
        _ body: @escaping @Sendable (WriteTransaction) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void = { _ in }
    ) {
        guard isOpen else {
            completionQueue.async { completion(.failure(StoreError.closed())) }
            return
        }
        let result = ResultSlot<T>()
        let completionQueue = self.completionQueue
        let request = Writer.TransactionRequest(
            durability: durability ?? options.durability,
            run: { tx in result.store(try body(tx)) },
            complete: { error in
                result.fail(error)
                let outcome = Result { try result.take() }
                completionQueue.async { completion(outcome) }
            })
        if !writer.submit(.transaction(request)) {
            completionQueue.async { completion(.failure(StoreError.closed())) }
        }
    }

    /// Makes every earlier commit durable (one fdatasync, shared with concurrent writers).
    public func sync() throws {
        try checkOpen()
        if writer.isCurrentThreadWriter {
            throw StoreError(.invalidArgument, "sync() was called from inside a write transaction and would wait for itself; call it after the write returns")
        }
        try submitAndWait(Writer.Request.sync)
    }

    /// Queues the writer request `make` builds around a completion, and blocks until it
    /// completes; rethrows its error. `.closed` when the writer no longer takes requests.
    private func submitAndWait(_ make: (@escaping Writer.Completion) -> Writer.Request) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<(any Error)?>(nil)
        let queued = writer.submit(
            make { error in
                outcome.withLock { $0 = error }
                done.signal()
            })
        guard queued else { throw StoreError.closed() }
        done.wait()
        if let error = outcome.withLock({ $0 }) { throw error }
    }

    /// Makes every earlier commit durable, suspending instead of blocking.
    public func sync() async throws {
        try checkOpen()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let queued = writer.submit(
                .sync({ error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }))
            if !queued { continuation.resume(throwing: StoreError.closed()) }
        }
    }

    // MARK: Maintenance

    /// Flushes the memtables and merges every segment file into the deepest level, dropping
    /// versions no reader can see and tombstones nothing older can hold: afterwards the
    /// directory holds each live key once. Readers and writers carry on meanwhile. Blocks
    /// until done.
    public func compact() throws {
        try checkOpen()
        if writer.isCurrentThreadWriter {
            throw StoreError(
                .invalidArgument, "compact() was called from inside a write transaction and would wait for itself; call it after the write returns")
        }
        try submitAndWait(Writer.Request.seal)
        try maintenance.compactAll()
    }

    /// Flushes and compacts as ``compact()`` does, suspending instead of blocking.
    public func compact() async throws {
        try checkOpen()
        let maintenance = self.maintenance
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let queued = writer.submit(
                .seal({ error in
                    if let error {
                        continuation.resume(throwing: error)
                        return
                    }
                    // Off the writer queue: the compaction must not hold up writes.
                    maintenance.compactionThread.async {
                        continuation.resume(with: Result { try maintenance.compactAllOnThread() })
                    }
                }))
            if !queued { continuation.resume(throwing: StoreError.closed()) }
        }
    }

    // MARK: Figures

    public func stats() throws -> StoreStats {
        try checkOpen()
        let view = published.latest()
        let pinned = snapshots.summary
        let version = view.version
        let levels = version.levels.enumerated().map { level, files in
            StoreStats.LevelStats(
                level: level, files: files.count, bytes: files.reduce(0) { $0 + Int($1.meta.fileSize) },
                entries: files.reduce(0) { $0 + Int($1.meta.entryCount) })
        }
        return StoreStats(
            version: view.sequence,
            memtableEntries: version.memtableEntries,
            memtableBytes: version.memtableBytes,
            sealedMemtables: version.sealed.count,
            walSegments: versions.wal.segmentCount,
            walBytes: versions.wal.totalBytes,
            levels: levels,
            liveSnapshots: pinned.count,
            oldestSnapshotVersion: pinned.oldest,
            pinnedVersions: snapshots.pinnedVersions.map { StoreStats.PinnedVersion(version: $0.version, snapshots: $0.count) },
            blockCacheBytes: cache.bytes, blockCacheCapacity: cache.capacity,
            flushes: maintenance.flushCount.load(ordering: .relaxed),
            compactions: maintenance.compactionCount.load(ordering: .relaxed),
            writeStalls: writer.stallCount.load(ordering: .relaxed),
            writeStallSeconds: Double(writer.stallMicroseconds.load(ordering: .relaxed)) / 1e6,
            isStalled: writer.isStalled.load(ordering: .relaxed))
    }
}
