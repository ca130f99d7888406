// Reads a segment (SSTable) from its bytes; layout and validity rules in
// docs/format/segment.md. The footer, filter and index are checked when the reader is
// made; each data block's CRC is checked every time the block is read, so damage is found
// by whichever lookup or scan first touches it.

/// One entry of a segment.
public struct SegmentEntry: Sendable, Equatable {
    public var userKey: [UInt8]
    public var sequence: UInt64
    public var kind: SegmentFormat.EntryKind
    /// Empty for a tombstone.
    public var value: [UInt8]

    public init(userKey: [UInt8], sequence: UInt64, kind: SegmentFormat.EntryKind, value: [UInt8] = []) {
        self.userKey = userKey
        self.sequence = sequence
        self.kind = kind
        self.value = value
    }
}

/// What a segment says about a key at a sequence.
public enum SegmentLookup: Sendable, Equatable {
    /// The newest version at or below the sequence is this value.
    case value([UInt8])
    /// The newest version at or below the sequence is a deletion.
    case tombstone
    /// The segment has no version of the key at or below the sequence.
    case absent
}

/// A decoded segment. Holds its own copy of the bytes.
public struct SegmentReader: Sendable {
    public let bytes: [UInt8]
    public let footer: SegmentFormat.Footer
    public let filter: BloomFilter

    let index: [SegmentIndexEntry]
    /// Blocks end where the footer starts.
    let blockAreaEnd: Int

    /// Validates the footer (magic, CRC, version), then reads and checks the filter and
    /// index blocks.
    public init(_ bytes: [UInt8]) throws(FormatError) {
        self.bytes = bytes
        let tail = try withBorrowedBytes(bytes) { raw throws(FormatError) in try SegmentTail(decoding: raw, tailOffset: 0) }
        footer = tail.footer
        filter = tail.filter
        index = tail.index
        blockAreaEnd = bytes.count - SegmentFormat.footerSize
    }

    /// Copies `bytes` and decodes them; see `init(_: [UInt8])`.
    public init(copying bytes: UnsafeRawBufferPointer) throws(FormatError) {
        try self.init(Array(bytes))
    }

    static func read(_ bytes: [UInt8], _ handle: SegmentFormat.BlockHandle, limit: Int, what: String) throws(FormatError) -> (
        contents: [UInt8], compression: SegmentFormat.Compression
    ) {
        try withBorrowedBytes(bytes) { raw throws(FormatError) in
            try SegmentFormat.readBlock(raw, handle: handle, limit: limit, what: what)
        }
    }

    /// The data blocks, in key order.
    public var dataBlockHandles: [SegmentFormat.BlockHandle] { index.map(\.handle) }

    /// Reads, checks and decodes data block `i` (0 ..< `dataBlockHandles.count`).
    public func dataBlock(_ i: Int) throws(FormatError) -> SegmentBlockReader {
        let handle = index[i].handle
        let block = try Self.read(bytes, handle, limit: blockAreaEnd, what: "data block")
        return try SegmentBlockReader(
            block.contents, blockOffset: Int(handle.offset),
            positionsAreFileOffsets: block.compression == .none)
    }

    /// False if the segment certainly holds no version of `userKey`.
    public func mayContain(_ userKey: [UInt8]) -> Bool { filter.mayContain(userKey) }

    /// The newest version of `userKey` whose sequence is <= `sequence`. Consults the Bloom
    /// filter first, so most absent keys cost no block read.
    public func get(_ userKey: [UInt8], atSequence sequence: UInt64) throws(FormatError) -> SegmentLookup {
        guard filter.mayContain(userKey) else { return .absent }
        var cursor = try seek(userKey: userKey, sequence: sequence)
        guard let entry = try cursor.next(), entry.userKey == userKey else { return .absent }
        return entry.kind == .value ? .value(entry.value) : .tombstone
    }

    /// A cursor before the first entry.
    public func makeCursor() -> Cursor { Cursor(segment: self, blockIndex: 0, block: nil) }

    /// A cursor whose `next()` returns the first entry at or after (`userKey`, `sequence`):
    /// the newest version of `userKey` at or below `sequence`, or else the first entry of a
    /// later user key.
    public func seek(userKey: [UInt8], sequence: UInt64 = SegmentFormat.maxSequence) throws(FormatError) -> Cursor {
        let target = SegmentFormat.seekKey(userKey: userKey, sequence: sequence)
        // First block whose separator is >= target: every earlier block holds only smaller keys.
        var low = 0
        var high = index.count
        while low < high {
            let mid = (low + high) / 2
            if SegmentFormat.compareInternalKeys(index[mid].separator, target) < 0 {
                low = mid + 1
            } else {
                high = mid
            }
        }
        guard low < index.count else { return Cursor(segment: self, blockIndex: index.count, block: nil) }
        let blockCursor = try dataBlock(low).seek(target)
        return Cursor(segment: self, blockIndex: low + 1, block: blockCursor)
    }

    /// Every entry, in order. Also checks that the count matches the footer's.
    public func entries() throws(FormatError) -> [SegmentEntry] {
        var cursor = makeCursor()
        var out = [SegmentEntry]()
        out.reserveCapacity(Int(clamping: min(footer.entryCount, 1 << 20)))
        while let entry = try cursor.next() { out.append(entry) }
        guard UInt64(out.count) == footer.entryCount else {
            throw FormatError(
                .malformed, "segment holds \(out.count) entries, its footer says \(footer.entryCount)", offset: bytes.count - SegmentFormat.footerSize + 48)
        }
        return out
    }

    /// Forward iteration over entries, reading one data block at a time. Not `Sendable`: it
    /// decodes into a buffer of its own.
    public struct Cursor {
        let segment: SegmentReader
        /// The next block to open once `block` is exhausted.
        var blockIndex: Int
        var block: SegmentBlockReader.Cursor?

        public mutating func next() throws(FormatError) -> SegmentEntry? {
            while true {
                if var current = block {
                    let entry = try current.next()
                    block = current
                    if let entry {
                        let offset = current.block.blockOffset
                        let parsed = try SegmentFormat.parseInternalKey(entry.key, offset: offset)
                        if parsed.kind == .tombstone && !entry.value.isEmpty {
                            throw FormatError(.malformed, "tombstone carries a value", offset: offset)
                        }
                        return SegmentEntry(userKey: parsed.userKey, sequence: parsed.sequence, kind: parsed.kind, value: entry.value)
                    }
                }
                guard blockIndex < segment.index.count else { return nil }
                block = try segment.dataBlock(blockIndex).makeCursor()
                blockIndex += 1
            }
        }
    }
}

/// `withUnsafeBytes` for a body that throws `FormatError`: the standard library's version
/// rethrows untyped errors, which would lose the type.
package func withBorrowedBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(FormatError) -> R) throws(FormatError) -> R {
    let result = bytes.withUnsafeBytes { raw in Result { () throws(FormatError) -> R in try body(raw) } }
    return try result.get()
}
