import StrataFormat
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

    /// Adds one entry; entries come in internal-key order.
    mutating func add(userKey: [UInt8], sequence: UInt64, isTombstone: Bool, value: [UInt8]) throws {
        try value.withUnsafeBytes { try add(userKey: userKey, sequence: sequence, isTombstone: isTombstone, borrowing: $0) }
    }

    /// `add` with the value borrowed (compaction passes it straight from the input block).
    mutating func add(userKey: [UInt8], sequence: UInt64, isTombstone: Bool, borrowing value: UnsafeRawBufferPointer) throws {
        try userKey.withUnsafeBytes { try add(borrowingKey: $0, sequence: sequence, isTombstone: isTombstone, value: value) }
    }

    /// `add` with the key borrowed too: a flush passes it straight from the memtable.
    mutating func add(borrowingKey userKey: UnsafeRawBufferPointer, sequence: UInt64, isTombstone: Bool, value: UnsafeRawBufferPointer) throws {
        do {
            try builder.add(borrowingKey: userKey, sequence: sequence, kind: isTombstone ? .tombstone : .value,
                            value: isTombstone ? UnsafeRawBufferPointer(start: nil, count: 0) : value)
        } catch {
            throw StoreError(.corruption, "entries reached a segment out of order (\(error.message)); this is a bug in Strata")
        }
        if builder.entryCount == 1 { smallestKey = [UInt8](userKey) }
        smallestSequence = min(smallestSequence, sequence)
        largestSequence = max(largestSequence, sequence)
    }

    /// The user key of the last entry added.
    var largestKey: [UInt8] { builder.lastUserKey }

    /// Writes the file as `number`, synced (the caller syncs the directory), and returns its
    /// manifest record.
    mutating func write(number: UInt64, fileSystem fs: any FileSystem, directory: String) throws -> SegmentMeta {
        let largestKey = builder.lastUserKey
        let bytes = builder.finish()
        let path = fs.path(directory, ManifestFormat.segmentFileName(number))
        let handle = try fs.openFile(path, create: true)
        do {
            try handle.truncate(to: 0)
            try handle.write(bytes, at: 0)
            try handle.sync()
            try handle.close()
        } catch {
            try? handle.close()
            try? fs.removeFile(path)
            throw error
        }
        return SegmentMeta(level: level, fileNumber: number, fileSize: UInt64(bytes.count), entryCount: builder.entryCount,
                           smallestSequence: builder.entryCount == 0 ? 0 : smallestSequence, largestSequence: largestSequence,
                           smallestKey: smallestKey, largestKey: largestKey)
    }
}
