@_spi(Engine) import StrataFormat
import StrataIO
import Synchronization

/// The persisted state of a store and the Version readers see: the segment files of every
/// level, the WAL position they cover, the last sequence in them, the file-number counter,
/// the manifest that records all of it, and where each level's next compaction starts.
/// Recovery builds it; the writer and maintenance change it only through it.
///
/// Invariants:
/// 1. Everything marked "install-locked" is touched only while holding `installLock`.
///    `logAndApply` takes it; the writer and readers never do.
/// 2. The levels are stored once, in the published Version. They change only in
///    `logAndApply`, after the edit is durable (ManifestWriter invariant 1), so a Version never
///    shows a file the manifest does not name.
/// 3. This is the only publisher of Versions: commits (`publish(sequence:)`), sealed
///    memtables (`sealMemtable`), and installed flushes and compactions (`logAndApply`).
/// 4. `logNumber`, `lastSequence` and `droppedDeletions` never decrease, and `nextFileNumber`
///    is above every file number in the levels and the manifest's own.
/// 5. A WAL segment is retired only after the edit whose `logNumber` covers it is durable.
final class VersionSet: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is install-locked (invariant 1); `published`
    // and `wal` are Sendable.

    struct PersistedState: Equatable {
        var logNumber: UInt64
        var lastSequence: UInt64
        var nextFileNumber: UInt64
        /// The store's identity (16 bytes; empty until recovery gives a store from before
        /// format 1.1 one).
        var storeIdentifier: [UInt8] = []
        /// The newest sequence of a deletion marker a compaction dropped (never decreases).
        var droppedDeletions: UInt64 = 0
    }

    let published: PublishedState
    /// The WAL segments on disk and their sizes; retired here (invariant 5).
    let wal: WALInventory
    /// A bare lock: its counter is unused (Locked needs a value of non-zero size).
    private let installLock = Locked(0)
    private let fileSystem: any FileSystem
    private let directory: String
    private let failpoints: Failpoints?
    /// Compaction triggers (StoreOptions).
    let level0CompactionTrigger: Int
    let level1Bytes: Int
    /// A manifest past this size is replaced at the next edit (`ManifestWriter.rollBytes`).
    private let manifestRollBytes: Int

    // Install-locked (invariant 1).
    /// Nil for a store opened read-only, which never edits its manifest (and never calls
    /// `logAndApply`: it has no flushes or compactions).
    private var manifest: ManifestWriter?
    private var state: PersistedState
    /// The published sequence and the writer's wait count at the last compaction pick, and
    /// since when (uptime nanoseconds) picks have seen them unchanged; nil before the first.
    /// Install-locked; only `pickCompaction` uses it.
    var quietAtLastPick: (sequence: UInt64, writerWaits: Int, since: UInt64)? = nil
    /// Where the next size-triggered compaction of each level starts (round robin by key).
    private var compactPointers: [[UInt8]?] = Array(repeating: nil, count: ManifestFormat.maxLevels)

    init(
        published: PublishedState, wal: WALInventory, manifest: ManifestWriter?, state: PersistedState,
        directory: String, options: StoreOptions
    ) {
        self.published = published
        self.wal = wal
        self.manifest = manifest
        self.state = state
        self.fileSystem = options.fileSystem
        self.directory = directory
        self.failpoints = options.failpoints
        self.level0CompactionTrigger = max(options.level0CompactionTrigger, 1)
        self.level1Bytes = max(options.level1Bytes, StoreOptions.minimumLevel1Bytes)
        self.manifestRollBytes = options.manifestRollBytes ?? ManifestWriter.rollBytes
        installLock.withLock { _ in checkInvariants() }
    }

    // MARK: Reading the current state

    /// The levels of the current Version (invariant 2).
    var levels: [[SegmentTable]] { published.latest().version.levels }

    /// The numbers of the segment files the current version holds.
    var liveSegmentNumbers: Set<UInt64> { Set(levels.joined().map(\.number)) }

    /// Runs `body` under the install lock with the current levels and the compact pointers:
    /// a consistent view for choosing a compaction's inputs.
    func withInstallLock<T>(_ body: (_ levels: [[SegmentTable]], _ compactPointers: inout [[UInt8]?]) -> T) -> T {
        installLock.withLock { _ in body(levels, &compactPointers) }
    }

    /// The levels below `level`, for a merge's tombstone rule. They cannot change while a
    /// merge into `level` runs: only the one compaction thread removes files.
    func levels(below level: Int) -> [[SegmentTable]] {
        installLock.withLock { _ in Array(levels.dropFirst(level + 1)) }
    }

    // MARK: Publishing (invariant 3)

    /// Makes commits up to `sequence` visible. On the writer queue.
    func publish(sequence: UInt64) {
        published.publish(sequence: sequence)
    }

    /// Seals `table`: it joins the sealed memtables (newest first) and `fresh` becomes the
    /// active one; the levels stay. One read-modify-write of the published Version, so a
    /// flush installing at the same moment is never undone. On the writer queue.
    func sealMemtable(_ table: MemTable, replacingWith fresh: MemTable) {
        published.replaceVersion { version in
            precondition(version.memtable === table, "VersionSet: sealing a memtable that is not the active one")
            return version.replacing(memtable: fresh, sealed: [table] + version.sealed)
        }
    }

    // MARK: Changing the persisted state

    /// A new file number, never given out before (invariant 4).
    func allocateFileNumber() -> UInt64 {
        installLock.withLock { _ in
            defer { state.nextFileNumber += 1 }
            return state.nextFileNumber
        }
    }

    /// Makes `edit` durable, then applies it: `opened` are the tables of the files it adds,
    /// in the same order; `flushed` is the sealed memtable a flush's edit replaces. Publishes
    /// the new Version (invariants 2 and 3), then retires the WAL segments a higher
    /// `logNumber` covers (invariant 5). The edit's `nextFileNumber` is filled in here.
    func logAndApply(_ edit: VersionEdit, opened: [SegmentTable], flushed: MemTable? = nil) throws {
        precondition(opened.map(\.number) == edit.added.map(\.fileNumber), "logAndApply: opened tables must match the edit's additions")
        var edit = edit
        let retireBelow: UInt64? = try installLock.withLock { _ in
            edit.nextFileNumber = state.nextFileNumber
            // The scalars never go down (invariant 4), in the record as in memory: a replay
            // takes the last value written.
            edit.logNumber = edit.logNumber.map { max($0, state.logNumber) }
            edit.lastSequence = edit.lastSequence.map { max($0, state.lastSequence) }
            edit.droppedDeletions = edit.droppedDeletions.map { max($0, state.droppedDeletions) }
            let before = state
            try log(edit)
            var levels = self.levels
            for removal in edit.removed {
                levels[removal.level].removeAll { $0.number == removal.fileNumber }
            }
            for table in opened {
                levels[table.meta.level].append(table)
            }
            levels[0].sort { $0.number > $1.number }
            for level in levels.indices.dropFirst() {
                levels[level].sort { $0.meta.smallestKey.lexicographicallyPrecedes($1.meta.smallestKey) }
            }
            published.replaceVersion { version in
                let sealed = flushed.map { table in version.sealed.filter { $0 !== table } } ?? version.sealed
                return version.replacing(sealed: sealed, levels: levels, droppedDeletions: state.droppedDeletions)
            }
            checkInvariants()
            return state.logNumber > before.logNumber ? state.logNumber : nil
        }
        if let retireBelow {
            wal.retire(below: retireBelow, fileSystem: fileSystem, directory: directory)
        }
    }

    /// Makes `edit` durable: appended to the manifest, or in a new manifest that starts with
    /// a snapshot of the whole state after the edit. Applies the edit's scalars to `state`.
    /// Install-locked.
    private func log(_ edit: VersionEdit) throws {
        var next = state
        if let logNumber = edit.logNumber { next.logNumber = logNumber }
        if let lastSequence = edit.lastSequence { next.lastSequence = lastSequence }
        if let dropped = edit.droppedDeletions { next.droppedDeletions = max(next.droppedDeletions, dropped) }
        guard let current = manifest else { preconditionFailure("VersionSet: an edit of a store opened read-only") }
        if current.needsNewFile {
            let number = next.nextFileNumber
            next.nextFileNumber += 1
            var metas = levels.flatMap { $0.map(\.meta) }
            let removed = Set(edit.removed.map(\.fileNumber))
            metas.removeAll { removed.contains($0.fileNumber) }
            metas.append(contentsOf: edit.added)
            try failpoints?.handler(.beforeManifestInstall)
            let fresh = try ManifestWriter.install(
                number: number, snapshot: Self.snapshotEdit(next, metas),
                fileSystem: fileSystem, directory: directory, rollBytes: manifestRollBytes)
            current.close()
            manifest = fresh
        } else {
            try current.append(edit)
        }
        state = next
    }

    /// The whole state as one edit: the first record of every new manifest (recovery's and a
    /// roll's alike).
    static func snapshotEdit(_ state: PersistedState, _ segments: [SegmentMeta]) -> VersionEdit {
        VersionEdit(
            logNumber: state.logNumber, lastSequence: state.lastSequence, nextFileNumber: state.nextFileNumber,
            added: segments.sorted { ($0.level, $0.fileNumber) < ($1.level, $1.fileNumber) },
            storeIdentifier: state.storeIdentifier.isEmpty ? nil : state.storeIdentifier,
            droppedDeletions: state.droppedDeletions)
    }

    /// Closes the manifest, with a close mark when its last record needs one.
    func closeManifest() {
        installLock.withLock { _ in manifest?.closeWithMark() }
    }

    /// Marks the manifest's last edit synced, keeping it open (a suspension).
    func markManifest() {
        installLock.withLock { _ in manifest?.writeMarkIfNeeded() }
    }

    /// Closes the manifest without appending anything: the store no longer owns the
    /// directory (closed while suspended, or replaced by a reload).
    func closeManifestWithoutWriting() {
        installLock.withLock { _ in manifest?.close() }
    }

    // MARK: Invariants

    /// Invariants 2 and 4; compiled into debug builds only. Install-locked.
    private func checkInvariants() {
        #if STRATA_INTERNAL_CHECKS
            let levels = self.levels
            for table in levels.joined() {
                precondition(
                    table.number < state.nextFileNumber,
                    "VersionSet invariant 4: file \(table.number) is not below the next file number \(state.nextFileNumber)")
            }
            if let manifest {
                precondition(manifest.number < state.nextFileNumber, "VersionSet invariant 4: the manifest's number is not below the next file number")
            }
            for (index, level) in levels.enumerated() {
                for table in level {
                    precondition(table.meta.level == index, "VersionSet: a file sits at level \(index) but its record says \(table.meta.level)")
                }
            }
            for level in levels.dropFirst() {
                for (a, b) in zip(level, level.dropFirst()) {
                    precondition(a.meta.largestKey.lexicographicallyPrecedes(b.meta.smallestKey), "VersionSet: files of a level overlap")
                }
            }
            for (a, b) in zip(levels[0], levels[0].dropFirst()) {
                precondition(a.number > b.number, "VersionSet: level 0 is not newest first")
            }
        #endif
    }
}

/// The WAL segments on disk and how many bytes of data each holds: the one place that counts
/// them (for stats) and deletes those a flush covered.
///
/// Invariants:
/// 1. A segment is in `sizes` from its creation (or recovery) until it is deleted.
/// 2. For the segment numbered `open` (the one the writer appends to, 0 before its first
///    update), `openBytes` holds the size and its entry in `sizes` may be stale: a commit
///    stores one atomic word rather than taking the lock and writing the dictionary (every
///    single-put commit records its new size). Only the writer queue changes `open`.
final class WALInventory: Sendable {
    private let sizes: Locked<[UInt64: Int]>
    private let open = Atomic<UInt64>(0)
    private let openBytes = Atomic<Int>(0)

    init(_ sizes: [UInt64: Int]) {
        self.sizes = Locked(sizes)
    }

    /// Records that segment `number` holds `bytes` of data. On the writer queue.
    func update(_ number: UInt64, bytes: Int) {
        if open.load(ordering: .relaxed) == number {
            openBytes.store(bytes, ordering: .relaxed)
            return
        }
        sizes.withLock { sizes in
            let previous = open.load(ordering: .relaxed)
            // The segment left behind keeps its last size in the dictionary (invariant 2).
            if previous != 0, sizes[previous] != nil { sizes[previous] = openBytes.load(ordering: .relaxed) }
            sizes[number] = bytes
            openBytes.store(bytes, ordering: .relaxed)
            open.store(number, ordering: .relaxed)
        }
    }

    var segmentCount: Int { sizes.withLock { $0.count } }
    var totalBytes: Int {
        sizes.withLock { sizes in
            let open = open.load(ordering: .relaxed)
            return sizes.reduce(0) { $0 + ($1.key == open ? openBytes.load(ordering: .relaxed) : $1.value) }
        }
    }

    /// Deletes every WAL segment numbered below `logNumber`, which a durable manifest edit
    /// covers. Files on disk that were never counted (left by a crash) go too. No directory
    /// sync: a removal a crash undoes leaves a segment below the manifest's log number, which
    /// recovery never replays and removes.
    func retire(below logNumber: UInt64, fileSystem: any FileSystem, directory: String) {
        guard let names = try? fileSystem.listDirectory(directory) else { return }
        for name in names {
            guard let number = WALFormat.number(fromName: name), number < logNumber else { continue }
            if (try? fileSystem.removeFile(fileSystem.path(directory, name))) != nil {
                _ = sizes.withLock { $0.removeValue(forKey: number) }
            }
        }
    }
}
