// Reads the data and index blocks of a segment strictly (docs/format/segment.md, "Blocks"):
// the layout is in SegmentBlockBuilder.swift, the decoding in BlockCursor.swift. Every
// length and the key order are checked, because a block that passed its CRC can still have
// been written by a buggy or newer encoder.

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
/// after an internal key. The strict reader the verifier (and the format tests) use: it walks
/// the block with the engine's own `BlockCursor` and adds the checks a fast read skips, that
/// keys ascend and that every restart point starts an entry holding a whole key.
public struct SegmentBlockReader: Sendable {
    public let contents: [UInt8]
    /// File offset of the block, for errors.
    public let blockOffset: Int
    /// False for decompressed contents, whose positions are not file offsets: errors then
    /// report `blockOffset` itself.
    public let positionsAreFileOffsets: Bool
    let block: DataBlock

    /// Checks the restart array: a count of at least 1 that fits, offsets strictly
    /// increasing from 0 and inside the entries.
    public init(_ contents: [UInt8], blockOffset: Int = 0, positionsAreFileOffsets: Bool = true) throws(FormatError) {
        self.contents = contents
        self.blockOffset = blockOffset
        self.positionsAreFileOffsets = positionsAreFileOffsets
        block = try DataBlock(contents: contents, fileOffset: blockOffset, fileName: "", positionsAreFileOffsets: positionsAreFileOffsets)
    }

    public var restartCount: Int { block.restartCount }
    public var isEmpty: Bool { block.entriesEnd == 0 }

    func errorOffset(_ position: Int) -> Int {
        positionsAreFileOffsets ? blockOffset + position : blockOffset
    }

    /// A position in the block. `next()` decodes one entry and checks that keys ascend.
    /// Copies are independent: each step decodes against the cursor's own copy of the
    /// previous key, not against whatever the shared decoding buffer last held. Not
    /// `Sendable`.
    public struct Cursor {
        public let block: SegmentBlockReader
        var cursor: BlockCursor
        /// The previous entry's key; empty at a restart point (no valid key is empty).
        var key: [UInt8]
        /// Index of the first restart at or after the cursor's position.
        var nextRestart: Int

        init(block: SegmentBlockReader, position: Int, restartIndex: Int) {
            self.block = block
            cursor = BlockCursor(block: block.block.view, keyBuffer: KeyBuffer())
            cursor.reset(to: position)
            key = []
            nextRestart = restartIndex
        }

        public mutating func next() throws(FormatError) -> BlockEntry? {
            let start = cursor.position
            // This cursor's previous key, whatever another copy decoded since.
            key.withUnsafeBytes { cursor.keyBuffer.set($0) }
            let found: Bool
            do {
                found = try cursor.next()
            } catch {
                throw FormatError(error.kind, error.message, offset: block.errorOffset(start))
            }
            guard found else { return nil }
            let view = block.block.view
            // A restart must hold a whole key and start an entry, or binary search would
            // decode garbage.
            if nextRestart < view.restartCount && view.restart(nextRestart) == start {
                guard cursor.shared == 0 else {
                    throw FormatError(.malformed, "restart entry shares \(cursor.shared) key bytes", offset: block.errorOffset(start))
                }
                nextRestart += 1
            }
            if nextRestart < view.restartCount && view.restart(nextRestart) < cursor.position {
                throw FormatError(.malformed, "restart \(nextRestart) points inside an entry", offset: block.errorOffset(start))
            }
            let newKey = Array(cursor.internalKey)
            if !key.isEmpty && SegmentFormat.compareInternalKeys(key, newKey) >= 0 {
                throw FormatError(.malformed, "block keys are not in ascending order", offset: block.errorOffset(start))
            }
            key = newKey
            return BlockEntry(key: newKey, value: Array(cursor.value))
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
        let view = block.view
        // Largest restart whose key is < target; restart 0 if none is.
        var low = 0
        var high = view.restartCount - 1
        while low < high {
            let mid = (low + high + 1) / 2
            var probe = Cursor(block: self, position: view.restart(mid), restartIndex: mid)
            guard let entry = try probe.next() else { break }
            if SegmentFormat.compareInternalKeys(entry.key, target) < 0 {
                low = mid
            } else {
                high = mid - 1
            }
        }
        var cursor = Cursor(block: self, position: view.restart(low), restartIndex: low)
        while true {
            let saved = cursor
            guard let entry = try cursor.next() else { return cursor }
            if SegmentFormat.compareInternalKeys(entry.key, target) >= 0 { return saved }
        }
    }
}
