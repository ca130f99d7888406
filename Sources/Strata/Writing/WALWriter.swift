import Dispatch
@_spi(Engine) import StrataFormat
import StrataIO

/// Frames records into the current WAL segment, writes and syncs them, and rolls to a new
/// segment past the size limit. Layout of what it writes: docs/format/wal.md. The framing,
/// file offsets, block boundaries and the synced offset never leave it: the writer hands it
/// payloads.
///
/// Confined to the writer queue (and to recovery before the queue starts).
///
/// Invariants:
/// 1. `provenThrough <= syncedOffset <= offset`; every byte of the segment below
///    `syncedOffset` is durable, and staged bytes start at `offset`.
/// 2. Every segment but the current one is synced to its end, and ends with a synced sync
///    mark, before any byte of a later segment is synced past its header (invariant 8).
///    Recovery may therefore take damage in an older segment for a torn write only when no
///    later segment holds a record that proves a sync of its own (docs/format/wal.md).
/// 3. A new segment is durable (header written and synced, directory synced) before any
///    record is written to it.
/// 4. Every byte of the file past `offset` is zero (preallocated space), so an old record can
///    never follow a new one. Recovery restores this by cutting off a torn tail.
/// 5. The segment itself proves its bytes below `provenThrough` synced (a record's
///    `syncedThrough` says so, or a sync mark ends them), so recovery never takes damage there
///    for a torn write. A sync mark raises it to `offset` at close, before a roll, and after
///    recovery (docs/format/wal.md, "Sync marks").
/// 6. Every record staged in one group carries the same `syncedThrough`: `syncedOffset` as it
///    was when the group began, since nothing is synced between staging and writing.
/// 7. An open `window` covers exactly preallocation step `windowStep`, inside the file's
///    preallocated size: a copy through it never lands past the file's end (SIGBUS).
/// 8. At most one segment is `rolled` (being finished, WALRolledSegment): every fdatasync of
///    the current segment, and every roll, first waits for it to finish.
/// 9. A segment made `ahead` is number `segmentNumber + 1` and empty until the roll takes it;
///    one not taken is removed at close and at suspension (`discardSegmentAhead`), so no other
///    process that opens the store meanwhile finds a segment this writer would write to.
final class WALWriter {
    /// The log file grows in steps of this size, zero-filled ahead of the data: an fdatasync
    /// then needs no metadata update except after the one write per step that extends the
    /// file, and recovery reads at most one step past the data.
    /// Also the size of the mapped write window, so it is the file system's window alignment.
    static let preallocationStepBytes = Int(writeWindowAlignment)

    let fileSystem: any FileSystem
    let directory: String
    let segmentBytes: Int
    /// The segments on disk and their sizes, shared with stats and retirement.
    let inventory: WALInventory

    // Used by the writer's one thread only, so the state below skips the runtime's
    // exclusivity check (a thread-local lookup per access, several per commit).
    @exclusivity(unchecked) private(set) var handle: any FileHandle
    @exclusivity(unchecked) private(set) var segmentNumber: UInt64
    /// Where the next record goes: the end of written data in the current segment.
    @exclusivity(unchecked) private var offset: Int
    @exclusivity(unchecked) private var syncedOffset: Int
    /// How far the segment proves itself synced (invariant 5).
    @exclusivity(unchecked) private var provenThrough: Int
    /// Where the segment's writeback has not been started yet (`startWritebackBehind`).
    @exclusivity(unchecked) private var writebackFrom = 0
    /// Where the segment's cached pages have not been released yet (`startWritebackBehind`).
    @exclusivity(unchecked) private var releasedFrom = 0
    /// Framed records not yet written, starting at `offset`.
    @exclusivity(unchecked) private var staged: [UInt8] = []
    /// Groups up to this size go through the window when no sync follows. Beyond it pwrite
    /// is cheaper: the kernel copies a large group into the page cache for less than the page
    /// faults a copy through the mapping takes (one per page on first touch; the fill
    /// benchmarks' 130 KB groups cost a tenth more CPU through the window). And a synced
    /// group pays for the window twice: fdatasync write-protects the pages it cleans, so the
    /// next copy faults again.
    static let windowedGroupLimit = 4096
    /// The file's size: preallocated, zero-filled space ends here.
    @exclusivity(unchecked) private var preallocatedEnd: Int
    /// The preallocation step that holds `offset`, mapped for writing where the file system
    /// allows it: a group that fits in it is copied there rather than written with pwrite,
    /// which for a one-put commit was over a third of its time. Opened once per step
    /// (`windowStep`); a group that crosses into the next step is written with pwrite.
    @exclusivity(unchecked) private var window: (any WriteWindow)?
    /// The step `window` was last opened for (whether or not that succeeded), or -1.
    @exclusivity(unchecked) private var windowStep = -1
    /// Groups written through a window so far; for tests.
    private(set) var windowedGroups = 0
    /// How long the last fdatasync took: what the writer's next round may wait for others
    /// to join it (`Writer` invariant 7).
    private(set) var lastSyncNanoseconds: UInt64 = 0
    /// The segment rolled away from, until it is finished (invariant 8).
    @exclusivity(unchecked) private var rolled: WALRolledSegment? = nil
    /// Whether a rolled segment is finished on `WALRolledSegment.finishingThread` (false:
    /// on the writer, when it next syncs or rolls, so crash tests run the same every time).
    let finishesRolledSegmentsInBackground: Bool
    /// The next segment, created before the roll needs it (invariant 9).
    @exclusivity(unchecked) private var ahead: WALSegmentAhead? = nil
    /// How much of the current segment is written before the next one is made ahead: past
    /// this a bulk writer is likely to roll, and a store that writes little never makes one.
    let makesNextSegmentAfter: Int
    private let failpoints: Failpoints?

    /// - Parameters:
    ///   - offset: the end of the segment's valid data, all of it synced.
    ///   - provenThrough: how far the segment's own records prove it synced.
    ///   - fileSize: the file's current size (its zero-filled preallocation).
    ///   - makesNextSegmentAfter: the offset past which the next segment is made ahead.
    init(
        fileSystem: any FileSystem, directory: String, segmentBytes: Int, inventory: WALInventory, handle: any FileHandle,
        segmentNumber: UInt64, offset: Int, provenThrough: Int, fileSize: Int, finishesRolledSegmentsInBackground: Bool = true,
        makesNextSegmentAfter: Int = .max, failpoints: Failpoints? = nil
    ) {
        self.failpoints = failpoints
        self.finishesRolledSegmentsInBackground = finishesRolledSegmentsInBackground
        self.makesNextSegmentAfter = makesNextSegmentAfter
        self.fileSystem = fileSystem
        self.directory = directory
        self.segmentBytes = segmentBytes
        self.inventory = inventory
        self.handle = handle
        self.segmentNumber = segmentNumber
        self.offset = offset
        self.syncedOffset = offset
        self.provenThrough = min(provenThrough, offset)
        // What is there is synced: nothing of it needs its writeback started.
        self.writebackFrom = offset / WALWriter.preallocationStepBytes * WALWriter.preallocationStepBytes
        self.releasedFrom = writebackFrom
        self.preallocatedEnd = fileSize
        inventory.update(segmentNumber, bytes: offset)
        checkInvariants()
    }

    /// The size to preallocate a log file to so that it holds `end` bytes.
    static func preallocationTarget(for end: Int) -> Int {
        let step = preallocationStepBytes
        return (end + step - 1) / step * step
    }

    /// True once the segment holds its size limit: the next group goes to a new segment.
    var needsRoll: Bool { offset >= segmentBytes }
    var hasStagedRecords: Bool { !staged.isEmpty }

    static func segmentName(_ number: UInt64) -> String { WALFormat.fileName(number) }

    /// The segment number in a file name, or nil when the name is not a WAL segment's.
    static func segmentNumber(fromName name: String) -> UInt64? { WALFormat.number(fromName: name) }

    /// Creates segment `number`, durable and empty (invariant 3).
    static func createSegment(fileSystem: any FileSystem, directory: String, number: UInt64) throws -> any FileHandle {
        let path = fileSystem.path(directory, segmentName(number))
        let handle = try fileSystem.openFile(path, create: true)
        do {
            try handle.truncate(to: 0)
            try handle.write(WALFormat.SegmentHeader(segmentNumber: number).encoded(), at: 0)
            try handle.preallocate(to: Int64(preallocationTarget(for: WALFormat.headerSize)))
            try handle.sync()
            try fileSystem.syncDirectory(directory)
        } catch {
            try? handle.close()
            throw error
        }
        return handle
    }

    // MARK: Records

    /// What the next batch staged says in `syncedThrough` (invariant 6).
    var syncedThrough: UInt64 { UInt64(syncedOffset) }

    /// Frames `payload`, a batch built in place (BatchBuffer), as the next record of the
    /// group being staged.
    func stage(_ payload: UnsafeRawBufferPointer) {
        _ = WALFormat.appendRecord(payload, to: &staged, fileOffset: offset)
    }

    /// Frames `payload` (a sync mark) as the next record of the group being staged.
    func stage(_ payload: [UInt8]) {
        payload.withUnsafeBytes { stage($0) }
    }

    /// Writes the staged records with one write: a copy into the mapped window when they are
    /// small, fit in it and `syncFollows` is false, otherwise pwrite. Either is the file's
    /// data at once, kept if the process dies.
    func writeStaged(syncFollows: Bool = false) throws {
        guard !staged.isEmpty else { return }
        let end = offset + staged.count
        if end > preallocatedEnd {
            let target = WALWriter.preallocationTarget(for: end)
            try handle.preallocate(to: Int64(target))
            preallocatedEnd = target
        }
        let step = WALWriter.preallocationStepBytes
        if offset / step != windowStep { try openWindow(step: offset / step) }
        if !syncFollows, staged.count <= WALWriter.windowedGroupLimit, let window, Int64(end) <= window.range.upperBound {
            try staged.withUnsafeBytes { try window.write($0, at: Int64(offset)) }
            windowedGroups &+= 1
        } else {
            try handle.write(staged, at: Int64(offset))
        }
        offset = end
        // Every record just written says the bytes below syncedOffset are synced (invariant 6).
        provenThrough = syncedOffset
        // A group that reached the next step leaves the window over a step whose writeback
        // starts just below. Unmapped first: the kernel write-protects every page it writes
        // out that is still mapped, each with a TLB flush on every core (an interrupt to each
        // other core per page, about 3% of a single-put load's commit time). The next group
        // opens the window over its own step.
        if offset / step != windowStep { window = nil }
        startWritebackBehind()
        staged.removeAll(keepingCapacity: true)
        inventory.update(segmentNumber, bytes: offset)
        if ahead == nil && offset >= makesNextSegmentAfter { makeSegmentAhead() }
        checkInvariants()
    }

    /// Creates the next segment in the background (invariant 9), or here and now when the
    /// store runs background work inline, so crash tests meet it at the same point every run.
    private func makeSegmentAhead() {
        let next = WALSegmentAhead(fileSystem: fileSystem, directory: directory, number: segmentNumber + 1)
        ahead = next
        try? failpoints?.handler(.makingWALSegmentAhead)
        if finishesRolledSegmentsInBackground { next.start() } else { next.run() }
    }

    /// Closes and removes the segment made ahead, if any (invariant 9); at close and before a
    /// suspension. The next write past `makesNextSegmentAfter` makes another.
    func discardSegmentAhead() {
        ahead?.discard()
        ahead = nil
    }

    /// Starts the device writes of every whole preallocation step written since the last
    /// start, without waiting for them. A segment is synced to its end once the writer
    /// rolls past it (invariant 2): a 16 MiB segment written without a sync left that
    /// fdatasync to write all of it, about 8 ms a roll, a tenth of a bulk load, when the
    /// writer still waited for it. The
    /// step being written is left alone: writes through the window to pages already being
    /// written out would fault again. Durability still comes only from `sync()`, so a failed
    /// start is only a slower sync later, and is not an error.
    private func startWritebackBehind() {
        let step = WALWriter.preallocationStepBytes
        let through = offset / step * step
        guard through - writebackFrom >= step else { return }
        try? handle.startWriteback(offset: Int64(writebackFrom), count: Int64(through - writebackFrom))
        // The steps whose writeback started at the previous call are most likely on the
        // device by now: their cached pages go back to the system. Only recovery reads a WAL
        // segment again, so keeping them would only make the kernel find fresh memory for
        // everything written next.
        if writebackFrom > releasedFrom {
            try? handle.dropCachedPages(offset: Int64(releasedFrom), count: Int64(writebackFrom - releasedFrom))
            releasedFrom = writebackFrom
        }
        writebackFrom = through
    }

    /// Replaces the window with one over preallocation step `index`, which the file holds
    /// whole (a step is preallocated entirely, before anything is written to it). A file
    /// system without windows is no error: the writes then use pwrite.
    private func openWindow(step index: Int) throws {
        let step = WALWriter.preallocationStepBytes
        window = nil
        windowStep = index
        guard (index + 1) * step <= preallocatedEnd else { return }
        window = try handle.openWriteWindow(offset: Int64(index * step), count: step)
    }

    /// Drops staged records that were never written (their group failed).
    func discardStaged() {
        staged.removeAll(keepingCapacity: true)
    }

    /// fdatasync, when anything written is unsynced; first, the segment rolled away from is
    /// finished (invariant 8).
    func sync() throws {
        try finishRolled()
        guard syncedOffset < offset else { return }
        let start = DispatchTime.now().uptimeNanoseconds
        try handle.sync()
        lastSyncNanoseconds = DispatchTime.now().uptimeNanoseconds - start
        syncedOffset = offset
        checkInvariants()
    }

    /// Syncs, then, when some bytes are not yet proven synced, appends a sync mark carrying
    /// `sequence` (the last record's) and syncs it too. Afterwards damage to any record of
    /// the segment is corruption, never a torn write (invariant 5).
    func writeSyncMarkIfNeeded(sequence: UInt64) throws {
        precondition(staged.isEmpty, "a sync mark is written between groups")
        try sync()
        guard provenThrough < offset else { return }
        stage(BatchFormat.syncMark(sequence: sequence, syncedThrough: UInt64(syncedOffset)))
        try writeStaged(syncFollows: true)
        try sync()
        provenThrough = offset
        checkInvariants()
    }

    /// Starts the next segment (the one made ahead, or a new one here), and hands the current
    /// one to a `WALRolledSegment` that syncs
    /// it to its end and marks it (so it proves itself synced even if the next segment's
    /// creation is cut short by a crash), in the background or at the next sync or roll.
    func roll(lastSequence: UInt64) throws {
        precondition(staged.isEmpty, "a segment rolls between groups")
        try finishRolled()
        let next = segmentNumber + 1
        let made = ahead?.take()
        ahead = nil
        let newHandle = try made ?? WALWriter.createSegment(fileSystem: fileSystem, directory: directory, number: next)
        // The mark is framed here, where the segment's layout is known; it is written only
        // once the sync before it has returned (WALRolledSegment invariant 2).
        let mark = provenThrough < offset ? WALWriter.framedSyncMark(sequence: lastSequence, at: offset) : []
        window = nil
        windowStep = -1
        let finishing = WALRolledSegment(
            handle: handle, end: offset, synced: syncedOffset == offset, mark: mark,
            preallocatedEnd: preallocatedEnd)
        inventory.update(segmentNumber, bytes: offset + mark.count)
        rolled = finishing
        if finishesRolledSegmentsInBackground { finishing.start() }
        handle = newHandle
        segmentNumber = next
        offset = WALFormat.headerSize
        syncedOffset = offset
        provenThrough = offset
        writebackFrom = 0
        releasedFrom = 0
        preallocatedEnd = WALWriter.preallocationTarget(for: offset)
        inventory.update(segmentNumber, bytes: offset)
        checkInvariants()
    }

    /// True when nothing follows this writer's last record in the file now at the segment's
    /// path: the bytes past `offset` are zeros (the preallocation, invariant 4), or the file
    /// ends there. Another process that appended to the segment while this store was
    /// suspended wrote a record there. The file is opened afresh, so a segment removed or
    /// replaced meanwhile is seen too (this writer's handle would still read the old one).
    func isUntouchedPastEnd() throws -> Bool {
        let path = fileSystem.path(directory, WALWriter.segmentName(segmentNumber))
        let current: any FileHandle
        do {
            current = try fileSystem.openFile(path, create: false)
        } catch let error as IOError where error.code == .notFound {
            return false
        }
        defer { try? current.close() }
        let size = try current.size()
        guard size >= Int64(offset) else { return false }
        // A record starts at `offset`, or at the next block when fewer than a header's bytes
        // are left in this one (those are zero padding): two headers' worth covers both.
        let probe = try current.read(at: Int64(offset), count: 2 * WALFormat.fragmentHeaderSize)
        return probe.allSatisfy { $0 == 0 }
    }

    /// A sync mark carrying `sequence` for a segment whose data ends at `end`, framed to be
    /// written there: it vouches for every byte before it (docs/format/wal.md, "Sync marks").
    static func framedSyncMark(sequence: UInt64, at end: Int) -> [UInt8] {
        var mark: [UInt8] = []
        _ = BatchFormat.syncMark(sequence: sequence, syncedThrough: UInt64(end)).withUnsafeBytes {
            WALFormat.appendRecord($0, to: &mark, fileOffset: end)
        }
        return mark
    }

    /// Waits for the segment rolled away from to be finished (invariant 8), and throws its
    /// error: its commits are not durable, so the writer must fail as after a failed sync.
    private func finishRolled() throws {
        guard let finishing = rolled else { return }
        rolled = nil
        try finishing.finish()
    }

    /// True while a segment rolled away from is not known to be finished; for tests.
    var hasRolledSegment: Bool { rolled != nil }

    /// Closes the segment without syncing it. A segment rolled away from and not finished is
    /// left as it is (after a failure) or waited for, never synced from here.
    func close() throws {
        window = nil
        rolled?.abandon()
        rolled = nil
        discardSegmentAhead()
        try handle.close()
    }

    /// Invariants 1, 4 and 7; compiled into debug builds only.
    func checkInvariants() {
        #if STRATA_INTERNAL_CHECKS
            precondition(
                provenThrough <= syncedOffset && syncedOffset <= offset,
                "WALWriter invariant 1: proven \(provenThrough), synced \(syncedOffset), written \(offset) out of order")
            precondition(offset <= preallocatedEnd, "WALWriter invariant 4: data past the preallocated end")
            if let window {
                let step = Int64(WALWriter.preallocationStepBytes)
                precondition(
                    window.range == Int64(windowStep) * step..<Int64(windowStep + 1) * step && window.range.upperBound <= preallocatedEnd,
                    "WALWriter invariant 7: a window over \(window.range) for step \(windowStep)")
            }
            if let ahead { precondition(ahead.number == segmentNumber + 1, "WALWriter invariant 9: segment \(ahead.number) made ahead of \(segmentNumber)") }
        #endif
    }
}
