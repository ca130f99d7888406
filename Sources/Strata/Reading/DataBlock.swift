import CStrata
import StrataFormat

/// One decoded data block of a segment (layout: docs/format/segment.md, "Blocks") in memory
/// this object owns: what the block cache holds, and what compaction reads. Its bytes never
/// change, so a cursor may hand out pointers into them for as long as it holds the block.
final class DataBlock: @unchecked Sendable {
    // @unchecked Sendable: the bytes are written once and only read.
    let contents: UnsafeRawBufferPointer
    private let owned: UnsafeMutableRawBufferPointer
    /// Where the entries end and the restart array begins.
    let entriesEnd: Int
    let restartCount: Int
    /// File offset of the block, for errors.
    let fileOffset: Int
    let fileName: String

    /// Copies decoded `contents`, checking the restart array first (entries are checked as
    /// cursors decode them).
    init(contents: [UInt8], fileOffset: Int, fileName: String) throws {
        let count = try DataBlock.checkRestarts(contents, fileOffset: fileOffset, fileName: fileName)
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(contents.count, 1), alignment: 8)
        contents.withUnsafeBytes { storage.copyMemory(from: $0) }
        owned = storage
        self.contents = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[0..<contents.count])
        restartCount = count
        entriesEnd = contents.count - 4 - 4 * count
        self.fileOffset = fileOffset
        self.fileName = fileName
    }

    deinit {
        owned.deallocate()
    }

    /// The block as cursors read it; the view keeps this object alive.
    var view: BlockView {
        BlockView(contents: contents, entriesEnd: entriesEnd, restartCount: restartCount,
                  fileOffset: fileOffset, fileName: fileName, owner: self)
    }

    /// Checks a block's restart array (count, order, bounds) and returns the count.
    static func checkRestarts(_ contents: [UInt8], fileOffset: Int, fileName: String) throws -> Int {
        do {
            return try SegmentBlockReader(contents, blockOffset: fileOffset, positionsAreFileOffsets: false).restartCount
        } catch {
            throw StoreError(error, file: fileName)
        }
    }

    /// Checks a block's restart array in place, as `SegmentBlockReader` does: a count that
    /// fits, offsets strictly increasing from 0 and inside the entries. Cheap enough to run on
    /// the first read of every mapped block.
    static func checkRestarts(_ contents: UnsafeRawBufferPointer, fileOffset: Int, fileName: String) throws {
        let damaged = StoreError(.corruption, "segment data block has a damaged restart array; run strata-fsck", file: fileName, offset: Int64(fileOffset))
        guard contents.count >= 8 else { throw damaged }
        let count = Int(contents.loadUnaligned(fromByteOffset: contents.count - 4, as: UInt32.self).littleEndian)
        guard count >= 1, count <= (contents.count - 4) / 4 else { throw damaged }
        let end = contents.count - 4 - 4 * count
        var previous = -1
        for i in 0..<count {
            let offset = Int(contents.loadUnaligned(fromByteOffset: end + 4 * i, as: UInt32.self).littleEndian)
            guard i == 0 ? offset == 0 : (offset > previous && offset < end) else { throw damaged }
            previous = offset
        }
    }

    /// Bytes this block costs the cache.
    var cost: Int { contents.count + 64 }
}

/// A data block as a cursor reads it: bytes borrowed from a mapped segment file or from a
/// `DataBlock`, with `owner` keeping them alive. A value, so reading a mapped block
/// allocates nothing.
struct BlockView {
    let contents: UnsafeRawBufferPointer
    /// Where the entries end and the restart array begins.
    let entriesEnd: Int
    let restartCount: Int
    /// File offset of the block, for errors.
    let fileOffset: Int
    let fileName: String
    let owner: AnyObject

    init(contents: UnsafeRawBufferPointer, entriesEnd: Int, restartCount: Int, fileOffset: Int, fileName: String, owner: AnyObject) {
        self.contents = contents
        self.entriesEnd = entriesEnd
        self.restartCount = restartCount
        self.fileOffset = fileOffset
        self.fileName = fileName
        self.owner = owner
    }

    /// Borrows bytes of a mapped file whose restart array was already checked
    /// (`DataBlock.checkRestarts`); `mapping` keeps them alive.
    init(mapped bytes: UnsafeRawBufferPointer, mapping: AnyObject, fileOffset: Int, fileName: String) {
        let count = Int(bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self).littleEndian)
        self.init(contents: bytes, entriesEnd: bytes.count - 4 - 4 * count, restartCount: count,
                  fileOffset: fileOffset, fileName: fileName, owner: mapping)
    }

    /// The entry offset of restart point `i`.
    @inline(__always)
    func restart(_ i: Int) -> Int {
        Int(contents.loadUnaligned(fromByteOffset: entriesEnd + 4 * i, as: UInt32.self).littleEndian)
    }

    func corruption(_ message: String) -> StoreError {
        StoreError(.corruption, "segment data block is damaged (\(message)); run strata-fsck", file: fileName, offset: Int64(fileOffset))
    }
}

/// Walks the entries of a data block forward, decoding keys into a buffer it reuses, so a
/// step allocates nothing. `key` and `value` point into memory the cursor owns or the block
/// holds: valid until the next step.
struct BlockCursor {
    let block: BlockView
    private(set) var position = 0
    /// The current internal key (user key + 8-byte trailer).
    private(set) var keyBuffer: KeyBuffer
    private(set) var valueStart = 0
    private(set) var valueCount = 0

    init(block: BlockView, keyBuffer: KeyBuffer) {
        self.block = block
        self.keyBuffer = keyBuffer
        keyBuffer.count = 0
    }

    var internalKey: UnsafeRawBufferPointer { keyBuffer.bytes }
    var userKey: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: keyBuffer.bytes.dropLast(8)) }
    var trailer: UInt64 { keyBuffer.bytes.loadUnaligned(fromByteOffset: keyBuffer.count - 8, as: UInt64.self).littleEndian }
    var sequence: UInt64 { trailer >> 8 }
    var isTombstone: Bool { trailer & 0xFF == UInt64(SegmentFormat.EntryKind.tombstone.rawValue) }
    var value: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: block.contents.baseAddress! + valueStart, count: valueCount)
    }

    /// Decodes the next entry (the first, on a new cursor) and makes it current; false at
    /// the end of the block.
    mutating func next() throws -> Bool {
        guard position < block.entriesEnd else { return false }
        let bytes = block.contents
        let end = block.entriesEnd
        var p = position
        let shared = try varint(bytes, &p, end)
        let unshared = try varint(bytes, &p, end)
        let valueLength = try varint(bytes, &p, end)
        guard shared <= keyBuffer.count, unshared <= end - p, valueLength <= end - p - unshared else {
            throw block.corruption("an entry runs past the end of the block")
        }
        keyBuffer.replace(keeping: shared, with: UnsafeRawBufferPointer(start: bytes.baseAddress! + p, count: unshared))
        guard keyBuffer.count >= 8 else { throw block.corruption("a key is shorter than its 8-byte trailer") }
        p += unshared
        valueStart = p
        valueCount = valueLength
        position = p + valueLength
        return true
    }

    /// Moves to the first entry at or after the internal key (`userKey`, `sequence`): the
    /// newest version of `userKey` at or below `sequence`, or a later key. False, with no
    /// current entry, if every entry is before it.
    mutating func seek(userKey: UnsafeRawBufferPointer, sequence: UInt64) throws -> Bool {
        let target = SegmentFormat.trailer(sequence: min(sequence, SegmentFormat.maxSequence), kind: .value) | 0xFF
        let base = block.contents.baseAddress!
        // On a store larger than the CPU caches every line below is a miss. Start the first
        // line of each restart together, so the binary search waits for memory once (a
        // block of the default size has about three restarts).
        if block.restartCount <= 8 {
            for i in 1..<block.restartCount { strata_prefetch(base + block.restart(i), 32) }
        }
        // Largest restart whose key is before the target; restart 0 if none is.
        var low = 0, high = block.restartCount - 1
        while low < high {
            let mid = (low + high + 1) / 2
            reset(to: block.restart(mid))
            guard try next() else { break }
            if compareInternal(self.userKey, trailer, userKey, target) < 0 { low = mid } else { high = mid - 1 }
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

    private mutating func reset(to restart: Int) {
        position = restart
        keyBuffer.count = 0
    }

    private func varint(_ bytes: UnsafeRawBufferPointer, _ p: inout Int, _ end: Int) throws -> Int {
        var result = 0
        var shift = 0
        while true {
            guard p < end, shift < 28 else { throw block.corruption("a length field is damaged") }
            let byte = bytes[p]
            p += 1
            result |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }
}

/// A growable byte buffer for decoded keys, reused from entry to entry (a class so that
/// cursors copied by value share it rather than copy it).
final class KeyBuffer {
    // Written for every entry a cursor decodes, by the one thread that owns the cursor:
    // unchecked, as in MergingCursor.
    @exclusivity(unchecked) private(set) var storage: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) var count = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        storage.deallocate()
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }

    /// Keeps the first `shared` bytes and appends `tail`.
    func replace(keeping shared: Int, with tail: UnsafeRawBufferPointer) {
        let needed = shared + tail.count
        if needed > capacity {
            let grown = max(needed, capacity * 2)
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
            fresh.copyMemory(from: storage, byteCount: shared)
            storage.deallocate()
            storage = fresh
            capacity = grown
        }
        if tail.count > 0 { (storage + shared).copyMemory(from: tail.baseAddress!, byteCount: tail.count) }
        count = needed
    }

    func set(_ bytes: UnsafeRawBufferPointer) {
        replace(keeping: 0, with: bytes)
    }
}

/// Orders internal keys given as user key and trailer: user key ascending, then trailer
/// descending (newest first).
@inline(__always)
func compareInternal(_ aKey: UnsafeRawBufferPointer, _ aTrailer: UInt64, _ bKey: UnsafeRawBufferPointer, _ bTrailer: UInt64) -> Int {
    let c = compareKeys(aKey, bKey)
    if c != 0 { return c }
    return aTrailer == bTrailer ? 0 : (aTrailer > bTrailer ? -1 : 1)
}
