import Dispatch
import Logging
import Synchronization
import StrataFormat
import StrataIO

/// A memtable the writer has sealed, waiting to be flushed.
struct SealedMemTable: @unchecked Sendable {
    // @unchecked Sendable: MemTable is Sendable; the tuple-free struct only carries numbers.
    let table: MemTable
    /// The newest sequence in the table.
    let lastSequence: UInt64
    /// The WAL segment the writer moved to when it sealed the table: once the table is in a
    /// segment file, every older WAL segment is obsolete.
    let nextLogNumber: UInt64
}

/// Flushes sealed memtables to level-0 segment files on one background thread and compacts
/// levels on another, so a flush never waits for a long merge; installs each result with a manifest
/// edit and a new Version.
///
/// Invariants:
/// 1. Everything marked "install-locked" is touched only while holding `installLock`. The
///    slow parts of a flush or a merge (building and writing files) run outside it; the lock
///    covers choosing inputs, numbering files and installing results.
/// 2. Sealed memtables are flushed oldest first, so `logNumber` and `lastSequence` only grow.
/// 3. A result is visible (a new Version published) only after its manifest edit is durable
///    (ManifestWriter invariant 1), and a WAL segment is deleted only after the edit whose
///    `logNumber` covers it is durable.
/// 4. A file leaves a level only through a durable edit; the file itself goes when no Version
///    holds it (SegmentTable invariant 2).
/// 5. The levels here always equal the published Version's levels: only maintenance changes
///    them, and it publishes every change.
final class Maintenance: @unchecked Sendable {
    // @unchecked Sendable: mutable state is either install-locked (invariant 1) or
    // behind a Mutex or atomics.

    struct PersistedState {
        var logNumber: UInt64
        var lastSequence: UInt64
        var nextFileNumber: UInt64
    }

    /// Flushes and compactions each run on a thread of their own, below the priority of
    /// readers and the writer (BackgroundThread).
    let flushThread = BackgroundThread(name: "strata.flush")
    let compactionThread = BackgroundThread(name: "strata.compaction")
    /// Signalled when each thread ends; for tests.
    var threadsEnded: [DispatchSemaphore] { [flushThread.ended, compactionThread.ended] }
    /// Guards the install-locked state below (invariant 1). Held by background work only:
    /// the writer and readers never take it.
    private let installLock = Mutex(())
    private let fileSystem: any FileSystem
    private let directory: String
    private let options: StoreOptions
    private let logger: Logger
    private let published: PublishedState
    private let cache: BlockCache
    private let oldestPinned: @Sendable () -> UInt64?

    private let pending = Mutex<[SealedMemTable]>([])
    private let lastFailure = Mutex<StoreError?>(nil)
    private let stopping = Atomic<Bool>(false)
    /// Signalled whenever a flush or compaction is installed or fails, for a writer waiting
    /// for room.
    let progress = DispatchSemaphore(value: 0)

    let flushCount = Atomic<Int>(0)
    let compactionCount = Atomic<Int>(0)
    let retiredWALBytes = Atomic<Int>(0)
    let retiredWALSegments = Atomic<Int>(0)

    // Install-locked (invariant 1). Only one compaction runs at a time (compactionThread), and
    // only it removes files, so a merge's inputs are still live when it installs.
    private var manifest: ManifestWriter
    private var state: PersistedState
    private var levels: [[SegmentTable]]
    /// Where the next size-triggered compaction of each level starts (round robin by key).
    private var compactPointers: [[UInt8]?] = Array(repeating: nil, count: ManifestFormat.maxLevels)

    init(directory: String, options: StoreOptions, published: PublishedState, cache: BlockCache, manifest: ManifestWriter,
         state: PersistedState, levels: [[SegmentTable]], oldestPinned: @escaping @Sendable () -> UInt64?) {
        self.fileSystem = options.fileSystem
        self.directory = directory
        self.options = options
        self.logger = options.logger
        self.published = published
        self.cache = cache
        self.manifest = manifest
        self.state = state
        self.levels = levels
        self.oldestPinned = oldestPinned
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
            flushThread.async { self.flushDue() }
            // Also here, for work due without a flush (an open that finds level 0 full).
            compactionThread.async { self.compactDue() }
        }
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
            try fullCompaction()
        } catch {
            throw recordFailure(error, while: "compacting the store")
        }
    }

    /// Stops starting new work and waits for the running jobs. Called once, at close.
    ///
    /// A merge already running finishes and is installed rather than thrown away. Abandoning
    /// it made a store that is opened briefly and often (an app extension, a command-line
    /// tool, a benchmark's read phases) restart the same merge at every open and never
    /// finish it, so its reads kept paying for every level-0 file. A process killed
    /// mid-merge loses nothing either way: the merge's outputs count only once the manifest
    /// names them.
    func shutdown() {
        stopping.store(true, ordering: .relaxed)
        flushThread.sync {}
        compactionThread.sync {}
        installLock.withLock { _ in manifest.closeWithMark() }
        progress.signal()
    }

    // MARK: Work

    private func flushDue() {
        do {
            try flushPending()
        } catch {
            _ = recordFailure(error, while: "flushing a memtable in the background")
        }
    }

    private func compactDue() {
        do {
            while !stopping.load(ordering: .relaxed), let plan = installLock.withLock({ _ in pickCompaction() }) {
                try compact(plan)
                lastFailure.withLock { $0 = nil }
            }
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
            try flush(sealed)
            pending.withLock { _ = $0.removeFirst() }
            lastFailure.withLock { $0 = nil }
            progress.signal()
            // Each new level-0 file may make a compaction due: ask now, not once the queue is
            // empty. Under a steady writer the queue is never empty for long, and level 0
            // used to grow until writes stopped before any merge began.
            if !options.runsBackgroundWorkInline && !compactionThread.isCurrent {
                compactionThread.async { self.compactDue() }
            }
        }
    }

    /// Writes a sealed memtable as one level-0 file and installs it. On `flushThread`.
    private func flush(_ sealed: SealedMemTable) throws {
        try options.failpoints?.handler(.beforeFlush)
        var output = SegmentOutput(level: 0, options: options)
        try sealed.table.forEachNode { node in
            guard node.sequence <= sealed.lastSequence else { return }
            // Key and value are borrowed from the memtable's arena: no copy per entry.
            try output.add(borrowingKey: node.key, sequence: node.sequence, isTombstone: node.isTombstone,
                           value: node.isTombstone ? UnsafeRawBufferPointer(start: nil, count: 0) : node.value)
        }
        var edit = VersionEdit(logNumber: sealed.nextLogNumber, lastSequence: sealed.lastSequence)
        var table: SegmentTable? = nil
        if output.entryCount > 0 {
            let number = allocateFileNumber()
            let meta = try output.write(number: number, fileSystem: fileSystem, directory: directory)
            try fileSystem.syncDirectory(directory)
            edit.added = [meta]
            table = try SegmentTable.open(meta, directory: directory, fileSystem: fileSystem, cache: cache)
        }
        try options.failpoints?.handler(.beforeManifestEdit)
        try installLock.withLock { _ in
            edit.lastSequence = max(state.lastSequence, sealed.lastSequence)
            edit.nextFileNumber = state.nextFileNumber
            try log(edit)
            if let table { levels[0].insert(table, at: 0) }
            let levels = self.levels
            published.replaceVersion { version in
                version.replacing(sealed: version.sealed.filter { $0 !== sealed.table }, levels: levels)
            }
        }
        flushCount.add(1, ordering: .relaxed)
        retireWAL(below: sealed.nextLogNumber)
    }

    private func allocateFileNumber() -> UInt64 {
        installLock.withLock { _ in
            defer { state.nextFileNumber += 1 }
            return state.nextFileNumber
        }
    }

    /// Makes `edit` durable: appended to the manifest, or in a new manifest that starts with
    /// a snapshot of the whole state after the edit. Applies the edit's scalars to `state`.
    /// Install-locked.
    private func log(_ edit: VersionEdit) throws {
        var next = state
        if let logNumber = edit.logNumber { next.logNumber = logNumber }
        if let lastSequence = edit.lastSequence { next.lastSequence = lastSequence }
        if manifest.needsNewFile {
            let number = next.nextFileNumber
            next.nextFileNumber += 1
            var metas = Set(levels.flatMap { $0.map(\.meta) })
            for removal in edit.removed { metas = metas.filter { $0.fileNumber != removal.fileNumber } }
            metas.formUnion(edit.added)
            let snapshot = VersionEdit(logNumber: next.logNumber, lastSequence: next.lastSequence, nextFileNumber: next.nextFileNumber,
                                       added: metas.sorted { ($0.level, $0.fileNumber) < ($1.level, $1.fileNumber) })
            try options.failpoints?.handler(.beforeManifestInstall)
            let fresh = try ManifestWriter.install(number: number, snapshot: snapshot, fileSystem: fileSystem, directory: directory)
            manifest.close()
            manifest = fresh
        } else {
            try manifest.append(edit)
        }
        state = next
    }

    /// Deletes WAL segments numbered below `logNumber` (invariant 3: the edit is durable).
    /// No directory sync: a removal a crash undoes leaves a segment below the manifest's log
    /// number, which recovery never replays and removes.
    private func retireWAL(below logNumber: UInt64) {
        guard let names = try? fileSystem.listDirectory(directory) else { return }
        for name in names {
            guard let number = WALWriter.segmentNumber(fromName: name), number < logNumber else { continue }
            let path = fileSystem.path(directory, name)
            let size = (try? fileSystem.openFile(path, create: false)).flatMap { handle -> Int? in
                defer { try? handle.close() }
                return (try? handle.size()).map(Int.init)
            } ?? 0
            if (try? fileSystem.removeFile(path)) != nil {
                retiredWALBytes.add(min(size, options.walSegmentBytes), ordering: .relaxed)
                retiredWALSegments.add(1, ordering: .relaxed)
            }
        }
    }

    // MARK: Compaction

    private func levelBytes(_ level: Int) -> Int {
        levels[level].reduce(0) { $0 + Int($1.meta.fileSize) }
    }

    private func targetBytes(_ level: Int) -> Int {
        var target = max(options.level1Bytes, 1 << 20)
        for _ in 1..<max(level, 1) { target = target.multipliedReportingOverflow(by: 10).partialValue }
        return target
    }

    /// The most urgent compaction, if any is due: the level whose score is highest, where
    /// level 0 scores its file count over the trigger and deeper levels their bytes over
    /// their target. Choosing by score (rather than level 0 first) keeps a steady stream of
    /// flushes from starving the deeper levels, whose overgrowth would make every level-0
    /// merge rewrite them whole.
    private func pickCompaction() -> CompactionPlan? {
        var bestLevel = -1
        var bestScore = 1.0
        let l0Score = Double(levels[0].count) / Double(max(options.level0CompactionTrigger, 1))
        if l0Score >= bestScore {
            bestLevel = 0
            bestScore = l0Score
        }
        for level in 1..<(ManifestFormat.maxLevels - 1) {
            let score = Double(levelBytes(level)) / Double(targetBytes(level))
            if score > bestScore {
                bestLevel = level
                bestScore = score
            }
        }
        if bestLevel < 0 { return nil }
        if bestLevel == 0 {
            let files = levels[0]
            let smallest = files.map(\.meta.smallestKey).min { $0.lexicographicallyPrecedes($1) }!
            let largest = files.map(\.meta.largestKey).max { $0.lexicographicallyPrecedes($1) }!
            return CompactionPlan(inputs: [(0, files), (1, overlapping(1, smallest, largest))], outputLevel: 1,
                                  reason: "level 0 holds \(files.count) files")
        }
        let level = bestLevel
        let files = levels[level]
        // Round robin through the level's key space, so every range gets its turn.
        let pointer = compactPointers[level]
        let chosen = files.first { file in pointer.map { $0.lexicographicallyPrecedes(file.meta.smallestKey) } ?? true } ?? files[0]
        compactPointers[level] = chosen.meta.largestKey
        return CompactionPlan(inputs: [(level, [chosen]), (level + 1, overlapping(level + 1, chosen.meta.smallestKey, chosen.meta.largestKey))],
                              outputLevel: level + 1, reason: "level \(level) holds \(levelBytes(level)) bytes")
    }

    /// Files of level `level` (>= 1) whose range meets [smallest, largest].
    private func overlapping(_ level: Int, _ smallest: [UInt8], _ largest: [UInt8]) -> [SegmentTable] {
        levels[level].filter { file in
            !file.meta.largestKey.lexicographicallyPrecedes(smallest) && !largest.lexicographicallyPrecedes(file.meta.smallestKey)
        }
    }

    /// Flushes every sealed memtable, then merges every file into the deepest non-empty level
    /// (at least level 1).
    private func fullCompaction() throws {
        let plan: CompactionPlan? = installLock.withLock { _ in
            let deepest = levels.lastIndex { !$0.isEmpty } ?? 0
            guard deepest > 0 || !levels[0].isEmpty else { return nil }
            let inputs = levels.enumerated().filter { !$0.element.isEmpty }.map { (level: $0.offset, files: $0.element) }
            return CompactionPlan(inputs: inputs, outputLevel: max(deepest, 1), reason: "a full compaction was asked for")
        }
        if let plan { try compact(plan) }
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
        let files = plan.inputs[0].files
        let moved = files.map { file -> SegmentMeta in
            var meta = file.meta
            meta.level = plan.outputLevel
            return meta
        }
        // The same files, opened again under their new level (a table's record is immutable).
        let reopened = try moved.map { try SegmentTable.open($0, directory: directory, fileSystem: fileSystem, cache: cache) }
        try options.failpoints?.handler(.beforeManifestEdit)
        try installLock.withLock { _ in
            try log(VersionEdit(nextFileNumber: state.nextFileNumber, added: moved,
                                removed: files.map { (level: plan.inputs[0].level, fileNumber: $0.number) }))
            let numbers = Set(files.map(\.number))
            levels[plan.inputs[0].level].removeAll { numbers.contains($0.number) }
            levels[plan.outputLevel].append(contentsOf: reopened)
            levels[plan.outputLevel].sort { $0.meta.smallestKey.lexicographicallyPrecedes($1.meta.smallestKey) }
            let levels = self.levels
            published.replaceVersion { $0.replacing(levels: levels) }
        }
        compactionCount.add(1, ordering: .relaxed)
        progress.signal()
    }

    private func compact(_ plan: CompactionPlan) throws {
        try options.failpoints?.handler(.beforeCompaction)
        if canMoveWithoutMerging(plan) {
            try move(plan)
            return
        }
        let view = published.latest()
        // The oldest sequence anyone may read at: a live snapshot's, or else the newest.
        let horizon = min(oldestPinned() ?? view.sequence, view.sequence)
        let deeper = installLock.withLock { _ in Array(levels.dropFirst(plan.outputLevel + 1)) }
        let merge = CompactionMerge(plan: plan, horizon: horizon, deeperLevels: deeper,
                                    targetFileBytes: max(options.segmentFileBytes, 64 << 10), options: options)
        var written: [UInt64] = []
        /// Set once the edit naming the outputs may have reached the manifest.
        var editAttempted = false
        let result: (outputs: [SegmentMeta], entriesIn: Int, entriesOut: Int)
        do {
            result = try merge.run { output in
                let number = allocateFileNumber()
                written.append(number)
                return try output.write(number: number, fileSystem: fileSystem, directory: directory)
            }
            try fileSystem.syncDirectory(directory)
            let opened = try result.outputs.map { try SegmentTable.open($0, directory: directory, fileSystem: fileSystem, cache: cache) }
            try options.failpoints?.handler(.beforeManifestEdit)
            let removed = plan.inputs.flatMap { input in input.files.map { (level: input.level, fileNumber: $0.number) } }
            try installLock.withLock { _ in
                editAttempted = true
                try log(VersionEdit(nextFileNumber: state.nextFileNumber, added: result.outputs, removed: removed))
                let inputNumbers = Set(plan.allInputs.map(\.number))
                for level in levels.indices { levels[level].removeAll { inputNumbers.contains($0.number) } }
                levels[plan.outputLevel].append(contentsOf: opened)
                levels[plan.outputLevel].sort { $0.meta.smallestKey.lexicographicallyPrecedes($1.meta.smallestKey) }
                let levels = self.levels
                published.replaceVersion { $0.replacing(levels: levels) }
            }
        } catch {
            // Before the edit, nobody references the outputs: remove them now. Once the edit
            // was attempted, a failed sync leaves it unknown whether the manifest on disk
            // names them, so they stay; if it does not, the next open removes them.
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
