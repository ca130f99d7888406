@_spi(Engine) import StrataFormat
import StrataIO

/// One segment file being built by a flush or a compaction, and what the manifest will say
/// about it.
///
/// A flush's or a compaction's output is streamed (`init(level:options:streamingTo:)`): each
/// time the finished blocks held reach `writeBytes`, the whole aligned stretches of
/// `writeBytes` among them are written to the file and their writeback started, so a 16 MiB
/// memtable's flush holds a stretch of its file at a time rather than all of it (in an array
/// that grew by doubling, copied at each step), and the sync at the end finds most of the
/// file on the device already. The file is created when its first bytes are written; until
/// `finish` returns, `abandon` removes it.
struct SegmentOutput {
    /// Where a streamed output's file goes.
    struct Destination {
        let fileSystem: any FileSystem
        let directory: String
        /// Gives the file its number, once, when its first bytes are written.
        let allocateNumber: () -> UInt64
    }

    /// The file once created, until `finish` hands it over.
    private struct OpenFile {
        let number: UInt64
        let path: String
        let handle: any FileHandle
        let fileSystem: any FileSystem
    }

    /// The stretch a streamed output writes at a time, at offsets that are multiples of it,
    /// unless the options say otherwise (`StoreOptions.segmentWriteBytes`). 2 MiB, the size of
    /// an x86-64 or arm64 huge page: where the file system caches files in large folios (XFS,
    /// and ext4 in recent kernels, as on the project's machine), Linux caches a file written in
    /// whole aligned 2 MiB writes in 2 MiB pages and maps each with one page-table entry, so a
    /// read of a store larger than the CPU caches no longer walks the page tables for each
    /// block it meets (the figures are in docs/benchmarks.md). Written a MiB at a time, the
    /// same files were cached in 4 KiB pages. Where files are cached in small pages anyway
    /// (other systems, or files read back in after the cache dropped them), nothing changes.
    static let defaultWriteBytes = 2 << 20

    let level: Int
    private var builder: SegmentBuilder
    private(set) var smallestKey: [UInt8] = []
    private var smallestSequence = UInt64.max
    private var largestSequence: UInt64 = 0
    private let destination: Destination?
    private let writeBytes: Int
    private var file: OpenFile? = nil

    /// `destination`: where to stream the file; nil builds it whole in memory, for
    /// `write(number:fileSystem:directory:)`.
    init(level: Int, options: StoreOptions, streamingTo destination: Destination? = nil) {
        self.level = level
        let compressed = options.compressionFromLevel.map { level >= $0 } ?? false
        // Level 1 is zlib's fastest: reads inflate every block they miss in the cache.
        builder = SegmentBuilder(compressionLevel: compressed ? 1 : nil)
        self.destination = destination
        writeBytes = max(options.segmentWriteBytes ?? SegmentOutput.defaultWriteBytes, 1)
        // A stretch and a few blocks past it: the most a streamed output holds unless a
        // block is unusually large. Grown by doubling instead, a 2 MiB stretch plus one block
        // would ask for a 4 MiB buffer.
        if destination != nil { builder.reserveBuffer(writeBytes + 4 * SegmentFormat.targetBlockSize) }
    }

    var entryCount: UInt64 { builder.entryCount }
    var estimatedSize: Int { builder.estimatedSize }

    /// Adds one entry; entries come in internal-key order. Key and value are borrowed: a
    /// flush passes them straight from the memtable, a compaction from its input block. A
    /// streamed output may write to its file here; if that fails, the file is removed.
    mutating func add(borrowingKey userKey: UnsafeRawBufferPointer, sequence: UInt64, isTombstone: Bool, value: UnsafeRawBufferPointer) throws {
        do {
            try builder.add(
                borrowingKey: userKey, sequence: sequence, kind: isTombstone ? .tombstone : .value,
                value: isTombstone ? UnsafeRawBufferPointer(start: nil, count: 0) : value)
        } catch {
            throw StoreError(.corruption, "entries reached a segment out of order (\(error.message)); this is a bug in Strata")
        }
        if builder.entryCount == 1 { smallestKey = [UInt8](userKey) }
        smallestSequence = min(smallestSequence, sequence)
        largestSequence = max(largestSequence, sequence)
        // The byte count first: binding `destination` copies it (a retain and a release of
        // each of its references), which per entry cost flushes and merges 4% of their time.
        if builder.bufferedByteCount >= writeBytes, let destination { try writeBuffered(to: destination) }
    }

    /// Adds one memtable entry, key and value borrowed from the table's arena (no copy per
    /// entry): a flush's and a checkpoint's way of writing a memtable out.
    mutating func add(_ node: MemTable.Node) throws {
        try add(
            borrowingKey: node.key, sequence: node.sequence, isTombstone: node.isTombstone,
            value: node.isTombstone ? UnsafeRawBufferPointer(start: nil, count: 0) : node.value)
    }

    /// Writes the file as `number`, synced (the caller syncs the directory), and returns its
    /// manifest record. For an output built in memory.
    mutating func write(number: UInt64, fileSystem fs: any FileSystem, directory: String) throws -> SegmentMeta {
        let (meta, file) = try writeUnsynced(number: number, fileSystem: fs, directory: directory)
        try file.sync()
        return meta
    }

    /// Writes the file as `number` and starts its device writes without waiting for them;
    /// the file counts only once the returned `UnsyncedFile` is synced. For an output built
    /// in memory.
    mutating func writeUnsynced(number: UInt64, fileSystem fs: any FileSystem, directory: String) throws -> (SegmentMeta, UnsyncedFile) {
        precondition(destination == nil, "SegmentOutput: a streamed output is finished with finish() or finishUnsynced()")
        return try finishUnsynced(into: Destination(fileSystem: fs, directory: directory, allocateNumber: { number }))
    }

    /// Finishes a streamed output: writes the rest of the file, synced (the caller syncs the
    /// directory), and returns its manifest record.
    mutating func finish() throws -> SegmentMeta {
        let (meta, file) = try finishUnsynced()
        try file.sync()
        return meta
    }

    /// Finishes a streamed output: writes the rest of the file and starts its device writes
    /// without waiting for them; the file counts only once the returned `UnsyncedFile` is
    /// synced. A merge syncs each output while it builds the next, so the sync finds the
    /// writes done rather than blocking the merge for them.
    mutating func finishUnsynced() throws -> (SegmentMeta, UnsyncedFile) {
        guard let destination else { preconditionFailure("SegmentOutput: an output built in memory is written with write(number:...)") }
        return try finishUnsynced(into: destination)
    }

    /// Closes and removes the file a streamed output has begun, if any: for a flush or merge
    /// that stops before `finish`. Nothing names the file yet.
    mutating func abandon() {
        guard let file else { return }
        try? file.handle.close()
        try? file.fileSystem.removeFile(file.path)
        self.file = nil
    }

    private mutating func finishUnsynced(into destination: Destination) throws -> (SegmentMeta, UnsyncedFile) {
        let largestKey = builder.lastUserKey
        let rest = builder.finish()
        let offset = builder.drainedByteCount
        let target = try openedFile(destination)
        do {
            try target.handle.write(rest, at: Int64(offset))
        } catch {
            abandon()
            throw error
        }
        // Only a head start for the sync: a failure here is the sync's to report.
        try? target.handle.startWriteback(offset: Int64(offset), count: Int64(rest.count))
        file = nil
        let meta = SegmentMeta(
            level: level, fileNumber: target.number, fileSize: UInt64(offset + rest.count), entryCount: builder.entryCount,
            smallestSequence: builder.entryCount == 0 ? 0 : smallestSequence, largestSequence: largestSequence,
            smallestKey: smallestKey, largestKey: largestKey)
        return (meta, UnsyncedFile(handle: target.handle, path: target.path, fileSystem: target.fileSystem))
    }

    /// Writes the finished blocks held to the file, creating it first if need be.
    private mutating func writeBuffered(to destination: Destination) throws {
        let target = try openedFile(destination)
        do {
            try builder.drain(alignedTo: writeBytes) { bytes, offset in
                try target.handle.write(bytes, at: Int64(offset))
                // A head start for the sync at the end; a failure here is the sync's to report.
                try? target.handle.startWriteback(offset: Int64(offset), count: Int64(bytes.count))
            }
        } catch {
            abandon()
            throw error
        }
    }

    /// The file, created (empty) under its newly allocated number if it is not yet.
    private mutating func openedFile(_ destination: Destination) throws -> OpenFile {
        if let file { return file }
        let fs = destination.fileSystem
        let number = destination.allocateNumber()
        let path = fs.path(destination.directory, ManifestFormat.segmentFileName(number))
        let handle = try fs.openFile(path, create: true)
        do {
            try handle.truncate(to: 0)
        } catch {
            try? handle.close()
            try? fs.removeFile(path)
            throw error
        }
        let opened = OpenFile(number: number, path: path, handle: handle, fileSystem: fs)
        file = opened
        return opened
    }
}

/// A segment file written but not yet synced (`SegmentOutput.writeUnsynced`): `sync()` makes
/// it durable and closes it, `abandon()` closes and removes it. One of the two must be called.
struct UnsyncedFile {
    let handle: any FileHandle
    let path: String
    let fileSystem: any FileSystem

    func sync() throws {
        do {
            try handle.sync()
            try handle.close()
        } catch {
            abandon()
            throw error
        }
    }

    func abandon() {
        try? handle.close()
        try? fileSystem.removeFile(path)
    }
}
