@_spi(Engine) import StrataFormat
import StrataIO

/// One segment file being built by a flush or a compaction, and what the manifest will say
/// about it.
struct SegmentOutput {
    let level: Int
    private var builder: SegmentBuilder
    private(set) var smallestKey: [UInt8] = []
    private var smallestSequence = UInt64.max
    private var largestSequence: UInt64 = 0

    init(level: Int, options: StoreOptions) {
        self.level = level
        let compressed = options.compressionFromLevel.map { level >= $0 } ?? false
        // Level 1 is zlib's fastest: reads inflate every block they miss in the cache.
        builder = SegmentBuilder(compressionLevel: compressed ? 1 : nil)
    }

    var entryCount: UInt64 { builder.entryCount }
    var estimatedSize: Int { builder.estimatedSize }

    /// Adds one entry; entries come in internal-key order. Key and value are borrowed: a
    /// flush passes them straight from the memtable, a compaction from its input block.
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
    }

    /// Adds one memtable entry, key and value borrowed from the table's arena (no copy per
    /// entry): a flush's and a checkpoint's way of writing a memtable out.
    mutating func add(_ node: MemTable.Node) throws {
        try add(
            borrowingKey: node.key, sequence: node.sequence, isTombstone: node.isTombstone,
            value: node.isTombstone ? UnsafeRawBufferPointer(start: nil, count: 0) : node.value)
    }

    /// Writes the file as `number`, synced (the caller syncs the directory), and returns its
    /// manifest record.
    mutating func write(number: UInt64, fileSystem fs: any FileSystem, directory: String) throws -> SegmentMeta {
        let (meta, file) = try writeUnsynced(number: number, fileSystem: fs, directory: directory)
        try file.sync()
        return meta
    }

    /// Writes the file as `number` and starts its device writes without waiting for them;
    /// the file counts only once the returned `UnsyncedFile` is synced. A merge syncs each
    /// output while it builds the next, so the sync finds the writes done rather than
    /// blocking the merge for them.
    mutating func writeUnsynced(number: UInt64, fileSystem fs: any FileSystem, directory: String) throws -> (SegmentMeta, UnsyncedFile) {
        let largestKey = builder.lastUserKey
        let bytes = builder.finish()
        let path = fs.path(directory, ManifestFormat.segmentFileName(number))
        let handle = try fs.openFile(path, create: true)
        do {
            try handle.truncate(to: 0)
            try handle.write(bytes, at: 0)
        } catch {
            try? handle.close()
            try? fs.removeFile(path)
            throw error
        }
        // Only a head start for the sync: a failure here is the sync's to report.
        try? handle.startWriteback(offset: 0, count: Int64(bytes.count))
        let meta = SegmentMeta(
            level: level, fileNumber: number, fileSize: UInt64(bytes.count), entryCount: builder.entryCount,
            smallestSequence: builder.entryCount == 0 ? 0 : smallestSequence, largestSequence: largestSequence,
            smallestKey: smallestKey, largestKey: largestKey)
        return (meta, UnsyncedFile(handle: handle, path: path, fileSystem: fs))
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
