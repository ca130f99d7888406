import CStrata

// The one decoder of a segment's data blocks (docs/format/segment.md, "Blocks"; the layout
// is built by SegmentBlockBuilder.swift). The engine reads through `BlockCursor` directly; the
// verifier's strict reader (SegmentBlockReader.swift) adds its checks on top of the same
// cursor.
//
// The engine needs these and users do not, so they are SPI (`@_spi(Engine)`): only a module
// that says `@_spi(Engine) import StrataFormat` sees them. They are not `package` because a
// `package` @inlinable function was not inlined into the engine (a separate module) by this
// toolchain: a full scan then called `next()` for every entry and ran at 7.8 million entries
// a second instead of 13.4 million (strata-bench readseq, same machine and hour).

/// A data block's bytes in memory this object owns: what the engine's block cache holds,
/// what compaction reads, and what the verifier checks. The bytes never change, so a cursor
/// may hand out pointers into them for as long as it holds the block.
@_spi(Engine) public final class DataBlock: @unchecked Sendable {
    // @unchecked Sendable: the bytes are written once, in init, and only read after.
    public let contents: UnsafeRawBufferPointer
    private let owned: UnsafeMutableRawBufferPointer
    public let entriesEnd: Int
    public let restartCount: Int
    /// File offset of the block, for errors.
    public let fileOffset: Int
    /// The file's path or name, for errors; its views refer to it.
    public let name: BlockFileName
    public var fileName: String { name.path }

    /// Copies `contents`, checking the restart array first (entries are checked as cursors
    /// decode them). `positionsAreFileOffsets`: the block is stored uncompressed at
    /// `fileOffset`, so errors can name the exact byte.
    public init(contents: [UInt8], fileOffset: Int, fileName: String, positionsAreFileOffsets: Bool = false) throws(FormatError) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(contents.count, 1), alignment: 8)
        contents.withUnsafeBytes { storage.copyMemory(from: $0) }
        let bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[0..<contents.count])
        let count: Int
        do {
            count = try BlockView.checkRestarts(bytes, fileOffset: fileOffset, fileName: fileName, positionsAreFileOffsets: positionsAreFileOffsets)
        } catch {
            storage.deallocate()
            throw error
        }
        owned = storage
        self.contents = bytes
        restartCount = count
        entriesEnd = contents.count - 4 - 4 * count
        self.fileOffset = fileOffset
        name = BlockFileName(fileName)
    }

    deinit {
        owned.deallocate()
    }

    /// The block as cursors read it; the view keeps this object alive.
    public var view: BlockView {
        BlockView(contents: contents, entriesEnd: entriesEnd, restartCount: restartCount, fileOffset: fileOffset, name: name, owner: self)
    }
}

/// The path or name of a file whose blocks are read, for the errors their views report: an
/// object, so that a view can refer to it without counting references (`BlockView` rule 2).
@_spi(Engine) public final class BlockFileName: Sendable {
    public let path: String

    public init(_ path: String) {
        self.path = path
    }
}

/// A data block as a cursor reads it: bytes borrowed from a mapped segment file or from a
/// `DataBlock`. A value, so reading a mapped block allocates nothing.
///
/// Rules for whoever makes one:
/// 1. The bytes stay alive while the view is used: `owner` keeps them, or, when it is nil,
///    whoever reads the block does anyway (a segment table's mapping lives as long as the
///    table, which every reader of its blocks holds).
/// 2. `name` stays alive as long as the bytes do, kept by the same object (the `DataBlock`,
///    the segment table). The view holds it unretained: a retain per block read was a write
///    to a line that every reader thread of the file shares.
@_spi(Engine) public struct BlockView {
    public let contents: UnsafeRawBufferPointer
    /// Where the entries end and the restart array begins.
    public let entriesEnd: Int
    public let restartCount: Int
    /// File offset of the block, for errors.
    public let fileOffset: Int
    /// Unretained (rule 2).
    public unowned(unsafe) let name: BlockFileName
    public let owner: AnyObject?

    /// The file's path or name, for errors.
    public var fileName: String { name.path }

    // Inlinable, as is `init(checked:…)`: called across modules, the name passed in was
    // retained for the call and released inside it, the very write rule 2 avoids.
    @inlinable
    public init(contents: UnsafeRawBufferPointer, entriesEnd: Int, restartCount: Int, fileOffset: Int, name: BlockFileName, owner: AnyObject?) {
        self.contents = contents
        self.entriesEnd = entriesEnd
        self.restartCount = restartCount
        self.fileOffset = fileOffset
        self.name = name
        self.owner = owner
    }

    /// Borrows the bytes of a mapped file after checking their restart array; `mapping`
    /// keeps them alive.
    public init(checking bytes: UnsafeRawBufferPointer, mapping: AnyObject, fileOffset: Int, name: BlockFileName) throws(FormatError) {
        let count = try BlockView.checkRestarts(bytes, fileOffset: fileOffset, fileName: name.path)
        self.init(contents: bytes, entriesEnd: bytes.count - 4 - 4 * count, restartCount: count, fileOffset: fileOffset, name: name, owner: mapping)
    }

    /// Borrows the bytes of a mapped file whose restart array was checked before; `mapping`
    /// keeps them alive, or nil when the caller does (a point read's block is read while
    /// its segment table, which holds the mapping, is held: no retain of the mapping, which
    /// every reader thread would write).
    @inlinable
    public init(checked bytes: UnsafeRawBufferPointer, mapping: AnyObject?, fileOffset: Int, name: BlockFileName) {
        let count = Int(bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self).littleEndian)
        self.init(contents: bytes, entriesEnd: bytes.count - 4 - 4 * count, restartCount: count, fileOffset: fileOffset, name: name, owner: mapping)
    }

    /// Checks a block's restart array: a count of at least 1 that fits, offsets strictly
    /// increasing from 0 and inside the entries. Returns the count. Cheap enough to run on
    /// the first read of every mapped block.
    public static func checkRestarts(
        _ contents: UnsafeRawBufferPointer, fileOffset: Int, fileName: String, positionsAreFileOffsets: Bool = false
    ) throws(FormatError) -> Int {
        let at = { (position: Int) in positionsAreFileOffsets ? fileOffset + position : fileOffset }
        guard contents.count >= 8 else {
            throw FormatError(.truncated, "block of \(contents.count) bytes is too short for its restart array", offset: at(0), file: fileName)
        }
        let count = Int(contents.loadUnaligned(fromByteOffset: contents.count - 4, as: UInt32.self).littleEndian)
        guard count >= 1, count <= (contents.count - 4) / 4 else {
            throw FormatError(.malformed, "block restart count \(count) does not fit the block", offset: at(contents.count - 4), file: fileName)
        }
        let end = contents.count - 4 - 4 * count
        var previous = -1
        for i in 0..<count {
            let offset = Int(contents.loadUnaligned(fromByteOffset: end + 4 * i, as: UInt32.self).littleEndian)
            guard i == 0 ? offset == 0 : (offset > previous && offset < end) else {
                throw FormatError(
                    .malformed, "block restart \(i) at \(offset) is out of order or past the entries", offset: at(end + 4 * i), file: fileName)
            }
            previous = offset
        }
        return count
    }

    /// The entry offset of restart point `i`.
    @inlinable @inline(__always)
    public func restart(_ i: Int) -> Int {
        Int(contents.loadUnaligned(fromByteOffset: entriesEnd + 4 * i, as: UInt32.self).littleEndian)
    }

    /// A damaged block, reported at the block's file offset (entries of a compressed block
    /// have no file offset of their own).
    public func corruption(_ message: String, _ kind: FormatError.Kind = .malformed) -> FormatError {
        FormatError(kind, "segment data block is damaged (\(message))", offset: fileOffset, file: fileName)
    }
}

/// Walks the entries of a data block forward, decoding keys into a buffer it reuses, so a
/// step allocates nothing. `key` and `value` point into memory the cursor owns or the block
/// holds: valid until the next step.
@_spi(Engine) public struct BlockCursor {
    public let block: BlockView
    // Settable at package level only so that the inlinable steps below can write them.
    /// Where the next entry starts.
    public var position = 0
    /// How many key bytes the current entry shares with the one before (the verifier checks
    /// that a restart entry shares none).
    public var shared = 0
    /// The current internal key (user key + 8-byte trailer).
    public let keyBuffer: KeyBuffer
    public var valueStart = 0
    public var valueCount = 0

    public init(block: BlockView, keyBuffer: KeyBuffer) {
        self.block = block
        self.keyBuffer = keyBuffer
        keyBuffer.count = 0
    }

    @inlinable @inline(__always) public var internalKey: UnsafeRawBufferPointer { keyBuffer.bytes }
    @inlinable @inline(__always) public var userKey: UnsafeRawBufferPointer { keyBuffer.userKey }
    @inlinable @inline(__always) public var trailer: UInt64 {
        keyBuffer.bytes.loadUnaligned(fromByteOffset: keyBuffer.count - 8, as: UInt64.self).littleEndian
    }
    @inlinable @inline(__always) public var sequence: UInt64 { trailer >> 8 }
    @inlinable @inline(__always) public var isTombstone: Bool { trailer & 0xFF == UInt64(SegmentFormat.EntryKind.tombstone.rawValue) }
    @inlinable @inline(__always) public var value: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: block.contents.baseAddress! + valueStart, count: valueCount)
    }

    /// Decodes the next entry (the first, on a new cursor) and makes it current; false at
    /// the end of the block.
    @inlinable @inline(__always)
    public mutating func next() throws(FormatError) -> Bool {
        guard position < block.entriesEnd else { return false }
        let bytes = block.contents
        let end = block.entriesEnd
        var p = position
        let (shared, unshared, valueLength) = try lengths(bytes, &p, end)
        guard shared <= keyBuffer.count, unshared <= end - p, valueLength <= end - p - unshared else {
            throw block.corruption("an entry runs past the end of the block", .truncated)
        }
        keyBuffer.replace(keeping: shared, with: bytes, from: p, count: unshared)
        guard keyBuffer.count >= 8 else { throw block.corruption("a key is shorter than its 8-byte trailer") }
        self.shared = shared
        p += unshared
        valueStart = p
        valueCount = valueLength
        position = p + valueLength
        return true
    }

    /// Moves to the first entry at or after the internal key (`userKey`, `sequence`): the
    /// newest version of `userKey` at or below `sequence`, or a later key. False, with no
    /// current entry, if every entry is before it.
    @inlinable
    public mutating func seek(userKey: UnsafeRawBufferPointer, sequence: UInt64) throws(FormatError) -> Bool {
        let target = SegmentFormat.trailer(sequence: min(sequence, SegmentFormat.maxSequence), kind: .value) | 0xFF
        let base = block.contents.baseAddress!
        // On a store larger than the CPU caches every line below is a miss. Start the first
        // line of each restart together, so the binary search waits for memory once (a
        // 4 KiB block of 100-byte values has about five restarts, one every 8 entries; a
        // block with more than 16 has entries so small that its lines are few anyway).
        if block.restartCount <= 16 {
            for i in 1..<block.restartCount { strata_prefetch(base + block.restart(i), 32) }
        }
        // Largest restart whose key is before the target; restart 0 if none is. A restart
        // entry shares no bytes with the one before, so its key is compared where it lies in
        // the block, without decoding it into the key buffer.
        var low = 0
        var high = block.restartCount - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if try compareRestart(mid, userKey, target) < 0 { low = mid } else { high = mid - 1 }
        }
        // Then the lines of the interval to walk: together, rather than one per entry.
        let start = block.restart(low)
        let end = low + 1 < block.restartCount ? block.restart(low + 1) : block.entriesEnd
        strata_prefetch(base + start, end - start)
        reset(to: start)
        while try next() {
            if compareInternal(self.userKey, trailer, userKey, target) >= 0 { return true }
        }
        return false
    }

    /// Compares restart `i`'s internal key, in place, with (`userKey`, `trailer`), as
    /// `compareInternal` does. Throws on an entry that does not fit the block, or that shares
    /// bytes with an entry before it (a restart holds its whole key).
    @inlinable @inline(__always)
    func compareRestart(_ i: Int, _ userKey: UnsafeRawBufferPointer, _ trailer: UInt64) throws(FormatError) -> Int {
        let bytes = block.contents
        let end = block.entriesEnd
        var p = block.restart(i)
        let (shared, keyLength, valueLength) = try lengths(bytes, &p, end)
        guard shared == 0, keyLength >= 8, keyLength <= end - p, valueLength <= end - p - keyLength else {
            throw block.corruption("restart \(i)'s entry shares bytes, is shorter than its trailer or runs past the entries")
        }
        let key = UnsafeRawBufferPointer(start: bytes.baseAddress! + p, count: keyLength - 8)
        let entryTrailer = bytes.loadUnaligned(fromByteOffset: p + keyLength - 8, as: UInt64.self).littleEndian
        return compareInternal(key, entryTrailer, userKey, trailer)
    }

    /// An entry's three lengths (shared key bytes, unshared key bytes, value bytes) from `p`,
    /// which moves past them. The key lengths are almost always under 128, one byte each, and
    /// so is a small value's: those are taken from one load, without the general decoder's
    /// loop.
    @inlinable @inline(__always)
    func lengths(_ bytes: UnsafeRawBufferPointer, _ p: inout Int, _ end: Int) throws(FormatError) -> (Int, Int, Int) {
        if p + 4 <= end {
            let word = bytes.loadUnaligned(fromByteOffset: p, as: UInt32.self).littleEndian
            if word & 0x8080 == 0 {
                if word & 0x80_0000 == 0 {
                    p += 3
                    return (Int(word & 0xFF), Int(word >> 8 & 0xFF), Int(word >> 16 & 0xFF))
                }
                // A value of 128 bytes or more: its length takes the general decoder.
                p += 2
                return (Int(word & 0xFF), Int(word >> 8 & 0xFF), try varint(bytes, &p, end))
            }
        }
        let shared = try varint(bytes, &p, end)
        let unshared = try varint(bytes, &p, end)
        let valueLength = try varint(bytes, &p, end)
        return (shared, unshared, valueLength)
    }

    /// Positions the cursor at `restart`, an entry start holding a whole key.
    @inlinable
    public mutating func reset(to restart: Int) {
        position = restart
        keyBuffer.count = 0
    }

    @inlinable @inline(__always)
    func varint(_ bytes: UnsafeRawBufferPointer, _ p: inout Int, _ end: Int) throws(FormatError) -> Int {
        guard let value = readBlockVarint(bytes, &p, end) else { throw block.corruption("a length field is damaged or runs past the entries") }
        return value
    }
}

/// Decodes a varint of at most 4 bytes (no length in a block exceeds the block) ending before
/// `end`; nil when it runs past `end` or is longer.
@_spi(Engine) @inlinable @inline(__always)
public func readBlockVarint(_ bytes: UnsafeRawBufferPointer, _ p: inout Int, _ end: Int) -> Int? {
    guard case .value(let value) = decodeVarint(bytes, &p, end, maxBytes: 4) else { return nil }
    return Int(value)
}

/// What decoding one varint found.
@_spi(Engine) public enum VarintResult {
    case value(UInt64)
    /// The bytes end before the varint does.
    case truncated
    /// More than `maxBytes` bytes.
    case tooLong
    /// Ten bytes whose value does not fit in 64 bits.
    case overflow
}

/// The one varint decoder (unsigned LEB128: 7 bits a byte, low bits first, the high bit set
/// on every byte but the last), reading `bytes[p..<end]` and moving `p` past what it read.
@_spi(Engine) @inlinable @inline(__always)
public func decodeVarint(_ bytes: UnsafeRawBufferPointer, _ p: inout Int, _ end: Int, maxBytes: Int) -> VarintResult {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    var count = 0
    while true {
        guard count < maxBytes else { return .tooLong }
        guard p < end else { return .truncated }
        let byte = bytes[p]
        p += 1
        count += 1
        if shift == 63 && byte > 1 { return .overflow }
        result |= UInt64(byte & 0x7F) << shift
        if byte & 0x80 == 0 { return .value(result) }
        shift += 7
    }
}

/// A growable byte buffer for decoded keys, reused from entry to entry (a class so that
/// cursors copied by value share it rather than copy it).
@_spi(Engine) public final class KeyBuffer {
    // Written for every entry a cursor decodes, by the one thread that owns the cursor:
    // unchecked, since a checked access costs a thread-local lookup on every entry.
    @exclusivity(unchecked) public var storage: UnsafeMutableRawPointer
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    @exclusivity(unchecked) public var count = 0

    /// The capacity a buffer starts with: longer than most keys.
    public static let defaultCapacity = 64

    public init(capacity: Int = KeyBuffer.defaultCapacity) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        storage.deallocate()
    }

    @inlinable @inline(__always) public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }

    /// The bytes before the last 8: the user key, when the buffer holds an internal key of at
    /// least 8 bytes (as a cursor checks for each entry it decodes). Built from the pointer,
    /// since `bytes.dropLast(8)` compiled to a call per entry of a scan.
    @inlinable @inline(__always) public var userKey: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage, count: max(count - 8, 0))
    }

    /// Copies the user key of `other`, an internal key, into this buffer (its whole contents).
    /// A key of up to 16 bytes in a buffer of at least 24 moves as two 8-byte words, as a
    /// key's tail does in `replace(keeping:with:from:count:)`.
    @inlinable @inline(__always)
    public func setUserKey(of other: KeyBuffer) {
        let userCount = max(other.count - 8, 0)
        replace(keeping: 0, with: UnsafeRawBufferPointer(start: other.storage, count: other.count), from: 0, count: userCount)
    }

    /// Keeps the first `shared` bytes and appends `tail`.
    @inlinable @inline(__always)
    public func replace(keeping shared: Int, with tail: UnsafeRawBufferPointer) {
        let needed = shared + tail.count
        if needed > capacity { grow(to: needed, keeping: shared) }
        if tail.count > 0 { (storage + shared).copyMemory(from: tail.baseAddress!, byteCount: tail.count) }
        count = needed
    }

    /// Keeps the first `shared` bytes and appends `count` bytes of `source` from `start`.
    /// A short tail that lies at least 16 bytes before the end of `source` (a key's tail in
    /// a block, followed by its value or the restart array) is moved as two 8-byte words,
    /// where a call to memcpy for a handful of bytes cost more than the bytes.
    @inlinable @inline(__always)
    public func replace(keeping shared: Int, with source: UnsafeRawBufferPointer, from start: Int, count: Int) {
        if count <= 16 && start + 16 <= source.count && shared + 16 <= capacity {
            let first = source.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            let second = source.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self)
            // Bytes past the new count are scratch: writing them is harmless.
            (storage + shared).storeBytes(of: first, as: UInt64.self)
            (storage + shared + 8).storeBytes(of: second, as: UInt64.self)
            self.count = shared + count
            return
        }
        replace(keeping: shared, with: UnsafeRawBufferPointer(start: source.baseAddress! + start, count: count))
    }

    @usableFromInline
    func grow(to needed: Int, keeping shared: Int) {
        let grown = max(needed, capacity * 2)
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
        fresh.copyMemory(from: storage, byteCount: shared)
        storage.deallocate()
        storage = fresh
        capacity = grown
    }

    public func set(_ bytes: UnsafeRawBufferPointer) {
        replace(keeping: 0, with: bytes)
    }
}

/// Orders internal keys given as user key and trailer: user key ascending, then trailer
/// descending (newest first). The one internal-key comparator: `SegmentFormat.compareInternalKeys`
/// splits whole internal keys and calls it.
@_spi(Engine) @inlinable @inline(__always)
public func compareInternal(_ aKey: UnsafeRawBufferPointer, _ aTrailer: UInt64, _ bKey: UnsafeRawBufferPointer, _ bTrailer: UInt64) -> Int {
    let c = compareKeys(aKey, bKey)
    if c != 0 { return c }
    return aTrailer == bTrailer ? 0 : (aTrailer > bTrailer ? -1 : 1)
}
