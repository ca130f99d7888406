// Builds the data and index blocks of a segment (docs/format/segment.md, "Blocks").
//
//   block   := entry* restart{count} count u32
//   entry   := shared varint | unshared varint | valueLength varint
//              | keySuffix[unshared] | value[valueLength]
//   restart := u32 offset of an entry whose key is stored whole (shared = 0)
//
// Keys share their prefix with the previous key, which sorted keys make long; a full key
// every `restartInterval` entries, or sooner where an entry would take the stretch since the
// last full key past `restartBytes`, lets a reader binary-search without decoding the block.

/// Accumulates sorted entries into one block. The caller adds keys in strictly ascending
/// internal-key order (`SegmentBuilder` checks this); the builder only prefix-compresses.
public struct SegmentBlockBuilder: Sendable {
    /// Entries between two restarts at most.
    public let restartInterval: Int
    /// A restart also comes where an entry would take the bytes since the last one past this
    /// (`SegmentFormat.restartBytes`).
    public let restartBytes: Int
    private var buffer: [UInt8] = []
    private var restarts: [UInt32] = []
    private var sinceRestart = 0
    /// The key of the last entry added (empty before the first).
    public private(set) var lastKey: [UInt8] = []
    public private(set) var entryCount = 0

    public init(restartInterval: Int = SegmentFormat.restartInterval, restartBytes: Int = SegmentFormat.restartBytes) {
        precondition(restartInterval >= 1, "restart interval must be at least 1")
        precondition(restartBytes >= 1, "restart bytes must be at least 1")
        self.restartInterval = restartInterval
        self.restartBytes = restartBytes
    }

    public var isEmpty: Bool { entryCount == 0 }

    /// The size `finish()` would return now.
    public var estimatedSize: Int { buffer.count + 4 * max(restarts.count, 1) + 4 }

    public mutating func add(key: [UInt8], value: [UInt8]) {
        value.withUnsafeBytes { add(key: key, value: $0) }
    }

    /// `add` with the value borrowed.
    public mutating func add(key: [UInt8], value: UnsafeRawBufferPointer) {
        key.withUnsafeBytes { add(borrowingKey: $0, value: value) }
    }

    /// `add` with key and value borrowed: a segment's builder passes each entry's internal
    /// key from a buffer it reuses. Bytes are copied from the pointers, so adding an entry
    /// retains nothing.
    mutating func add(borrowingKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        var shared = 0
        // A restart also when this entry would take the stretch since the last restart past
        // `restartBytes`: a point read walks at most one stretch after its search.
        if entryCount == 0 || sinceRestart == restartInterval || buffer.count - Int(restarts.last!) + key.count + value.count > restartBytes {
            restarts.append(UInt32(buffer.count))
            sinceRestart = 0
        } else {
            let limit = min(lastKey.count, key.count)
            lastKey.withUnsafeBufferPointer { last in
                while shared < limit && last[shared] == key[shared] { shared += 1 }
            }
        }
        buffer.appendVarint(UInt64(shared))
        buffer.appendVarint(UInt64(key.count - shared))
        buffer.appendVarint(UInt64(value.count))
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: key[shared...]))
        buffer.append(contentsOf: value)
        // Copied into the buffer it already has: the caller reuses its own for the next key.
        lastKey.removeAll(keepingCapacity: true)
        lastKey.append(contentsOf: key)
        sinceRestart += 1
        entryCount += 1
    }

    /// The finished block contents; the builder is empty again afterwards. An empty block
    /// still has one restart (offset 0), so every block has the same shape.
    public mutating func finish() -> [UInt8] {
        var out = buffer
        out.reserveCapacity(estimatedSize)
        let offsets = restarts.isEmpty ? [0] : restarts
        for offset in offsets { out.appendLittleEndian(offset) }
        out.appendLittleEndian(UInt32(offsets.count))
        buffer.removeAll(keepingCapacity: true)
        restarts.removeAll(keepingCapacity: true)
        sinceRestart = 0
        lastKey.removeAll(keepingCapacity: true)
        entryCount = 0
        return out
    }
}
