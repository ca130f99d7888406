import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import Strata

/// The WAL's small buffered groups go through a window mapped onto the current preallocation
/// step; large groups, groups a sync follows, and groups that cross into the next step use
/// pwrite. Whichever way a group goes, the segment must read back the same, on the simulated
/// file system (where a window writes through its handle) and on a real one (a shared mapping).
@Suite struct WALWriteWindowTests {
    private static func makeWriter(_ fs: any FileSystem, _ directory: String) throws -> WALWriter {
        let handle = try WALWriter.createSegment(fileSystem: fs, directory: directory, number: 1)
        return WALWriter(
            fileSystem: fs, directory: directory, segmentBytes: 8 << 20, inventory: WALInventory([:]), handle: handle,
            segmentNumber: 1, offset: WALFormat.headerSize, provenThrough: WALFormat.headerSize,
            fileSize: WALWriter.preallocationTarget(for: WALFormat.headerSize))
    }

    /// The sequences of the batches in a segment, read back through a fresh handle (what
    /// recovery, the verifier or another process would see).
    private static func sequences(_ fs: any FileSystem, _ directory: String, _ number: UInt64, isLast: Bool) throws -> [UInt64] {
        let bytes = try fs.readWholeFile(fs.path(directory, WALFormat.fileName(number)))
        var found: [UInt64] = []
        _ = try WALSegmentReader.read(bytes, later: isLast ? nil : { nil }, sequenceFloor: nil) { payload, _ in
            let header = try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
            if header.kind == .batch { found.append(header.sequence) }
        }
        return found
    }

    /// Writes 9,000 groups (about 2.4 MiB, so the first segment crosses two preallocation
    /// steps) with a roll after the 6,000th; every 50th group is too large for the window, and
    /// a sync follows every 37th. Checks both segments read back whole and in order, and how
    /// many groups the window took.
    private static func writeAndCheck(_ fs: any FileSystem, _ directory: String) throws {
        let writer = try makeWriter(fs, directory)
        var eligible = 0
        for sequence in 1...9_000 as ClosedRange<UInt64> {
            let large = sequence % 50 == 0
            let synced = sequence % 37 == 0
            if !large && !synced { eligible += 1 }
            var encoder = BatchFormat.Encoder(sequence: sequence, syncedThrough: writer.syncedThrough)
            encoder.put(Array("key-\(sequence)".utf8), [UInt8](repeating: UInt8(truncatingIfNeeded: sequence), count: large ? 6_000 : 200))
            writer.stage(encoder.finish())
            try writer.writeStaged(syncFollows: synced)
            if synced { try writer.sync() }
            if sequence == 6_000 { try writer.roll(lastSequence: sequence) }
        }
        #expect(try writer.isUntouchedPastEnd(), "nothing but zeros follows the last record")
        // Before close: the bytes are the file's as soon as they are written.
        #expect(try sequences(fs, directory, 1, isLast: false) == Array(1...6_000))
        #expect(try sequences(fs, directory, 2, isLast: true) == Array(6_001...9_000))
        // A group that crosses into the next step goes by pwrite: a few per step at most.
        #expect(writer.windowedGroups <= eligible && writer.windowedGroups >= eligible - 8, "\(writer.windowedGroups) of \(eligible)")
        try writer.close()
        #expect(try sequences(fs, directory, 2, isLast: true) == Array(6_001...9_000))
    }

    @Test func groupsReadBackTheSameOnTheSimulatedFileSystem() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/wal")
        try Self.writeAndCheck(fs, "/wal")
    }

    /// A group that reaches the next step leaves the window over a step whose writeback the
    /// same call starts. The window is closed first: a kernel write-protects each mapped page
    /// it writes out, one TLB flush on every core per page (the bug: the window stayed open
    /// until the next group, and a single-put load spent a tenth of its time in those flushes).
    @Test func noStepIsWrittenOutWhileAWindowMapsIt() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/wal")
        try Self.writeAndCheck(fs, "/wal")
        #expect(fs.writebacksUnderOpenWindows.isEmpty, "\(fs.writebacksUnderOpenWindows)")
    }

    @Test func groupsReadBackTheSameOnARealFileSystem() throws {
        let directory = try TemporaryDirectory(label: "wal-window")
        defer { directory.remove() }
        try Self.writeAndCheck(POSIXFileSystem(), directory.path)
    }

    @Test func aRealWindowIsTheFilesBytes() throws {
        let directory = try TemporaryDirectory(label: "write-window")
        defer { directory.remove() }
        let fs = POSIXFileSystem()
        let path = directory.path("file")
        let handle = try fs.openFile(path, create: true)
        try handle.preallocate(to: 2 << 20)
        #expect(try handle.openWriteWindow(offset: 4_096, count: 4_096) == nil, "an offset off the 1 MiB grid")
        guard let window = try handle.openWriteWindow(offset: 1 << 20, count: 1 << 20) else {
            // Not Linux: writes use pwrite there.
            try handle.close()
            return
        }
        #expect(window.range == (1 << 20)..<(2 << 20))
        let bytes: [UInt8] = Array("through the window".utf8)
        try bytes.withUnsafeBytes { try window.write($0, at: (1 << 20) + 10) }
        #expect(try handle.read(at: (1 << 20) + 10, count: bytes.count) == bytes, "pread sees the mapping's bytes")
        try handle.close()
        try bytes.reversed().withUnsafeBytes { try window.write($0, at: (1 << 20) + 100) }
        let reread = try fs.readWholeFile(path)
        #expect(reread.count == 2 << 20)
        #expect(Array(reread[(1 << 20) + 10..<(1 << 20) + 10 + bytes.count]) == bytes)
        #expect(Array(reread[(1 << 20) + 100..<(1 << 20) + 100 + bytes.count]) == Array(bytes.reversed()), "the window outlives close")
    }

    /// Starting a range's writeback, or dropping its cached pages (written back or not),
    /// changes nothing a reader sees, and on a closed handle is an error that names the call,
    /// like every other call there.
    @Test func writebackOfARealFileLeavesItsBytes() throws {
        let directory = try TemporaryDirectory(label: "writeback")
        defer { directory.remove() }
        let fs = POSIXFileSystem()
        let path = directory.path("file")
        let handle = try fs.openFile(path, create: true)
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try handle.write(bytes, at: 0)
        try handle.startWriteback(offset: 0, count: 2 << 20)
        try handle.startWriteback(offset: 2 << 20, count: 1 << 20)
        #expect(try fs.readWholeFile(path) == bytes)
        try handle.sync()
        try handle.dropCachedPages(offset: 0, count: 2 << 20)
        #expect(try fs.readWholeFile(path) == bytes)
        try handle.write([1, 2, 3], at: 5)
        try handle.dropCachedPages(offset: 0, count: 1 << 20)
        #expect(try Array(fs.readWholeFile(path).prefix(8)) == Array(bytes.prefix(5)) + [1, 2, 3], "a dirty page is kept")
        try handle.close()
        #expect(throws: IOError.self) { try handle.startWriteback(offset: 0, count: 1 << 20) }
        #expect(throws: IOError.self) { try handle.dropCachedPages(offset: 0, count: 1 << 20) }
    }
}
