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
    /// The block's entries so far: `buffer[0..<used]`. The array is only grown, never
    /// shrunk, and entries are written into it in place: an append per field, each a call with
    /// its own uniqueness and capacity checks, took about a fifth of flushes' and merges' time.
    private var buffer: [UInt8] = []
    private var used = 0
    private var restarts: [UInt32] = []
    private var sinceRestart = 0
    /// The key of the last entry added: `lastKeyBytes[0..<lastKeyCount]`, kept the same way.
    private var lastKeyBytes: [UInt8] = []
    private var lastKeyCount = 0
    public private(set) var entryCount = 0

    /// The key of the last entry added (empty before the first).
    public var lastKey: [UInt8] { Array(lastKeyBytes[0..<lastKeyCount]) }

    public init(restartInterval: Int = SegmentFormat.restartInterval, restartBytes: Int = SegmentFormat.restartBytes) {
        precondition(restartInterval >= 1, "restart interval must be at least 1")
        precondition(restartBytes >= 1, "restart bytes must be at least 1")
        self.restartInterval = restartInterval
        self.restartBytes = restartBytes
    }

    public var isEmpty: Bool { entryCount == 0 }

    /// The size `finish()` would return now.
    public var estimatedSize: Int { used + 4 * max(restarts.count, 1) + 4 }

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
        if entryCount == 0 || sinceRestart == restartInterval || used - Int(restarts.last!) + key.count + value.count > restartBytes {
            restarts.append(UInt32(used))
            sinceRestart = 0
        } else {
            let limit = min(lastKeyCount, key.count)
            lastKeyBytes.withUnsafeBufferPointer { last in
                while shared < limit && last[shared] == key[shared] { shared += 1 }
            }
        }
        let unshared = key.count - shared
        Self.reserve(&buffer, used + 3 * Varint.maxBytes + unshared + value.count)
        used = buffer.withUnsafeMutableBytes { out in
            let base = out.baseAddress!
            var p = used
            p += Varint.store(UInt64(shared), at: base + p)
            p += Varint.store(UInt64(unshared), at: base + p)
            p += Varint.store(UInt64(value.count), at: base + p)
            if unshared > 0 { (base + p).copyMemory(from: key.baseAddress! + shared, byteCount: unshared) }
            p += unshared
            if value.count > 0 { (base + p).copyMemory(from: value.baseAddress!, byteCount: value.count) }
            return p + value.count
        }
        // Copied into the buffer it already has: the caller reuses its own for the next key.
        Self.reserve(&lastKeyBytes, key.count)
        if key.count > 0 {
            lastKeyBytes.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: key.baseAddress!, byteCount: key.count) }
        }
        lastKeyCount = key.count
        sinceRestart += 1
        entryCount += 1
    }

    /// Grows `bytes` (zero-filled) to at least `count` bytes, at least doubling it.
    @inline(__always)
    private static func reserve(_ bytes: inout [UInt8], _ count: Int) {
        if bytes.count < count { bytes.append(contentsOf: [UInt8](repeating: 0, count: max(count, 2 * bytes.count) - bytes.count)) }
    }

    /// The finished block contents; the builder is empty again afterwards. An empty block
    /// still has one restart (offset 0), so every block has the same shape.
    public mutating func finish() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(estimatedSize)
        out.append(contentsOf: buffer[0..<used])
        let offsets = restarts.isEmpty ? [0] : restarts
        for offset in offsets { out.appendLittleEndian(offset) }
        out.appendLittleEndian(UInt32(offsets.count))
        used = 0
        restarts.removeAll(keepingCapacity: true)
        sinceRestart = 0
        lastKeyCount = 0
        entryCount = 0
        return out
    }
}
