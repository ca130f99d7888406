import Dispatch
import StrataIO
import Synchronization

/// An open Strata store: a directory of files holding sorted keys and values, with MVCC
/// snapshots for readers and one writer queue for every change.
///
/// ```swift
/// let store = try Store(path: "data.strata")
/// try store.write { tx in try tx.put(key, value) }
/// let stored = try store.read { tx in try tx.get(key) }   // [UInt8]?, nil when absent
/// print(stored?.count ?? 0)
/// try store.close()
/// ```
///
/// A `Store` is `Sendable`: share one instance between threads and actors. Only one `Store`
/// may have a given path open for writing at a time, in any process; stores opened with
/// ``StoreOptions/readOnly`` may read it alongside.
public final class Store: Sendable {
    /// The store's directory.
    public let path: String
    /// What opening the store found in its log.
    public let recovery: RecoveryReport

    let options: StoreOptions
    /// Every file lock the store holds; released while suspended.
    let lock: StoreLock
    /// What new reads see; outlives reloads.
    let published: PublishedState
    let snapshots: SnapshotRegistry
    /// Observations and change feeds; outlive reloads, as the published state does.
    let listeners = CommitListeners()
    /// The lifecycle phase and the loaded engine. Short critical sections only: every call
    /// reads it once.
    let core: Locked<Core>
    /// Held for the whole of a lifecycle change (suspend, resume from suspension, close), so
    /// changes happen one at a time and each sees the phase the previous one left.
    /// A bare lock: its counter is unused (Locked needs a value of non-zero size).
    let transitions = Locked(0)
    /// Callback completions run here, in commit order, never on the writer queue.
    let completionQueue: DispatchQueue = {
        let queue = DispatchQueue(label: "strata.completions")
        queue.setSpecific(key: Store.completionQueueKey, value: ())
        return queue
    }()
    /// Set on `completionQueue`: `suspend()` called from a completion must not wait for it.
    static let completionQueueKey = DispatchSpecificKey<Void>()

    /// The phase (as ``Lifecycle``) and the engine serving it.
    ///
    /// Invariants (checked by `checkLifecycleInvariants`):
    /// 1. `.suspended` and `.closed` refuse every new call; the phase changes to them before
    ///    the writer is stopped, so no call starts afterwards.
    /// 2. Once `suspend()` or `close()` has returned, the store holds no file lock
    ///    (`lock.isHeld` is false) unless the phase is `.active` or `.background` again.
    /// 3. `fingerprint` is set exactly while the store is suspended with its lock released.
    struct Core {
        var phase: Lifecycle
        var engine: Engine
        var fingerprint: DirectoryFingerprint? = nil
    }

    /// Opens the store at `path`, creating it when missing (unless
    /// `options.createIfMissing` is false, or `options.readOnly` is true), and replays its log.
    ///
    /// - Throws: `StoreError` with code `.locked` when another `Store` has it open (never for
    ///   a read-only open, see ``StoreOptions/readOnly``), `.notAStore` when the path holds
    ///   something else, or nothing and the store may not be created, `.corruption` or
    ///   `.formatVersion` when its files cannot be read, `.invalidArgument` for a path longer
    ///   than ``StoreLimits/maxPathBytes`` or with a name longer than
    ///   ``StoreLimits/maxNameBytes``.
    public init(path: String, options: StoreOptions = StoreOptions()) throws {
        try KeyValidation.checkStorePath(path)
        let lock = StoreLock(directory: path, fileSystem: options.fileSystem)
        let opened =
            options.readOnly
            ? try Recovery.openReadOnly(path: path, options: options)
            : try Recovery.open(path: path, lock: lock, options: options)
        self.path = path
        self.options = options
        self.lock = lock
        self.recovery = opened.report
        let published = opened.versions.published
        self.published = published
        self.snapshots = SnapshotRegistry(admits: { [weak published] () throws(StoreError) in
            guard let published else { throw StoreError.closed() }
            try published.checkAdmission()
        })
        self.core = Locked(Core(phase: .active, engine: Engine(opened: opened, directory: path, options: options, snapshots: snapshots, listeners: listeners)))
    }

    deinit {
        try? close()
    }

    /// The engine serving calls, whatever the phase.
    var engine: Engine { core.withLock { $0.engine } }

    /// Signalled when the store's flush and compaction threads end; for tests.
    var maintenanceThreadsEnded: [DispatchSemaphore] { engine.writing?.maintenance.threadsEnded ?? [] }

    /// The engine to run a call on; throws `.suspended` or `.closed` when calls are refused.
    func admit() throws(StoreError) -> Engine {
        let (phase, engine) = core.withLock { ($0.phase, $0.engine) }
        switch phase {
        case .active, .background: return engine
        case .suspended: throw StoreError.suspended()
        case .closed: throw StoreError.closed()
        }
    }

    /// The writer and maintenance to run a call that writes on; throws what `admit` throws,
    /// and `.readOnly` for a store opened read-only. `call` names the call in that message.
    func admitWrites(_ call: String) throws(StoreError) -> Engine.Writing {
        guard let writing = try admit().writing else { throw StoreError.openedReadOnly(path, refusing: call) }
        return writing
    }

    // MARK: Reading

    /// Runs `body` on a snapshot of the latest commit, on the calling thread. Never waits for
    /// the writer.
    @inlinable
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        // Inlinable, as `write` is, so that each caller compiles it for its own `T`: called
        // generically from another module, every read looked up the metadata of the types
        // built on `T` in the runtime. The work is `readLatest`, which is not generic.
        var value: T? = nil
        try readLatest { tx in value = try body(tx) }
        guard let value else { preconditionFailure("Store.read: the read returned without running its body") }
        return value
    }

    /// Runs `body` on a snapshot of the latest commit. The async form, for async contexts;
    /// it suspends nowhere, since reads never wait.
    @inlinable
    public func read<T>(_ body: (ReadTransaction) throws -> T) async throws -> T {
        var value: T? = nil
        try readLatest { tx in value = try body(tx) }
        guard let value else { preconditionFailure("Store.read: the read returned without running its body") }
        return value
    }

    /// The latest value of `key`, or nil when it has none: a point read of its own, the
    /// same as `read { tx in try tx.get(key) }` without the transaction around it.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try KeyValidation.checkKey(key)
        return try published.withGuardedView { version, sequence in try version.get(key, at: sequence) }
    }

    /// Runs `body` on the latest value of `key`, or on nil when it has none, and returns what
    /// `body` returns: the same as `read { tx in try tx.withUnsafeValue(key, body) }` without
    /// the transaction around it, so the fastest way to read one value. The bytes are
    /// borrowed from the store, valid only during the call: copy what you keep.
    @inlinable
    public func withUnsafeValue<R>(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> R) throws -> R {
        // Inlinable for the caller's `R`, as `read` is; the work is `withLatestValueBytes`.
        var result: R? = nil
        try withLatestValueBytes(key) { result = try body($0) }
        guard let result else { preconditionFailure("Store.withUnsafeValue: the read returned without running its body") }
        return result
    }

    /// The work of `withUnsafeValue`: `body` on the borrowed bytes of `key`'s latest value.
    @usableFromInline
    func withLatestValueBytes(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> Void) throws {
        try KeyValidation.checkKey(key)
        // The version holds the memtables a borrowed value may point into: it must outlive
        // `body`, not just the lookup, and the guarded view keeps it until `body` returns.
        try published.withGuardedView { version, sequence in
            try key.withUnsafeBytes { try version.borrowValue($0, at: sequence) }.withBytes(body)
        }
    }

    /// The work of `read`: a transaction on the latest commit, for `body`.
    @usableFromInline
    func readLatest(_ body: (ReadTransaction) throws -> Void) throws {
        try ReadTransaction.run(on: published.current(), body)
    }

    /// A long-lived snapshot of the latest commit. Its reads throw what the store's would:
    /// `.suspended` while the store is suspended (after `resume()` it reads what it saw,
    /// even if the store reloaded), `.closed` once the store is closed.
    public func snapshot() -> Snapshot {
        Snapshot(view: published.latest(), registry: snapshots)
    }

    /// The latest commit sequence readers can see.
    public var version: UInt64 { published.latest().sequence }

    // MARK: Writing

    /// Runs `body` as one transaction on the writer queue and returns its result once the
    /// transaction is committed as durably as `durability` (default: the store's option)
    /// asks. Blocks the calling thread; from async code use the async overload.
    ///
    /// If `body` throws, nothing it wrote is applied and its error is rethrown unchanged.
    @inlinable
    public func write<T>(durability: Durability? = nil, _ body: (WriteTransaction) throws -> T) throws -> T {
        // Inlinable, so that each caller compiles a copy for its own `T`: called generically
        // from another module, the local below would cost a runtime lookup of `Optional<T>`'s
        // metadata on every commit. The work itself is `runWrite`, which is not generic.
        var value: T? = nil
        try runWrite(durability) { tx in value = try body(tx) }
        guard let value else { preconditionFailure("Store.write: the transaction committed without running its body") }
        return value
    }

    /// The synchronous write: runs `body` as one transaction and returns once it is committed
    /// as `durability` (default: the store's option) asks.
    @usableFromInline
    func runWrite(_ durability: Durability?, _ body: (WriteTransaction) throws -> Void) throws {
        let writer = try admitWrites("write").writer
        if writer.isCurrentThreadWriter {
            throw StoreError(
                .invalidArgument,
                "a synchronous write was started from inside a write transaction on the same store, and would wait for itself; do the work in the outer transaction, or use asyncWrite"
            )
        }
        let durability = durability ?? options.durability
        // An idle writer runs the transaction right here (Writer.commitInline).
        if let outcome = writer.commitInline(durability, body) { return try outcome.get() }
        try withoutActuallyEscaping(body) { body in
            // The caller blocks until the writer has run `body`, so the closure and what it
            // captures are never used by two threads at once. The cell is emptied before
            // returning, so the closure does not outlive this call even though the writer
            // may still hold the request for a moment.
            let cell = BodyCell(body)
            defer { cell.clear() }
            let result = ResultSlot<Void>()
            let done = CommitWaiter()
            let request = Writer.TransactionRequest(
                durability: durability,
                run: { tx in result.store(try cell.run(tx)) },
                complete: { error in
                    result.fail(error)
                    done.signal()
                })
            if let refused = writer.submit(.transaction(request), inline: true) { throw refused }
            done.wait(pollNanoseconds: durability == .synced ? writer.pollBudget : 0, contention: writer.contention)
            try result.take()
        }
    }

    /// Runs `body` as one transaction on the writer queue. Suspends (never blocks a thread)
    /// until the transaction is committed as durably as `durability` asks.
    public func write<T: Sendable>(durability: Durability? = nil, _ body: @Sendable (WriteTransaction) throws -> T) async throws -> T {
        let writer = try admitWrites("write").writer
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
                if let refused = writer.submit(.transaction(request)) {
                    continuation.resume(throwing: refused)
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
        let writer: Writer
        do {
            writer = try admitWrites("asyncWrite").writer
        } catch {
            completionQueue.async { completion(.failure(error)) }
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
        if let refused = writer.submit(.transaction(request)) {
            completionQueue.async { completion(.failure(refused)) }
        }
    }

    /// Makes every earlier commit durable (one fdatasync, shared with concurrent writers).
    public func sync() throws {
        let writer = try admitWrites("sync()").writer
        if writer.isCurrentThreadWriter {
            throw StoreError(.invalidArgument, "sync() was called from inside a write transaction and would wait for itself; call it after the write returns")
        }
        try submitAndWait(writer, Writer.Request.sync, waitsForSync: true)
    }

    /// Queues the writer request `make` builds around a completion, and blocks until it
    /// completes; rethrows its error, or the writer's refusal (`.closed`, `.suspended`).
    /// `waitsForSync`: the request completes after an fdatasync, so the wait may poll first
    /// (`CommitWaiter`).
    func submitAndWait(_ writer: Writer, _ make: (@escaping Writer.Completion) -> Writer.Request, waitsForSync: Bool = false) throws {
        let done = CommitWaiter()
        let outcome = Locked<(any Error)?>(nil)
        if let refused = writer.submit(
            make({ error in
                outcome.withLock { $0 = error }
                done.signal()
            }), inline: true)
        {
            throw refused
        }
        done.wait(pollNanoseconds: waitsForSync ? writer.pollBudget : UInt64(0), contention: writer.contention)
        if let error = outcome.withLock({ $0 }) { throw error }
    }

    /// Makes every earlier commit durable, suspending instead of blocking.
    public func sync() async throws {
        let writer = try admitWrites("sync()").writer
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let refused = writer.submit(
                .sync({ error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }))
            if let refused { continuation.resume(throwing: refused) }
        }
    }

    // MARK: Maintenance

    /// Flushes the memtables and merges every segment file into the deepest level, dropping
    /// versions no reader can see and tombstones nothing older can hold: afterwards the
    /// directory holds each live key once. Readers and writers carry on meanwhile. Blocks
    /// until done.
    public func compact() throws {
        let writing = try admitWrites("compact()")
        if writing.writer.isCurrentThreadWriter {
            throw StoreError(
                .invalidArgument, "compact() was called from inside a write transaction and would wait for itself; call it after the write returns")
        }
        try submitAndWait(writing.writer, Writer.Request.seal)
        try writing.maintenance.compactAll()
    }

    /// Flushes and compacts as ``compact()-4a08j`` does, suspending instead of blocking.
    public func compact() async throws {
        let writing = try admitWrites("compact()")
        let maintenance = writing.maintenance
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let refused = writing.writer.submit(
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
            if let refused { continuation.resume(throwing: refused) }
        }
    }

    // MARK: Figures

    public func stats() throws -> StoreStats {
        let engine = try admit()
        let versions = engine.versions
        let cache = engine.cache
        // A store opened read-only has no flushes, compactions or stalls to count.
        let maintenance = engine.writing?.maintenance
        let writer = engine.writing?.writer
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
            flushes: maintenance?.flushCount.load(ordering: .relaxed) ?? 0,
            compactions: maintenance?.compactionCount.load(ordering: .relaxed) ?? 0,
            writeStalls: writer?.stallCount.load(ordering: .relaxed) ?? 0,
            writeStallSeconds: Double(writer?.stallMicroseconds.load(ordering: .relaxed) ?? 0) / 1e6,
            isStalled: writer?.isStalled.load(ordering: .relaxed) ?? false)
    }
}
