import Dispatch
import Logging
@_spi(Engine) import StrataFormat
import StrataIO
import Synchronization

/// The single writer queue: every mutation of the store runs here, one group at a time, in
/// the order requests arrive. Requests that arrive while a group is being written or synced
/// wait and form the next group, which shares one WAL write and one fdatasync (group commit).
///
/// One round, for the requests taken from `pending` in arrival order:
///   1. run each transaction body against the head state (every earlier commit, durable or
///      not, plus the transaction's own writes); a body that throws leaves no trace;
///   2. give each non-empty transaction the next sequence, stage its batch with the WAL writer
///      (which frames it), insert it into the memtable (invisible: above the published
///      sequence);
///   3. write the staged records with one write; if any member asked for `.synced` (or
///      `sync()`), fdatasync once;
///   4. publish the group's last sequence, then complete every member.
///
/// Invariants:
/// 1. Everything below "writer-confined" is touched only on `queue` (in a block it runs:
///    `queue.sync` from an inline caller runs on the caller's thread, still one at a time),
///    by whoever holds the drain (`draining`).
/// 2. `lastAssigned >=` the published sequence. Memtable entries above the published sequence
///    belong to the group in flight, or to a group whose write failed (they stay invisible).
/// 3. A group is published only after its bytes are written and, when promised, synced.
/// 4. After a failed WAL write or sync, `failure` is set for good: that group and every later
///    request fail, and the writer never writes again (a failed fsync leaves the log in an
///    unknown state, so retrying it would be a lie). Reopening recovers.
/// 5. One round takes at most `maxGroupRequests` requests, so a round's latency is bounded.
/// 6. While `intake` is not `.open`, nothing is queued: `closeIntake()` empties the queue, and
///    `finishSuspending` fails what it took with `.suspended` after the round in flight has
///    delivered its outcomes (so a failure never overtakes an earlier commit).
/// 7. Gathering (group commit under concurrency): after a synced round of k > 1 requests, the
///    queue's thread waits, before its next round, until k requests are queued again or at
///    most half the last fdatasync's time (between 20 µs and 1 ms) has passed. The writers it
///    just completed need a moment to wake and commit again; without the wait the next round
///    would take whoever was quick and the rest would pay for another fdatasync. Only the
///    queue's thread gathers, never an inline caller (an uncontended commit never waits), and
///    `gatherTarget` is set only while it does.
/// 8. Polling: `pollBudget` is 0 unless the last fdatasync took at most `pollSyncLimit` and
///    no poll found the machine busy in the last second (`contention`); then it is twice
///    that fdatasync's time, at most `maxPoll`. Only a caller blocked on a request that
///    completes after an fdatasync polls (`CommitWaiter`), and the queue's thread while it
///    gathers (invariant 7, for at most the gathering's own limit) before it sleeps; so a
///    `.buffered` commit, an uncontended one (run inline) and an async caller never spend a
///    core waiting.
///
/// The pending queue is not bounded: a synchronous or async caller has at most one request in
/// it (it waits for the outcome), so only `asyncWrite` callers can grow it, and bounding it
/// would mean blocking or failing them, which the callback API promises not to do.
/// Back-pressure comes from the memtable limits instead (`waitForRoom`).
final class Writer: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is confined to `queue` (invariant 1); the shared
    // parts (`pending`, `versions`, counters) are a lock (`Locked`), Sendable classes and atomics.

    typealias Completion = @Sendable ((any Error)?) -> Void

    final class TransactionRequest: Sendable {
        let durability: Durability
        /// Runs the caller's body; stores its result where the caller will find it.
        let run: @Sendable (WriteTransaction) throws -> Void
        let complete: Completion

        init(durability: Durability, run: @escaping @Sendable (WriteTransaction) throws -> Void, complete: @escaping Completion) {
            self.durability = durability
            self.run = run
            self.complete = complete
        }
    }

    enum Request: Sendable {
        case transaction(TransactionRequest)
        case sync(Completion)
        /// Seal the active memtable (if it holds anything) after the round, so a flush can
        /// take it: the first step of `compact()`.
        case seal(Completion)
        case close(Completion)
    }

    /// Whether `submit` queues requests, and what it tells the caller when it does not.
    private enum Intake {
        case open
        /// Suspended: may open again (`resume`).
        case suspended
        /// Closed or retired for good; the error callers get.
        case retired(StoreError)

        /// The error a request meets: nil while open.
        var refusal: StoreError? {
            switch self {
            case .open: nil
            case .suspended: StoreError.suspended()
            case .retired(let error): error
            }
        }
    }

    private struct PendingState {
        var requests: [Request] = []
        var draining = false
        var intake = Intake.open
        /// While the queue's thread gathers (invariant 7): the queue length that wakes it.
        var gatherTarget: Int? = nil
    }

    static let maxGroupRequests = 1024
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    private let queue: DispatchQueue
    private let pending = Locked(PendingState())
    /// Signalled once when the queue reaches `gatherTarget` (invariant 7).
    private let arrivals = DispatchSemaphore(value: 0)
    let versions: VersionSet
    private let failpoints: Failpoints?
    private let logger: Logger

    let maintenance: Maintenance
    private let memtableBudget: Int
    private let memtableHardLimit: Int
    private let level0StopTrigger: Int
    private let memtableRunLength: Int?
    /// The chunks of flushed memtables, for the next ones: at most one memtable's worth.
    let chunkPool: ArenaChunkPool
    /// Invariant 8: how long a caller blocked on a synced request polls before it sleeps,
    /// from the last fdatasync.
    private let pollNanoseconds = Atomic<UInt64>(0)
    /// Invariant 8: when a poll last found the machine busy.
    let contention = Contention()
    /// Polling pays only where a thread's wake-up is a large share of the wait: on a disk
    /// whose fdatasync takes milliseconds, the wake-up is lost in it.
    static let pollSyncLimit: UInt64 = 500_000
    static let maxPoll: UInt64 = 250_000
    let stallCount = Atomic<Int>(0)
    let stallMicroseconds = Atomic<Int>(0)
    let isStalled = Atomic<Bool>(false)
    /// Set while a suspension is under way: a round waiting for room gives up (a suspension
    /// also pauses the flushes it would wait for).
    private let suspending = Atomic<Bool>(false)

    // Writer-confined (invariant 1). Unchecked: only the writer's one thread touches these,
    // so the runtime's exclusivity check (a thread-local lookup per access, several per
    // commit) guards nothing; ThreadSanitizer still sees every access.
    @exclusivity(unchecked) private var memtable: MemTable
    @exclusivity(unchecked) private var lastAssigned: UInt64
    @exclusivity(unchecked) private var failure: StoreError? = nil
    private let wal: WALWriter
    @exclusivity(unchecked) private var round: [(request: Request, error: (any Error)?)] = []
    /// The size of the last round if it synced, else 0: what the next round gathers for
    /// (invariant 7), for at most half of `wal.lastSyncNanoseconds`.
    @exclusivity(unchecked) private var lastSyncedRoundSize = 0
    /// The round's commits, kept only while someone observes (`listeners.isActive`).
    @exclusivity(unchecked) private var roundWrites: [CommittedWrites] = []
    /// The last committed transaction's batch buffer, for the next transaction to build in.
    @exclusivity(unchecked) private var spareBatch: BatchBuffer? = nil
    private static let keptBatchCapacity = 1 << 20
    /// Memtable chunks the pool sets up ahead of the writer (`ArenaChunkPool.spares`): at a
    /// bulk load's pace a 2 MiB chunk lasts about 4 ms and setting one up takes well under
    /// 1 ms, so two keep well ahead, for 4 MiB held while the store writes.
    static let spareArenaChunks = 2
    /// Observations and change feeds: told of each round's commits once published.
    private let listeners: CommitListeners

    init(
        memtable: MemTable, lastSequence: UInt64, wal: WALWriter, maintenance: Maintenance, options: StoreOptions,
        listeners: CommitListeners
    ) {
        self.listeners = listeners
        self.memtable = memtable
        self.maintenance = maintenance
        self.memtableBudget = max(options.memtableBytes, 64 << 10)
        self.memtableHardLimit = max(options.memtableHardLimitBytes ?? 4 * memtableBudget, 2 * memtableBudget)
        self.level0StopTrigger = max(options.level0StopWritesTrigger, options.level0CompactionTrigger + 1, 2)
        self.memtableRunLength = options.memtableRunLength
        self.chunkPool = ArenaChunkPool(
            limit: max(options.memtableBytes, 64 << 10) / Arena.chunkBytes, spares: Writer.spareArenaChunks)
        memtable.useChunkPool(chunkPool)
        self.lastAssigned = lastSequence
        self.wal = wal
        self.versions = maintenance.versions
        self.failpoints = options.failpoints
        self.logger = options.logger
        self.queue = DispatchQueue(label: "strata.writer", qos: .userInitiated)
        queue.setSpecific(key: Writer.queueKey, value: ObjectIdentifier(self))
    }

    /// True when the calling code runs inside this writer's queue (a transaction body):
    /// a synchronous write from there would wait for itself.
    var isCurrentThreadWriter: Bool {
        DispatchQueue.getSpecific(key: Writer.queueKey) == ObjectIdentifier(self)
    }

    /// Queues a request. Returns nil once queued; otherwise, without queueing, the error the
    /// caller gets: `.suspended` while the writer is suspended, `.closed` once it is closing.
    ///
    /// `inline`: the caller blocks until the request completes anyway (a synchronous write or
    /// sync). When no round is under way, the caller's own thread runs the round, through
    /// `queue.sync`, which runs the block on the calling thread: an uncontended commit pays no
    /// thread hand-off, which on a busy machine (the other core taken) cost more than the
    /// commit itself. Only one round runs inline; what arrived meanwhile goes to the queue's
    /// own thread, so a caller never works for others for long.
    func submit(_ request: Request, inline: Bool = false) -> StoreError? {
        let isClose: Bool
        if case .close = request { isClose = true } else { isClose = false }
        var wakeGatherer = false
        let outcome: Result<Bool, StoreError> = pending.withLock { state in
            if let refusal = state.intake.refusal { return .failure(refusal) }
            state.requests.append(request)
            if isClose { state.intake = .retired(StoreError.closed()) }
            if state.draining {
                if let target = state.gatherTarget, state.requests.count >= target {
                    state.gatherTarget = nil
                    wakeGatherer = true
                }
                return .success(false)
            }
            state.draining = true
            return .success(true)
        }
        if wakeGatherer { arrivals.signal() }
        switch outcome {
        case .failure(let error): return error
        case .success(let startDrain):
            if startDrain {
                if inline {
                    queue.sync { self.drain(rounds: 1) }
                } else {
                    queue.async { self.drain() }
                }
            }
            return nil
        }
    }

    /// A synchronous transaction's fast path: when the writer is open and idle (nothing
    /// queued, no round under way), runs `run` as a round of its own on the calling thread and
    /// returns its outcome (`.success` once committed as `durability` asks, or the body's error
    /// or the commit's). Returns nil, having done nothing, when the writer is busy or not open:
    /// the caller then queues a request (`submit`) as usual, which waits its turn or reports
    /// the refusal.
    ///
    /// The same round `submit(_:inline:)` runs on the caller's thread, without what a queued
    /// request needs to cross threads: no request, result or body object, no closure that
    /// escapes, no semaphore. A single put costs about a third less this way, and that is how
    /// most app code writes. What arrives during the round is handed to the queue's thread after it.
    func commitInline(_ durability: Durability, _ run: (WriteTransaction) throws -> Void) -> Result<Void, any Error>? {
        let idle: Bool = pending.withLock { state in
            guard case .open = state.intake, !state.draining, state.requests.isEmpty else { return false }
            state.draining = true
            return true
        }
        guard idle else { return nil }
        try? failpoints?.handler(.inlineRoundAdmitted)
        // `queue.sync` runs the block here, on the caller's thread, one block at a time with the
        // queue's own (invariant 1). Its plain form, with the outcome in a local: the generic,
        // throwing one wraps the block once more.
        var result: Result<Void, any Error> = .success(())
        queue.sync {
            var outcome: (any Error)?
            var needsSync = false
            // A suspension or a close may have come between the admission above and this
            // block: it did not wait for this round, which it could not see, and may have
            // made the log durable and let go of the store's files already. The round must not
            // write after it.
            let refused = pending.withLock { $0.intake.refusal }
            if let refused {
                outcome = refused
            } else if let failure {
                outcome = readOnlyError(failure)
            } else {
                outcome = runTransaction(durability, run, needsSync: &needsSync)
            }
            // Also after a failure: it drops what a failed step left staged (invariant 4).
            if refused == nil { writeAndPublish(needsSync: needsSync) }
            outcome = outcome ?? failure
            lastSyncedRoundSize = 0
            checkInvariants()
            // Releases the drain, or hands what arrived meanwhile to the queue's thread.
            drain(rounds: 0)
            if let outcome { result = .failure(outcome) }
        }
        return result
    }

    // MARK: Suspension (any thread but the writer's)

    /// The first half of a suspension: stops taking requests and takes the queued ones that
    /// have not started, for `finishSuspending`. Nil unless the writer was open.
    func closeIntake() -> [Request]? {
        suspending.store(true, ordering: .releasing)
        let dropped: [Request]? = pending.withLock { state in
            guard case .open = state.intake else { return nil }
            state.intake = .suspended
            defer { state.requests.removeAll() }
            return state.requests
        }
        if dropped == nil { suspending.store(false, ordering: .releasing) }
        // A round waiting for room wakes now rather than at its next timeout.
        maintenance.progress.signal()
        return dropped
    }

    /// The second half: lets the round in flight finish, fails `dropped` with `.suspended`,
    /// and makes every commit durable (a sync mark, docs/format/wal.md). Returns the error of
    /// that last step, if any; the writer is then in failure (invariant 4).
    func finishSuspending(dropped: [Request]) -> StoreError? {
        defer { suspending.store(false, ordering: .releasing) }
        // Queued behind the drain in flight (the queue is serial), so its outcomes are
        // delivered first.
        return queue.sync {
            for request in dropped { fail(request, StoreError.suspended()) }
            // Last, after the sync mark (whose write may make one): no file changes once the
            // store is suspended, and another process that opens it meanwhile finds no empty
            // segment this writer would roll to (WALWriter invariant 9).
            defer { wal.discardSegmentAhead() }
            guard failure == nil else { return failure }
            do {
                try wal.writeSyncMarkIfNeeded(sequence: lastAssigned)
            } catch {
                enterFailure(error, while: "syncing the WAL to suspend")
            }
            return failure
        }
    }

    /// How long a caller blocked on a request that completes after an fdatasync polls for
    /// its outcome before sleeping (invariant 8; `CommitWaiter`).
    var pollBudget: UInt64 { contention.isRecent ? 0 : pollNanoseconds.load(ordering: .relaxed) }

    /// The poll budget after an fdatasync that took `nanoseconds` (invariant 8).
    static func pollBudget(forSyncOf nanoseconds: UInt64) -> UInt64 {
        nanoseconds <= pollSyncLimit ? min(2 * nanoseconds, maxPoll) : 0
    }

    /// Requests queued and not yet taken by a round; for tests.
    var queuedRequestCount: Int { pending.withLock { $0.requests.count } }

    /// Takes requests again after a suspension.
    func resume() {
        pending.withLock { state in
            if case .suspended = state.intake { state.intake = .open }
        }
    }

    /// Takes no more requests, ever, and closes the WAL without writing to it: the store was
    /// suspended (so everything is durable already) and either closes or reloads its state
    /// from disk, where another process may have written since. `error` is what later callers get.
    func retire(with error: StoreError) {
        let dropped = pending.withLock { state -> [Request] in
            state.intake = .retired(error)
            defer { state.requests.removeAll() }
            return state.requests
        }
        queue.sync {
            for request in dropped { fail(request, error) }
            try? wal.close()
        }
    }

    /// Whether the active WAL segment is as this writer left it: nothing written past its
    /// end. Part of `resume()`'s check for another process's writes.
    func walIsUntouched() throws -> Bool {
        try queue.sync { try wal.isUntouchedPastEnd() }
    }

    private func fail(_ request: Request, _ error: StoreError) {
        switch request {
        case .transaction(let transaction): transaction.complete(error)
        case .sync(let completion), .seal(let completion), .close(let completion): completion(error)
        }
    }

    /// Runs rounds until nothing is pending, or hands the rest to the queue's thread after
    /// `rounds` rounds (an inline caller, see `submit`; 0 after `commitInline`'s own round).
    /// Holds the drain (`draining`) throughout.
    private func drain(rounds limit: Int = .max) {
        var done = 0
        while true {
            // Only the queue's own thread gathers (invariant 7).
            if limit == .max { gatherBeforeRound() }
            let batch: [Request]? = pending.withLock { state in
                if state.requests.isEmpty {
                    state.draining = false
                    return nil
                }
                // Still draining: the queue's thread takes over.
                if done == limit { return [] }
                let count = min(state.requests.count, Writer.maxGroupRequests)
                let taken = Array(state.requests.prefix(count))
                state.requests.removeFirst(count)
                return taken
            }
            guard let batch else { return }
            if batch.isEmpty {
                queue.async { self.drain() }
                return
            }
            process(batch)
            done += 1
        }
    }

    /// Invariant 7: after a synced round of several requests, waits briefly for as many to
    /// be queued again, so they share the next fdatasync.
    private func gatherBeforeRound() {
        let expected = lastSyncedRoundSize
        guard expected > 1 else { return }
        lastSyncedRoundSize = 0
        let limit = min(max(wal.lastSyncNanoseconds / 2, 20_000), 1_000_000)
        // Invariant 8: the writers just completed are polling, so their requests come within
        // microseconds; sleeping for them would cost a wake-up as long as the wait.
        let poll = min(pollBudget, limit)
        if poll > 0 {
            let gathered = Polling.poll(for: poll, contention: contention) {
                pending.withLock { state in
                    guard case .open = state.intake else { return true }
                    return state.requests.count >= expected
                }
            }
            if gathered { return }
        }
        let waits: Bool = pending.withLock { state in
            guard case .open = state.intake, state.requests.count < expected else { return false }
            state.gatherTarget = expected
            return true
        }
        guard waits else { return }
        if arrivals.wait(timeout: .now() + .nanoseconds(Int(limit - poll))) == .timedOut {
            let signalled: Bool = pending.withLock { state in
                // A submit that cleared the target has signalled, or is about to.
                guard state.gatherTarget != nil else { return true }
                state.gatherTarget = nil
                return false
            }
            // Take that signal now, so it cannot end the next gathering early.
            if signalled { arrivals.wait() }
        }
    }

    // MARK: One round (writer-confined)

    private func process(_ batch: [Request]) {
        round.removeAll(keepingCapacity: true)
        var needsSync = false
        var closeCompletion: Completion? = nil
        var sealCompletions: [Completion] = []

        // Every request's outcome, failures included, is delivered in arrival order at the
        // end of the round: a failure never overtakes an earlier commit.
        for request in batch {
            switch request {
            case .transaction(let transaction):
                if let failure {
                    round.append((request, readOnlyError(failure)))
                    continue
                }
                round.append((request, runTransaction(transaction.durability, transaction.run, needsSync: &needsSync)))
            case .sync:
                if let failure {
                    round.append((request, readOnlyError(failure)))
                    continue
                }
                needsSync = true
                round.append((request, nil))
            case .seal(let completion):
                sealCompletions.append(completion)
            case .close(let completion):
                closeCompletion = completion
            }
        }

        writeAndPublish(needsSync: needsSync)
        lastSyncedRoundSize = needsSync && failure == nil ? batch.count : 0
        checkInvariants()

        let groupError: (any Error)? = failure
        for (request, error) in round {
            let outcome = error ?? groupError
            switch request {
            case .transaction(let transaction): transaction.complete(outcome)
            case .sync(let completion): completion(outcome)
            case .seal, .close: break
            }
        }
        round.removeAll(keepingCapacity: true)

        if !sealCompletions.isEmpty {
            // After the round, so the sealed table holds exactly the records of the WAL
            // segments before the roll.
            var outcome: (any Error)? = failure.map(readOnlyError)
            if outcome == nil && memtable.count > 0 {
                do { try seal() } catch { outcome = error }
            }
            for completion in sealCompletions { completion(outcome) }
        }

        if let closeCompletion {
            closeCompletion(finishClosing())
        }
    }

    /// Steps 1 and 2 of a round for one transaction: runs `run`, and stages and inserts what
    /// it wrote. Returns the transaction's outcome if it already has one: the body's own
    /// error, or why the commit was refused; nil when it completes with its group.
    private func runTransaction(
        _ durability: Durability, _ run: (WriteTransaction) throws -> Void, needsSync: inout Bool
    ) -> (any Error)? {
        let transaction = WriteTransaction(head: versions.published.latest().version, version: lastAssigned, batch: takeBatchBuffer())
        do {
            try run(transaction)
            try transaction.checkScanErrors()
            transaction.end()
        } catch {
            // The body threw: nothing of it is applied, and its error goes back unchanged.
            transaction.end()
            return error
        }
        if transaction.isEmpty {
            // Nothing to write, but it read state that may not be durable yet: it completes
            // with the group.
            return nil
        }
        // A full memtable is sealed before the round's first record, so the WAL segments
        // before the roll hold exactly the sealed table's records.
        if !wal.hasStagedRecords && memtable.approximateBytes >= memtableBudget {
            do {
                try seal()
            } catch {
                return error
            }
        }
        // The segment rolls before the round's first record, never for a round that writes
        // nothing (a sync or a close must not create a segment).
        if !wal.hasStagedRecords && wal.needsRoll {
            do {
                try failpoints?.handler(.beforeSegmentRoll)
                try wal.roll(lastSequence: lastAssigned)
            } catch {
                enterFailure(error, while: "starting a new WAL segment")
                return failure
            }
        }
        // Only a crafted manifest or log gets a store this far (2^64 - 1 commits); refuse the
        // commit rather than trap on the `+ 1`.
        guard lastAssigned < UInt64.max else { return StoreError.sequencesExhausted() }
        let sequence = lastAssigned + 1
        let batch = transaction.finishBatch(sequence: sequence, syncedThrough: wal.syncedThrough)
        // Each write into the memtable from the batch's bytes (invisible until the group is
        // published); the log gets the same bytes whole.
        let table = memtable
        transaction.entries.withUnsafeBufferPointer { entries in
            if let order = transaction.keyOrder() {
                table.insert(count: entries.count, sequence: sequence) {
                    (transaction.key(of: entries[order[$0]]), transaction.value(of: entries[order[$0]]))
                }
            } else {
                table.insert(count: entries.count, sequence: sequence) { (transaction.key(of: entries[$0]), transaction.value(of: entries[$0])) }
            }
        }
        wal.stage(batch.payload)
        keepBatchBuffer(batch)
        lastAssigned = sequence
        if listeners.isActive { roundWrites.append(CommittedWrites(sequence: sequence, entries: transaction.committedEntries())) }
        if durability == .synced { needsSync = true }
        return nil
    }

    /// A buffer for the next transaction's batch: the last one's, if it was kept.
    private func takeBatchBuffer() -> BatchBuffer {
        guard let spare = spareBatch else { return BatchBuffer() }
        spareBatch = nil
        spare.reset()
        return spare
    }

    /// Keeps a committed transaction's buffer for the next one, unless it is large: one big
    /// transaction should not pin its size for the store's lifetime.
    private func keepBatchBuffer(_ batch: BatchBuffer) {
        if batch.capacity <= Writer.keptBatchCapacity { spareBatch = batch }
    }

    /// Steps 3 and 4 of a round, before its outcomes are delivered: writes what the round
    /// staged, syncs it if `needsSync`, and publishes it; or enters failure (invariant 4) and
    /// drops what was staged.
    private func writeAndPublish(needsSync: Bool) {
        if failure == nil {
            do {
                try failpoints?.handler(.beforeWALWrite)
                try wal.writeStaged(syncFollows: needsSync)
                try failpoints?.handler(.afterWALWriteBeforeSync)
                if needsSync {
                    try wal.sync()
                    pollNanoseconds.store(Writer.pollBudget(forSyncOf: wal.lastSyncNanoseconds), ordering: .relaxed)
                }
                try failpoints?.handler(.beforePublish)
                versions.publish(sequence: lastAssigned)
                // Published first, so an observer that reads in response sees these commits.
                if !roundWrites.isEmpty { listeners.committed(roundWrites) }
            } catch {
                enterFailure(error, while: needsSync ? "writing and syncing the WAL" : "writing the WAL")
            }
        }
        roundWrites.removeAll(keepingCapacity: true)
        // A failed round (a failed roll, write or sync) never writes what it staged.
        if failure != nil { wal.discardStaged() }
    }

    /// Seals the active memtable: a new WAL segment, a new empty memtable, the old one handed
    /// to maintenance for its flush. Waits first if the memtables are at their hard limit.
    /// Throws without sealing when that wait fails; enters failure if the roll fails.
    private func seal() throws {
        try waitForRoom()
        do {
            try failpoints?.handler(.beforeSegmentRoll)
            try wal.roll(lastSequence: lastAssigned)
        } catch {
            enterFailure(error, while: "starting a new WAL segment for a new memtable")
            throw failure!
        }
        memtable.checkInvariants()
        let sealed = SealedMemTable(table: memtable, lastSequence: lastAssigned, nextLogNumber: wal.segmentNumber)
        // The next table will likely hold about as many keys as this one: its index starts at
        // the size this one's needed, so it need not grow (MemTableHashIndex.capacity).
        let fresh = MemTable(
            runLength: memtableRunLength, chunkPool: chunkPool,
            indexCapacity: MemTableHashIndex.capacity(expecting: memtable.distinctKeys, maxBytes: memtableBudget / 4))
        memtable = fresh
        versions.sealMemtable(sealed.table, replacingWith: fresh)
        maintenance.enqueueFlush(sealed)
    }

    /// True while a new memtable must not be started: the memtables hold the hard limit, or
    /// level 0 holds so many files that reads would slow down.
    private var mustWait: Bool {
        let version = versions.published.latest().version
        // Only flushes of sealed tables can bring the memory down: with none pending, the
        // active table alone is over the limit (one huge transaction, or a long log replayed
        // at open), and sealing it is the way out, so waiting would never end.
        let memoryFull = version.memtableBytes >= memtableHardLimit && !version.sealed.isEmpty
        return memoryFull || version.levels[0].count >= level0StopTrigger
    }

    /// Back-pressure: while `mustWait`, wait for a flush or a compaction. Work that failed is
    /// retried once; if it fails again, the write fails with its error (a full disk, say)
    /// instead of waiting for ever.
    private func waitForRoom() throws {
        guard mustWait else { return }
        let start = DispatchTime.now()
        isStalled.store(true, ordering: .relaxed)
        maintenance.writerWaits(true)
        stallCount.add(1, ordering: .relaxed)
        logger.debug("writes wait for a flush or compaction", metadata: ["memtableLimit": "\(memtableHardLimit)", "level0Limit": "\(level0StopTrigger)"])
        defer {
            isStalled.store(false, ordering: .relaxed)
            maintenance.writerWaits(false)
            stallMicroseconds.add(Int((DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1000), ordering: .relaxed)
        }
        var retried = false
        // Work skipped while the store was in the background is due now.
        maintenance.schedule()
        while mustWait {
            if suspending.load(ordering: .acquiring) { throw StoreError.suspended() }
            if let failure = maintenance.failure {
                guard !retried else {
                    throw StoreError(
                        failure.code, "the write waited for a flush or compaction, and it failed: \(failure.message)", file: failure.file,
                        underlying: failure.underlying)
                }
                retried = true
                maintenance.retry()
            }
            _ = maintenance.progress.wait(timeout: .now() + .milliseconds(100))
        }
    }

    private func enterFailure(_ error: any Error, while doing: String) {
        let mapped = StoreError.wrapping(error, while: doing)
        logger.error("write failed; the store is read-only until reopened", metadata: ["error": "\(mapped)"])
        failure = mapped
    }

    private func readOnlyError(_ cause: StoreError) -> StoreError {
        StoreError(
            .readOnly, "the store refuses writes after an earlier failure (\(cause.message)); close and reopen it to recover",
            file: cause.file, underlying: cause.underlying)
    }

    /// Invariant 2, and the published state's agreement with this writer's; compiled into
    /// debug builds only. After each round.
    private func checkInvariants() {
        #if STRATA_INTERNAL_CHECKS
            let view = versions.published.latest()
            precondition(view.sequence <= lastAssigned, "Writer invariant 2: published \(view.sequence) is above the last assigned \(lastAssigned)")
            precondition(view.version.memtable === memtable, "Writer: the published Version does not hold the writer's active memtable")
            precondition(!wal.hasStagedRecords, "Writer: a round ended with WAL records staged but not written")
            precondition(pending.withLock { $0.gatherTarget == nil }, "Writer invariant 7: a gathering target outlived its wait")
            if failure == nil {
                precondition(view.sequence == lastAssigned, "Writer invariant 3: a round ended without publishing what it wrote")
            }
        #endif
    }

    /// Makes buffered commits durable, marks the log synced (so damage to its last records is
    /// never taken for a torn write), and closes it. Returns the first error.
    private func finishClosing() -> (any Error)? {
        var result: (any Error)? = nil
        if failure == nil {
            do { try wal.writeSyncMarkIfNeeded(sequence: lastAssigned) } catch {
                enterFailure(error, while: "syncing the WAL at close")
                result = failure
            }
        }
        do { try wal.close() } catch { result = result ?? StoreError.wrapping(error, while: "closing the WAL") }
        return result
    }
}
