import Dispatch
import Logging
@_spi(Engine) import StrataFormat
import StrataIO
import Synchronization

/// A memtable the writer has sealed, waiting to be flushed.
struct SealedMemTable: Sendable {
    let table: MemTable
    /// The newest sequence in the table.
    let lastSequence: UInt64
    /// The WAL segment the writer moved to when it sealed the table: once the table is in a
    /// segment file, every older WAL segment is obsolete.
    let nextLogNumber: UInt64
}

/// Flushes sealed memtables to level-0 segment files on one background thread and compacts
/// levels on another, so a flush never waits for a long merge. It owns the threads, the
/// scheduling and the running jobs; what the jobs produce is installed through the
/// `VersionSet`, which owns the persisted state and picks the compactions.
///
/// Invariants:
/// 1. Sealed memtables are flushed oldest first, so `logNumber` and `lastSequence` only grow.
/// 2. The slow parts of a flush or a merge (building and writing files) run outside the
///    version set's install lock; only numbering files and installing results take it.
/// 3. Only the compaction thread removes files from levels, so a merge's inputs are still
///    live when it installs.
/// 4. A file leaves a level only through a durable edit; the file itself goes when no Version
///    holds it (SegmentTable invariant 2).
/// 5. While `paused`, no job runs past its next check (`checkNotPaused`): a flush or merge in
///    progress is abandoned, its outputs removed before the edit that would name them, and
///    never installed. A flush abandoned loses nothing: its memtable stays queued and its
///    records stay in the WAL until a later flush installs it.
/// 6. While `inBackground`, no compaction starts unless writes would otherwise stop for it.
final class Maintenance: Sendable {
    /// Flushes and compactions each run on a thread of their own, below the priority of
    /// readers and the writer (BackgroundThread).
    let flushThread = BackgroundThread(name: "strata.flush")
    let compactionThread = BackgroundThread(name: "strata.compaction")
    /// Signalled when each thread ends; for tests.
    var threadsEnded: [DispatchSemaphore] { [flushThread.ended, compactionThread.ended] }
    let versions: VersionSet
    private let fileSystem: any FileSystem
    private let directory: String
    private let options: StoreOptions
    private let logger: Logger
    private let cache: BlockCache
    private let oldestPinned: @Sendable () -> UInt64?

    private let pending = Locked<[SealedMemTable]>([])
    private let lastFailure = Locked<StoreError?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let paused = Atomic<Bool>(false)
    private let inBackground = Atomic<Bool>(false)
    /// Level-0 file count at which the writer stops writes (Writer.level0StopTrigger).
    private let level0StopTrigger: Int
    /// Signalled whenever a flush or compaction is installed or fails, for a writer waiting
    /// for room.
    let progress = DispatchSemaphore(value: 0)

    let flushCount = Atomic<Int>(0)
    let compactionCount = Atomic<Int>(0)
    /// Counts the writer's entries into and exits from its waits for room: odd while it
    /// waits. Compaction picks tell an idle writer from a waiting one by it.
    private let writerWaitCount = Atomic<Int>(0)
    /// A flush or compaction pass is queued and has not started (`requestFlush`).
    private let flushQueued = Atomic<Bool>(false)
    private let compactionQueued = Atomic<Bool>(false)

    init(
        directory: String, options: StoreOptions, versions: VersionSet, cache: BlockCache,
        oldestPinned: @escaping @Sendable () -> UInt64?
    ) {
        self.fileSystem = options.fileSystem
        self.directory = directory
        self.options = options
        self.logger = options.logger
        self.versions = versions
        self.cache = cache
        self.oldestPinned = oldestPinned
        self.level0StopTrigger = max(options.level0StopWritesTrigger, options.level0CompactionTrigger + 1, 2)
    }

    var failure: StoreError? { lastFailure.withLock { $0 } }
    var pendingCount: Int { pending.withLock { $0.count } }

    // MARK: Requests (any thread)

    /// Queues a sealed memtable and starts the work (inline in tests, see StoreOptions).
    func enqueueFlush(_ sealed: SealedMemTable) {
        pending.withLock { $0.append(sealed) }
        schedule()
    }

    /// Runs whatever is due: flushes, then compactions.
    func schedule() {
        if options.runsBackgroundWorkInline {
            flushThread.sync { flushDue() }
            compactionThread.sync { compactDue() }
        } else {
            requestFlush()
            // Also here, for work due without a flush (an open that finds level 0 full).
            requestCompaction()
        }
    }

    /// Queues a flush pass unless one is queued and not yet started: a pass flushes every
    /// sealed table, so a second one queued behind it would find nothing. This bounds the
    /// flush thread's queue to one pass (plus the blocking calls of `compactAll` and
    /// `shutdown`, one per caller).
    private func requestFlush() {
        guard flushQueued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        flushThread.async {
            self.flushQueued.store(false, ordering: .releasing)
            self.flushDue()
        }
    }

    /// Queues a compaction pass unless one is queued and not yet started; a pass runs every
    /// compaction that is due when it looks. Bounds the compaction thread's queue the same way.
    private func requestCompaction() {
        guard compactionQueued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        compactionThread.async {
            self.compactionQueued.store(false, ordering: .releasing)
            self.compactDue()
        }
    }

    /// The writer starts (`true`) or ends a wait for room; on the writer queue.
    func writerWaits(_ waiting: Bool) {
        let before = writerWaitCount.add(1, ordering: .acquiringAndReleasing).oldValue
        assert((before % 2 == 0) == waiting, "Maintenance: the writer's waits for room do not pair up")
    }

    /// Forgets the last failure and runs the due work again.
    func retry() {
        lastFailure.withLock { $0 = nil }
        schedule()
    }

    /// Flushes every sealed memtable, then merges every file into one level. Blocks.
    func compactAll() throws {
        try compactionThread.sync { try compactAllOnThread() }
    }

    /// `compactAll`, for a caller already on `compactionThread`.
    func compactAllOnThread() throws {
        precondition(compactionThread.isCurrent, "compactAllOnThread runs on the compaction thread")
        do {
            try flushThread.sync { try flushPending() }
            try checkNotPaused()
            try fullCompaction()
        } catch is MaintenanceInterrupted {
            throw StoreError(.suspended, "the store was suspended before the compaction finished; nothing of it was installed. Call resume() and retry")
        } catch {
            throw recordFailure(error, while: "compacting the store")
        }
    }

    // MARK: Lifecycle

    /// Asks every job to stop at its next check (invariant 5). A merge is abandoned, not
    /// finished: a suspension must not wait for it. `waitUntilIdle` waits for them.
    func requestPause() {
        paused.store(true, ordering: .releasing)
    }

    /// Waits until no job runs. Any thread but the maintenance threads.
    func waitUntilIdle() {
        flushThread.sync {}
        compactionThread.sync {}
    }

    /// Runs work again after `pause()`, starting with whatever is due.
    func unpause() {
        paused.store(false, ordering: .releasing)
        schedule()
    }

    /// In the background no compaction starts unless writes would stop for it (invariant 6);
    /// flushes go on. Only sets the flag (cheap enough to set under the store's lifecycle
    /// lock, together with the phase); a caller leaving the background calls `schedule()`
    /// afterwards for what was skipped.
    func holdBackCompactions(_ hold: Bool) {
        inBackground.store(hold, ordering: .releasing)
    }

    private var isPaused: Bool { paused.load(ordering: .acquiring) }

    /// Whether compactions are held back (invariant 6); for tests.
    var isInBackground: Bool { inBackground.load(ordering: .acquiring) }

    /// Throws `MaintenanceInterrupted` once `pause()` was called: the job in progress stops.
    private func checkNotPaused() throws {
        if isPaused { throw MaintenanceInterrupted() }
    }

    /// Whether a compaction may start now (invariants 5 and 6).
    private var compactionAllowed: Bool {
        if stopping.load(ordering: .relaxed) || isPaused { return false }
        guard inBackground.load(ordering: .acquiring) else { return true }
        return versions.published.latest().version.levels[0].count >= level0StopTrigger
    }

    /// Stops starting new work and waits for the running jobs. Called once, at close.
    ///
    /// A merge already running finishes and is installed rather than thrown away. Abandoning
    /// it made a store that is opened briefly and often (an app extension, a command-line
    /// tool, a benchmark's read phases) restart the same merge at every open and never
    /// finish it, so its reads kept paying for every level-0 file. A process killed
    /// mid-merge loses nothing either way: the merge's outputs count only once the manifest
    /// names them.
    ///
    /// `writingToDisk` is false for a store closed while suspended, or retired by a reload:
    /// another process may own the directory by then, so nothing is written, not even the
    /// manifest's close mark.
    func shutdown(writingToDisk: Bool = true) {
        stopping.store(true, ordering: .relaxed)
        flushThread.sync {}
        compactionThread.sync {}
        if writingToDisk { versions.closeManifest() } else { versions.closeManifestWithoutWriting() }
        progress.signal()
    }

    // MARK: Work

    private func flushDue() {
        do {
            try flushPending()
        } catch is MaintenanceInterrupted {
            // Paused: the table stays queued for the flush after `unpause()`.
        } catch {
            _ = recordFailure(error, while: "flushing a memtable in the background")
        }
    }

    private func compactDue() {
        do {
            while compactionAllowed,
                let plan = versions.pickCompaction(
                    writerWaits: options.runsBackgroundWorkInline ? nil : writerWaitCount.load(ordering: .acquiring))
            {
                try compact(plan)
                lastFailure.withLock { $0 = nil }
            }
        } catch is MaintenanceInterrupted {
            // Paused: the merge was abandoned and is picked again after `unpause()`.
        } catch {
            _ = recordFailure(error, while: "compacting in the background")
        }
    }

    private func recordFailure(_ error: any Error, while doing: String) -> StoreError {
        let mapped = StoreError.wrapping(error, while: doing)
        logger.error("background work failed; it is retried at the next flush", metadata: ["error": "\(mapped)"])
        lastFailure.withLock { $0 = mapped }
        progress.signal()
        return mapped
    }

    private func flushPending() throws {
        while !stopping.load(ordering: .relaxed), let sealed = pending.withLock({ $0.first }) {
            try checkNotPaused()
            try flush(sealed)
            pending.withLock { _ = $0.removeFirst() }
            lastFailure.withLock { $0 = nil }
            progress.signal()
            // Each new level-0 file may make a compaction due: ask now, not once the queue is
            // empty. Under a steady writer the queue is never empty for long, and level 0
            // used to grow until writes stopped before any merge began.
            if !options.runsBackgroundWorkInline && !compactionThread.isCurrent {
                requestCompaction()
            }
        }
    }

    /// Writes a sealed memtable as one level-0 file and installs it. On `flushThread`.
    private func flush(_ sealed: SealedMemTable) throws {
        try options.failpoints?.handler(.beforeFlush)
        var output = SegmentOutput(level: 0, options: options, streamingTo: outputDestination())
        var visited = 0
        do {
            try sealed.table.forEachNode { node in
                visited &+= 1
                if visited % MaintenanceInterrupted.checkInterval == 0 { try checkNotPaused() }
                guard node.sequence <= sealed.lastSequence else { return }
                try output.add(node)
            }
        } catch {
            // Paused or failed midway: the part of the file written so far goes.
            output.abandon()
            throw error
        }
        var edit = VersionEdit(logNumber: sealed.nextLogNumber, lastSequence: sealed.lastSequence)
        var opened: [SegmentTable] = []
        if output.entryCount > 0 {
            let meta = try output.finish()
            try fileSystem.syncDirectory(directory)
            edit.added = [meta]
            opened = [try SegmentTable.open(meta, directory: directory, fileSystem: fileSystem, cache: cache)]
        }
        try options.failpoints?.handler(.beforeManifestEdit)
        do {
            try checkNotPaused()
        } catch {
            // Abandoned before the edit: nobody will ever name the file.
            if let number = edit.added.first?.fileNumber {
                try? fileSystem.removeFile(fileSystem.path(directory, ManifestFormat.segmentFileName(number)))
            }
            throw error
        }
        try versions.logAndApply(edit, opened: opened, flushed: sealed.table)
        flushCount.add(1, ordering: .relaxed)
    }

    /// Where flushes and merges stream their files: the store's directory, under numbers
    /// the version set hands out. `allocated` hears of each number handed out.
    private func outputDestination(allocated: @escaping (UInt64) -> Void = { _ in }) -> SegmentOutput.Destination {
        SegmentOutput.Destination(fileSystem: fileSystem, directory: directory) { [versions] in
            let number = versions.allocateFileNumber()
            allocated(number)
            return number
        }
    }

    // MARK: Compaction

    /// Flushes every sealed memtable, then merges every file into the deepest non-empty level
    /// (at least level 1).
    private func fullCompaction() throws {
        if let plan = versions.fullCompactionPlan() { try compact(plan) }
    }

    /// True when the plan's upper-level files overlap neither each other nor anything in the
    /// output level: they can move down by a manifest edit alone, without being rewritten
    /// (keys loaded in order never need merging).
    private func canMoveWithoutMerging(_ plan: CompactionPlan) -> Bool {
        guard plan.inputs.count == 2, plan.inputs[1].files.isEmpty, plan.outputLevel == plan.inputs[0].level + 1 else { return false }
        let files = plan.inputs[0].files.sorted { $0.meta.smallestKey.lexicographicallyPrecedes($1.meta.smallestKey) }
        return zip(files, files.dropFirst()).allSatisfy { $0.meta.largestKey.lexicographicallyPrecedes($1.meta.smallestKey) }
    }

    private func move(_ plan: CompactionPlan) throws {
        try checkNotPaused()
        let files = plan.inputs[0].files
        let moved = files.map { file -> SegmentMeta in
            var meta = file.meta
            meta.level = plan.outputLevel
            return meta
        }
        // The same files, opened again under their new level (a table's record is immutable).
        let reopened = try moved.map { try SegmentTable.open($0, directory: directory, fileSystem: fileSystem, cache: cache) }
        try options.failpoints?.handler(.beforeManifestEdit)
        try versions.logAndApply(
            VersionEdit(added: moved, removed: files.map { (level: plan.inputs[0].level, fileNumber: $0.number) }),
            opened: reopened)
        compactionCount.add(1, ordering: .relaxed)
        progress.signal()
    }

    private func compact(_ plan: CompactionPlan) throws {
        try options.failpoints?.handler(.beforeCompaction)
        if canMoveWithoutMerging(plan) {
            try move(plan)
            return
        }
        let view = versions.published.latest()
        // The oldest sequence anyone may read at: a live snapshot's, or else the newest.
        let horizon = min(oldestPinned() ?? view.sequence, view.sequence)
        let deeper = versions.levels(below: plan.outputLevel)
        /// Every number an output took, written in full or in part: removed if the merge
        /// stops before its edit.
        var written: [UInt64] = []
        let merge = CompactionMerge(
            plan: plan, horizon: horizon, deeperLevels: deeper,
            targetFileBytes: max(options.segmentFileBytes, 64 << 10), options: options,
            destination: outputDestination { number in written.append(number) },
            checkNotPaused: { try self.checkNotPaused() })
        /// The last output written, synced when the next one is written (or at the end), by
        /// which time its device writes are mostly done.
        var unsynced: UnsyncedFile? = nil
        /// Set once the edit naming the outputs may have reached the manifest.
        var editAttempted = false
        let result: CompactionMerge.Result
        do {
            result = try merge.run { output in
                let (meta, file) = try output.finishUnsynced()
                let previous = unsynced
                unsynced = file
                try previous?.sync()
                return meta
            }
            let last = unsynced
            unsynced = nil
            try last?.sync()
            try fileSystem.syncDirectory(directory)
            let opened = try result.outputs.map { try SegmentTable.open($0, directory: directory, fileSystem: fileSystem, cache: cache) }
            try options.failpoints?.handler(.beforeManifestEdit)
            try checkNotPaused()
            let removed = plan.inputs.flatMap { input in input.files.map { (level: input.level, fileNumber: $0.number) } }
            editAttempted = true
            try versions.logAndApply(
                VersionEdit(
                    added: result.outputs, removed: removed,
                    droppedDeletions: result.droppedDeletions > 0 ? result.droppedDeletions : nil),
                opened: opened)
        } catch {
            // Before the edit, nobody references the outputs: remove them now. Once the edit
            // was attempted, a failed sync leaves it unknown whether the manifest on disk
            // names them, so they stay; if it does not, the next open removes them.
            unsynced?.abandon()
            if !editAttempted {
                for number in written { try? fileSystem.removeFile(fileSystem.path(directory, ManifestFormat.segmentFileName(number))) }
            }
            throw error
        }
        for file in plan.allInputs { file.markObsolete() }
        compactionCount.add(1, ordering: .relaxed)
        progress.signal()
        logger.debug("compacted", metadata: ["reason": "\(plan.reason)", "in": "\(result.entriesIn)", "out": "\(result.entriesOut)"])
    }
}

/// Thrown inside a flush or merge when `Maintenance.pause()` stops it (invariant 5).
struct MaintenanceInterrupted: Error {
    /// Entries between two checks: a check is one atomic load, and at this interval a merge
    /// stops within a fraction of a millisecond.
    static let checkInterval = 1024
}
