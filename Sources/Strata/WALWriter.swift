import StrataFormat
import StrataIO

/// Appends batches to the current WAL segment and rolls to a new one past the size limit.
/// Layout of what it writes: docs/format/wal.md.
///
/// Confined to the writer queue (and to recovery before the queue starts).
///
/// Invariants:
/// 1. `syncedOffset <= offset`; every byte of the segment below `syncedOffset` is durable.
/// 2. Every segment but the current one is synced to its end before the next is created, so
///    recovery may treat damage in an older segment as corruption, never as a torn write.
/// 3. A new segment is durable (header written and synced, directory synced) before any
///    record is written to it.
/// 4. Every byte of the file past `offset` is zero (preallocated space), so an old record can
///    never follow a new one. Recovery restores this by cutting off a torn tail.
/// 5. `provenThrough <= syncedOffset`: the segment itself proves its bytes below
///    `provenThrough` synced (some record's `syncedThrough` says so), so recovery never takes
///    damage there for a torn write. A sync mark raises it to `offset` at close, before a
///    roll, and after recovery (docs/format/wal.md, "Sync marks").
final class WALWriter {
    /// The log file grows in steps of this size, zero-filled ahead of the data: an fdatasync
    /// then needs no metadata update except after the one write per step that extends the
    /// file, and recovery reads at most one step past the data.
    static let preallocationStepBytes = 1 << 20

    let fileSystem: any FileSystem
    let directory: String
    let segmentBytes: Int

    private(set) var handle: any FileHandle
    private(set) var segmentNumber: UInt64
    /// Where the next record goes: the end of valid data in the current segment.
    private(set) var offset: Int
    private(set) var syncedOffset: Int
    /// How far the records written so far prove the segment synced (invariant 5).
    private(set) var provenThrough: Int
    /// Bytes of valid data in the older segments still on disk (for stats).
    private(set) var olderSegmentsBytes: Int
    private(set) var segmentCount: Int
    /// The file's size: preallocated, zero-filled space ends here.
    private var preallocatedEnd: Int

    init(fileSystem: any FileSystem, directory: String, segmentBytes: Int, handle: any FileHandle,
         segmentNumber: UInt64, offset: Int, provenThrough: Int, fileSize: Int, olderSegmentsBytes: Int, segmentCount: Int) {
        self.fileSystem = fileSystem
        self.directory = directory
        self.segmentBytes = segmentBytes
        self.handle = handle
        self.segmentNumber = segmentNumber
        self.offset = offset
        self.syncedOffset = offset
        self.provenThrough = min(provenThrough, offset)
        self.olderSegmentsBytes = olderSegmentsBytes
        self.segmentCount = segmentCount
        self.preallocatedEnd = fileSize
    }

    /// The size to preallocate a log file to so that it holds `end` bytes.
    static func preallocationTarget(for end: Int) -> Int {
        let step = preallocationStepBytes
        return (end + step - 1) / step * step
    }

    var totalBytes: Int { olderSegmentsBytes + offset }
    var needsRoll: Bool { offset >= segmentBytes }
    var hasUnsyncedBytes: Bool { syncedOffset < offset }

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

    /// Writes already-framed record bytes at the end of the segment. Every record in them
    /// carries `syncedOffset` as its `syncedThrough`.
    func append(_ bytes: [UInt8]) throws {
        let end = offset + bytes.count
        if end > preallocatedEnd {
            let target = WALWriter.preallocationTarget(for: end)
            try handle.preallocate(to: Int64(target))
            preallocatedEnd = target
        }
        try handle.write(bytes, at: Int64(offset))
        offset += bytes.count
        provenThrough = syncedOffset
        checkInvariants()
    }

    /// fdatasync, when anything is unsynced.
    func sync() throws {
        guard hasUnsyncedBytes else { return }
        try handle.sync()
        syncedOffset = offset
        checkInvariants()
    }

    /// True when some written bytes are not yet proven synced by a record of the segment.
    var needsSyncMark: Bool { provenThrough < offset }

    /// Syncs, then, when some bytes are not yet proven synced, appends a sync mark carrying
    /// `sequence` (the last record's) and syncs it too. Afterwards damage to any record of
    /// the segment is corruption, never a torn write (invariant 5).
    func writeSyncMarkIfNeeded(sequence: UInt64) throws {
        try sync()
        guard needsSyncMark else { return }
        let mark = BatchFormat.syncMark(sequence: sequence, syncedThrough: UInt64(syncedOffset))
        var framed: [UInt8] = []
        mark.withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &framed, fileOffset: offset) }
        try append(framed)
        try sync()
        provenThrough = offset
        checkInvariants()
    }

    /// Invariants 1 and 5; compiled into debug builds only.
    func checkInvariants() {
        #if STRATA_INTERNAL_CHECKS
        precondition(provenThrough <= syncedOffset && syncedOffset <= offset,
                     "WAL writer offsets out of order: proven \(provenThrough), synced \(syncedOffset), written \(offset)")
        #endif
    }

    /// Finishes the current segment (synced to its end, invariant 2, with a sync mark so it
    /// proves that itself even if the next segment's creation is cut short by a crash) and
    /// starts the next.
    func roll(lastSequence: UInt64) throws {
        try writeSyncMarkIfNeeded(sequence: lastSequence)
        let next = segmentNumber + 1
        let newHandle = try WALWriter.createSegment(fileSystem: fileSystem, directory: directory, number: next)
        try? handle.close()
        handle = newHandle
        olderSegmentsBytes += offset
        segmentNumber = next
        segmentCount += 1
        offset = WALFormat.headerSize
        syncedOffset = offset
        provenThrough = offset
        preallocatedEnd = WALWriter.preallocationTarget(for: offset)
    }

    func close() throws {
        try handle.close()
    }
}
