// Decodes the data and index blocks of a segment (docs/format/segment.md, "Blocks"): the
// layout is in SegmentBlockBuilder.swift. Every length is checked, because a block that
// passed its CRC can still have been written by a buggy or newer encoder.

/// One decoded block entry: an internal key and its value (for index blocks, an encoded
/// block handle).
public struct BlockEntry: Sendable, Equatable {
    public var key: [UInt8]
    public var value: [UInt8]

    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

/// A validated block: iterate it with `makeCursor()`, or `seek` to the first entry at or
/// after an internal key.
public struct SegmentBlockReader: Sendable {
    public let contents: [UInt8]
    /// File offset of the block, for errors.
    public let blockOffset: Int
    /// False for decompressed contents, whose positions are not file offsets: errors then
    /// report `blockOffset` itself.
    public let positionsAreFileOffsets: Bool
    /// Where the entries end and the restart array begins.
    let entriesEnd: Int
    let restarts: [Int]

    /// Checks the restart array: a count of at least 1 that fits, offsets strictly
    /// increasing from 0 and inside the entries.
    public init(_ contents: [UInt8], blockOffset: Int = 0, positionsAreFileOffsets: Bool = true) throws(FormatError) {
        self.contents = contents
        self.blockOffset = blockOffset
        self.positionsAreFileOffsets = positionsAreFileOffsets
        let at = { (position: Int) in positionsAreFileOffsets ? blockOffset + position : blockOffset }
        guard contents.count >= 8 else {
            throw FormatError(.truncated, "block of \(contents.count) bytes is too short for its restart array", offset: at(0))
        }
        let count = Int(Self.loadUInt32(contents, contents.count - 4))
        guard count >= 1, count <= (contents.count - 4) / 4 else {
            throw FormatError(.malformed, "block restart count \(count) does not fit the block", offset: at(contents.count - 4))
        }
        let end = contents.count - 4 - 4 * count
        var offsets = [Int]()
        offsets.reserveCapacity(count)
        for i in 0..<count {
            let offset = Int(Self.loadUInt32(contents, end + 4 * i))
            let valid = i == 0 ? offset == 0 : (offset > offsets[i - 1] && offset < end)
            guard valid else {
                throw FormatError(.malformed, "block restart \(i) at \(offset) is out of order or past the entries", offset: at(end + 4 * i))
            }
            offsets.append(offset)
        }
        entriesEnd = end
        restarts = offsets
    }

    static func loadUInt32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    public var restartCount: Int { restarts.count }
    public var isEmpty: Bool { entriesEnd == 0 }

    func errorOffset(_ position: Int) -> Int {
        positionsAreFileOffsets ? blockOffset + position : blockOffset
    }

    /// A position in the block. `next()` decodes one entry and checks that keys ascend.
    public struct Cursor: Sendable {
        public let block: SegmentBlockReader
        var position: Int
        /// The previous entry's key; empty at a restart point (no valid key is empty).
        var key: [UInt8]
        /// Index of the first restart at or after `position`.
        var nextRestart: Int

        init(block: SegmentBlockReader, position: Int, restartIndex: Int) {
            self.block = block
            self.position = position
            self.key = []
            self.nextRestart = restartIndex
        }

        public mutating func next() throws(FormatError) -> BlockEntry? {
            guard position < block.entriesEnd else { return nil }
            let bytes = block.contents
            let end = block.entriesEnd
            let start = position
            var p = position
            let shared = try Self.varint(bytes, &p, end, "shared key length", block)
            let unshared = try Self.varint(bytes, &p, end, "unshared key length", block)
            let valueLength = try Self.varint(bytes, &p, end, "value length", block)
            guard shared <= key.count else {
                throw FormatError(.malformed, "entry shares \(shared) bytes with a \(key.count)-byte previous key", offset: block.errorOffset(start))
            }
            guard unshared <= end - p, valueLength <= end - p - unshared else {
                throw FormatError(.truncated, "block entry runs past the end of the entries", offset: block.errorOffset(start))
            }
            var newKey = Array(key[0..<shared])
            newKey.append(contentsOf: bytes[p..<(p + unshared)])
            p += unshared
            let value = Array(bytes[p..<(p + valueLength)])
            p += valueLength
            // A restart must hold a whole key and start an entry, or binary search would
            // decode garbage.
            let restarts = block.restarts
            if nextRestart < restarts.count && restarts[nextRestart] == start {
                guard shared == 0 else {
                    throw FormatError(.malformed, "restart entry shares \(shared) key bytes", offset: block.errorOffset(start))
                }
                nextRestart += 1
            }
            if nextRestart < restarts.count && restarts[nextRestart] < p {
                throw FormatError(.malformed, "restart \(nextRestart) points inside an entry", offset: block.errorOffset(start))
            }
            guard newKey.count >= SegmentFormat.internalKeyTrailerSize else {
                throw FormatError(.malformed, "block key of \(newKey.count) bytes is shorter than an internal key", offset: block.errorOffset(start))
            }
            if !key.isEmpty && SegmentFormat.compareInternalKeys(key, newKey) >= 0 {
                throw FormatError(.malformed, "block keys are not in ascending order", offset: block.errorOffset(start))
            }
            position = p
            key = newKey
            return BlockEntry(key: newKey, value: value)
        }

        static func varint(_ bytes: [UInt8], _ p: inout Int, _ end: Int, _ what: String, _ block: SegmentBlockReader) throws(FormatError) -> Int {
            let start = p
            var result = 0
            var shift = 0
            while true {
                guard p < end else {
                    throw FormatError(.truncated, "\(what) runs past the end of the entries", offset: block.errorOffset(start))
                }
                let byte = bytes[p]
                p += 1
                result |= Int(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
                // No length in a block can exceed the block, so 4 bytes (28 bits) suffice.
                guard shift < 28 else {
                    throw FormatError(.malformed, "\(what) is too long", offset: block.errorOffset(start))
                }
            }
            guard result <= end else {
                throw FormatError(.malformed, "\(what) \(result) is larger than the block", offset: block.errorOffset(start))
            }
            return result
        }
    }

    /// A cursor before the first entry.
    public func makeCursor() -> Cursor { Cursor(block: self, position: 0, restartIndex: 0) }

    /// Every entry, in order.
    public func entries() throws(FormatError) -> [BlockEntry] {
        var cursor = makeCursor()
        var out = [BlockEntry]()
        while let entry = try cursor.next() { out.append(entry) }
        return out
    }

    /// A cursor whose `next()` returns the first entry whose key is >= `target` (internal-key
    /// order), or nil if there is none in this block. Binary search over the restart points'
    /// full keys, then a linear scan of at most one restart interval.
    public func seek(_ target: [UInt8]) throws(FormatError) -> Cursor {
        // Largest restart whose key is < target; restart 0 if none is.
        var low = 0
        var high = restarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            var probe = Cursor(block: self, position: restarts[mid], restartIndex: mid)
            guard let entry = try probe.next() else { break }
            if SegmentFormat.compareInternalKeys(entry.key, target) < 0 {
                low = mid
            } else {
                high = mid - 1
            }
        }
        var cursor = Cursor(block: self, position: restarts[low], restartIndex: low)
        while true {
            let saved = cursor
            guard let entry = try cursor.next() else { return cursor }
            if SegmentFormat.compareInternalKeys(entry.key, target) >= 0 { return saved }
        }
    }
}
