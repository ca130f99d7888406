// Builds a segment (SSTable) in memory; the caller writes the bytes to a file, all at the end
// or a stretch at a time as blocks are finished (`drain`). Layout and validity rules:
// docs/format/segment.md.
//
//   segment := dataBlock* filterBlock indexBlock footer
//
// Data blocks are cut at about `blockSize` bytes. The index has one entry per data block,
// added only once the next block's first key is known, so its separator can be a short key
// between the two blocks rather than a copy of the last key.

/// Why `SegmentBuilder.add` refused an entry.
public struct SegmentBuilderError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The entry does not sort strictly after the previous one (user key ascending, then
        /// sequence descending).
        case outOfOrder
        /// The sequence does not fit in 56 bits.
        case sequenceTooLarge
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// Builds one segment from entries added in internal-key order.
public struct SegmentBuilder: Sendable {
    /// zlib level (0 to 9, or -1 for zlib's default) for data and index blocks; nil stores
    /// them uncompressed.
    public let compressionLevel: Int32?
    public let blockSize: Int
    /// The finished blocks not yet handed out by `drain`: the file from `drainedByteCount` on.
    private var file: [UInt8] = []
    /// Bytes of the file already handed out by `drain`.
    public private(set) var drainedByteCount = 0
    private var dataBlock = SegmentBlockBuilder()
    private var indexBlock = SegmentBlockBuilder()
    private var filter: BloomFilter.Builder
    /// The internal key of the last entry added (empty before the first).
    private var lastKey: [UInt8] = []
    /// The user key of the last entry added (empty before the first).
    public var lastUserKey: [UInt8] { lastKey.isEmpty ? [] : Array(lastKey[0..<(lastKey.count - SegmentFormat.internalKeyTrailerSize)]) }
    /// Reused for each entry's internal key, swapped with `lastKey` once added, so a steady
    /// stream of entries allocates nothing.
    private var scratchKey: [UInt8] = []
    private var lastSequence: UInt64 = 0
    /// The last data block written, waiting for the next key to pick its separator.
    private var pendingHandle: SegmentFormat.BlockHandle?
    public private(set) var entryCount: UInt64 = 0
    /// About how large the file would be if finished now (without filter, index and footer).
    public var estimatedSize: Int { drainedByteCount + file.count + dataBlock.estimatedSize }
    /// Bytes of finished blocks held, waiting for `drain` or `finish`.
    public var bufferedByteCount: Int { file.count }
    private var smallestSequence = UInt64.max
    private var largestSequence: UInt64 = 0

    public init(compressionLevel: Int32? = nil, blockSize: Int = SegmentFormat.targetBlockSize, bloomBitsPerKey: Int = SegmentFormat.bloomBitsPerKey) {
        precondition(blockSize >= 1, "block size must be positive")
        self.compressionLevel = compressionLevel
        self.blockSize = blockSize
        self.filter = BloomFilter.Builder(bitsPerKey: bloomBitsPerKey)
    }

    /// Makes room for `byteCount` bytes of finished blocks, so a caller that drains at a
    /// known size holds one buffer of about that size rather than one grown by doubling past
    /// it.
    public mutating func reserveBuffer(_ byteCount: Int) {
        file.reserveCapacity(byteCount)
    }

    /// Adds one entry. Entries must come in strictly ascending internal-key order: user key
    /// ascending (bytewise), and for one user key, sequence descending. A tombstone's value
    /// must be empty.
    public mutating func add(userKey: [UInt8], sequence: UInt64, kind: SegmentFormat.EntryKind, value: [UInt8] = []) throws(SegmentBuilderError) {
        let outcome = userKey.withUnsafeBytes { key in
            value.withUnsafeBytes { raw in
                Result { () throws(SegmentBuilderError) in try add(borrowingKey: key, sequence: sequence, kind: kind, value: raw) }
            }
        }
        try outcome.get()
    }

    /// `add` with key and value borrowed: flushes and compactions pass both straight from
    /// the memtable or the input block, and the builder copies them only into the block, so
    /// adding an entry allocates nothing.
    public mutating func add(
        borrowingKey userKey: UnsafeRawBufferPointer, sequence: UInt64, kind: SegmentFormat.EntryKind,
        value: UnsafeRawBufferPointer
    ) throws(SegmentBuilderError) {
        guard sequence <= SegmentFormat.maxSequence else {
            throw SegmentBuilderError(.sequenceTooLarge, "sequence \(sequence) does not fit in 56 bits")
        }
        precondition(kind == .value || value.isEmpty, "a tombstone has no value")
        // User key ascending; for one user key, sequence strictly descending (two entries of
        // one user key must differ in sequence, whatever their kinds).
        let order =
            entryCount == 0
            ? -1 : lastKey.withUnsafeBytes { compareKeys(UnsafeRawBufferPointer(rebasing: $0.dropLast(SegmentFormat.internalKeyTrailerSize)), userKey) }
        if order > 0 || (order == 0 && sequence >= lastSequence) {
            throw SegmentBuilderError(.outOfOrder, "entry (\(userKey.count)-byte key, sequence \(sequence)) does not sort after the previous entry")
        }
        scratchKey.removeAll(keepingCapacity: true)
        scratchKey.append(contentsOf: userKey)
        // The trailer's eight bytes in one append, not one call per byte.
        withUnsafeBytes(of: SegmentFormat.trailer(sequence: sequence, kind: kind).littleEndian) { scratchKey.append(contentsOf: $0) }
        if let handle = pendingHandle {
            addIndexEntry(separator: Self.separator(lastKey, scratchKey), handle)
            pendingHandle = nil
        }
        if order != 0 { filter.add(hash: BloomFilter.hash(userKey)) }
        // The key borrowed from its buffer: passing the array would retain and release it.
        scratchKey.withUnsafeBytes { dataBlock.add(borrowingKey: $0, value: value) }
        swap(&lastKey, &scratchKey)
        lastSequence = sequence
        entryCount += 1
        smallestSequence = min(smallestSequence, sequence)
        largestSequence = max(largestSequence, sequence)
        if dataBlock.estimatedSize >= blockSize {
            pendingHandle = SegmentFormat.appendBlock(dataBlock.finish(), compressionLevel: compressionLevel, to: &file, at: drainedByteCount)
        }
    }

    /// Adds a value; see `add`.
    public mutating func put(_ userKey: [UInt8], _ value: [UInt8], sequence: UInt64) throws(SegmentBuilderError) {
        try add(userKey: userKey, sequence: sequence, kind: .value, value: value)
    }

    /// Adds a tombstone; see `add`.
    public mutating func delete(_ userKey: [UInt8], sequence: UInt64) throws(SegmentBuilderError) {
        try add(userKey: userKey, sequence: sequence, kind: .tombstone)
    }

    private mutating func addIndexEntry(separator: [UInt8], _ handle: SegmentFormat.BlockHandle) {
        var value = [UInt8]()
        handle.appendVarints(to: &value)
        indexBlock.add(key: separator, value: value)
    }

    /// Hands the finished blocks held so far to `write`, with their offset in the file, and
    /// lets go of them: a caller that writes the file while it is built holds a stretch of
    /// it at a time, not all of it. Call it only once the previous call's bytes are written.
    ///
    /// With an `alignment` above 1, only the bytes up to the last multiple of it (as a file
    /// offset) that they reach are handed out, and the rest are kept, so each write covers
    /// whole aligned stretches of the file; nothing is handed out while the bytes held end
    /// before the next multiple. A flush or merge writes 2 MiB stretches this way: Linux then
    /// caches the file in 2 MiB pages and maps them with one page-table entry each
    /// (`SegmentOutput.defaultWriteBytes`).
    public mutating func drain(alignedTo alignment: Int = 1, _ write: (_ bytes: UnsafeRawBufferPointer, _ offset: Int) throws -> Void) rethrows {
        precondition(alignment > 0, "SegmentBuilder: drain alignment must be positive")
        let count = (drainedByteCount + file.count) / alignment * alignment - drainedByteCount
        guard count > 0 else { return }
        try file.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), drainedByteCount) }
        drainedByteCount += count
        if count == file.count {
            file.removeAll(keepingCapacity: true)
        } else {
            file.removeSubrange(0..<count)
        }
    }

    /// The rest of the segment, which goes at offset `drainedByteCount`: the whole file when
    /// nothing was drained. The builder is spent afterwards.
    public mutating func finish() -> [UInt8] {
        if !dataBlock.isEmpty {
            pendingHandle = SegmentFormat.appendBlock(dataBlock.finish(), compressionLevel: compressionLevel, to: &file, at: drainedByteCount)
        }
        if let handle = pendingHandle {
            addIndexEntry(separator: Self.successor(lastKey), handle)
            pendingHandle = nil
        }
        // Filter bits are random-looking: compressing them would never save 12.5%.
        let filterHandle = SegmentFormat.appendBlock(filter.finish().encoded(), compressionLevel: nil, to: &file, at: drainedByteCount)
        let indexHandle = SegmentFormat.appendBlock(indexBlock.finish(), compressionLevel: compressionLevel, to: &file, at: drainedByteCount)
        let footer = SegmentFormat.Footer(
            indexHandle: indexHandle, filterHandle: filterHandle, entryCount: entryCount,
            smallestSequence: entryCount == 0 ? 0 : smallestSequence, largestSequence: largestSequence)
        file.append(contentsOf: footer.encoded())
        let out = file
        file = []
        return out
    }

    /// All ones: sorts before every real entry of the same user key.
    static let separatorTrailer: [UInt8] = Array(repeating: 0xFF, count: SegmentFormat.internalKeyTrailerSize)

    /// A key k with `last <= k < next` (internal-key order), shorter than `last` when the
    /// user keys allow: the shortest user key between the two, with the all-ones trailer.
    static func separator(_ last: [UInt8], _ next: [UInt8]) -> [UInt8] {
        let lastUser = last.count - SegmentFormat.internalKeyTrailerSize
        let nextUser = next.count - SegmentFormat.internalKeyTrailerSize
        var n = 0
        while n < min(lastUser, nextUser) && last[n] == next[n] { n += 1 }
        if n < min(lastUser, nextUser) && last[n] < 0xFF && last[n] + 1 < next[n] {
            // last[0..<n] + (last[n] + 1) is > last's user key and < next's.
            var key = Array(last[0...n])
            key[n] += 1
            return key + separatorTrailer
        }
        return last
    }

    /// A key k >= `last`, shorter when possible: the first byte that is not 0xFF, plus one.
    static func successor(_ last: [UInt8]) -> [UInt8] {
        let lastUser = last.count - SegmentFormat.internalKeyTrailerSize
        for i in 0..<lastUser where last[i] != 0xFF {
            var key = Array(last[0...i])
            key[i] += 1
            return key + separatorTrailer
        }
        return last
    }
}
