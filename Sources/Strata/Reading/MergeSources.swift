@_spi(Engine) import StrataFormat

/// One sorted input of a scan: for each user key in range, the newest version visible at the
/// scan's sequence (tombstones included, so the merge can hide older data), in key order or
/// in reverse.
///
/// A base class rather than a protocol: the merge calls its sources through unmanaged
/// references (no reference counting per entry), which needs a class type. The current entry
/// is in stored properties that `advance()` sets, not behind overridden getters: the merge
/// reads all four for nearly every entry (docs/benchmarks.md, 2026-11-26, late: "a scan's
/// merge without copies or calls per entry").
///
/// Invariants:
/// 1. After `advance()` returns true, `key`, `value`, `sequence` and `isTombstone` describe
///    the entry it moved to, and `value` stays valid until the next `advance()`; after it
///    returns false they are meaningless.
/// 2. `key`'s bytes stay valid through one more `advance()`: until the second call after the
///    one that set them. The merge compares the next entries with the last key it passed
///    where that key lies, instead of copying it (MergingCursor).
/// 3. A source hands out each user key once.
class MergeSource {
    // Per-entry state of the one thread that owns the scan: unchecked, as in MergingCursor.
    @exclusivity(unchecked) final var key = UnsafeRawBufferPointer(start: nil, count: 0)
    @exclusivity(unchecked) final var value = UnsafeRawBufferPointer(start: nil, count: 0)
    @exclusivity(unchecked) final var sequence: UInt64 = 0
    @exclusivity(unchecked) final var isTombstone = false

    /// Moves to the next key, setting the current entry; false when the source is done.
    func advance() throws -> Bool { fatalError("a MergeSource subclass must override advance()") }
}

/// A memtable, through its cursor (node bytes live as long as the table).
final class MemorySource: MergeSource {
    // Per-entry state of one scan's thread: unchecked, as in MergingCursor.
    @exclusivity(unchecked) private var cursor: MemTable.Cursor

    init(table: MemTable, sequence: UInt64, lower: [UInt8], upper: [UInt8]?, reverse: Bool) {
        cursor = MemTable.Cursor(table: table, sequence: sequence, lower: lower, upper: upper, reverse: reverse)
    }

    override func advance() throws -> Bool {
        guard let node = cursor.nextNode() else { return false }
        key = node.key
        value = node.value
        sequence = node.sequence
        isTombstone = node.isTombstone
        return true
    }
}

/// A write transaction's own writes, which shadow everything committed. The entry it hands
/// out is copied into buffers the source owns, so its pointers stay valid until the next
/// `advance()` whatever happens to the transaction's arrays.
final class OverlaySource: MergeSource {
    private let entries: [VersionedEntry]
    private var index = -1
    /// Two, used in turn (invariant 2).
    private let keyBufferA = KeyBuffer()
    private let keyBufferB = KeyBuffer()
    @exclusivity(unchecked) private var keyBufferFlip = false
    private let valueBuffer = KeyBuffer()

    /// `entries` sorted in scan order.
    init(entries: [VersionedEntry]) {
        self.entries = entries
    }

    override func advance() throws -> Bool {
        index += 1
        guard index < entries.count else { return false }
        keyBufferFlip.toggle()
        let keyBuffer = keyBufferFlip ? keyBufferB : keyBufferA
        entries[index].key.withUnsafeBytes { keyBuffer.set($0) }
        (entries[index].value ?? []).withUnsafeBytes { valueBuffer.set($0) }
        key = keyBuffer.bytes
        value = valueBuffer.bytes
        sequence = .max
        isTombstone = entries[index].value == nil
        return true
    }
}

/// A run of segment files whose key ranges do not overlap, in key order: one level >= 1, or a
/// single level-0 file. Forward steps decode in place and allocate nothing; reverse steps copy
/// each entry, since a block can only be decoded front to back.
final class FileSource: MergeSource {
    private let files: [SegmentTable]
    private let visibleSequence: UInt64
    private let lower: [UInt8]
    private let upper: [UInt8]?
    private let reverse: Bool

    // Per-entry state of one scan's thread: unchecked, as in MergingCursor.
    @exclusivity(unchecked) private var fileIndex: Int
    @exclusivity(unchecked) private var blockIndex = 0
    @exclusivity(unchecked) private var cursor: BlockCursor? = nil
    /// The raw entry the cursor holds has not been consumed yet (after a seek).
    @exclusivity(unchecked) private var holdsUnconsumed = false
    private let rawKey = KeyBuffer()
    /// The user keys handed out (forward), in two buffers used in turn (invariant 2); `key`
    /// points at the last, whose older versions are skipped.
    private let lastKeyA = KeyBuffer()
    private let lastKeyB = KeyBuffer()
    @exclusivity(unchecked) private var lastKeyFlip = false
    @exclusivity(unchecked) private var hasLastKey = false
    @exclusivity(unchecked) private var started = false

    // Reverse: copies of the current entry.
    private let reverseKeyA = KeyBuffer()
    private let reverseKeyB = KeyBuffer()
    @exclusivity(unchecked) private var reverseKeyFlip = false
    private let reverseValue = KeyBuffer()
    /// Reverse: the entries of the block being walked, and the next one to hand out.
    private var reverseEntries: [(key: [UInt8], trailer: UInt64, value: [UInt8])] = []
    private var reversePosition = 0
    private var peeked: (key: [UInt8], trailer: UInt64, value: [UInt8])? = nil

    init(files: [SegmentTable], sequence: UInt64, lower: [UInt8], upper: [UInt8]?, reverse: Bool) {
        // Only the files the range can touch.
        let first = Version.firstFile(in: files, endingAtOrAfter: lower)
        var end = files.count
        if let upper {
            end = first
            while end < files.count && files[end].meta.smallestKey.lexicographicallyPrecedes(upper) { end += 1 }
        }
        self.files = first < end ? Array(files[first..<end]) : []
        self.visibleSequence = sequence
        self.lower = lower
        self.upper = upper
        self.reverse = reverse
        self.fileIndex = reverse ? self.files.count - 1 : 0
    }

    override func advance() throws -> Bool {
        reverse ? try advanceBackward() : try advanceForward()
    }

    // MARK: Forward

    private func advanceForward() throws -> Bool {
        while try nextRawForward() {
            // The cursor's key lives in `rawKey`, which this source owns: read it there
            // rather than copying the cursor (and retaining its block) on every entry.
            let rawUserKey = rawKey.userKey
            if hasLastKey && compareKeys(rawUserKey, key) == 0 { continue }
            if let upper, upper.withUnsafeBytes({ compareKeys(rawUserKey, $0) }) >= 0 {
                fileIndex = files.count
                cursor = nil
                return false
            }
            let trailer = rawKey.bytes.loadUnaligned(fromByteOffset: rawKey.count - 8, as: UInt64.self).littleEndian
            if trailer >> 8 > visibleSequence { continue }
            // The key handed out is a copy: the cursor's buffer changes at the next step.
            lastKeyFlip.toggle()
            if lastKeyFlip {
                lastKeyB.setUserKey(of: rawKey)
                key = lastKeyB.bytes
            } else {
                lastKeyA.setUserKey(of: rawKey)
                key = lastKeyA.bytes
            }
            hasLastKey = true
            value = cursor!.value
            sequence = trailer >> 8
            isTombstone = trailer & 0xFF == UInt64(SegmentFormat.EntryKind.tombstone.rawValue)
            return true
        }
        return false
    }

    /// The next raw entry (any sequence) at or after `lower`.
    private func nextRawForward() throws -> Bool {
        while fileIndex < files.count {
            if holdsUnconsumed {
                holdsUnconsumed = false
                return true
            }
            if cursor != nil, try cursor!.next() { return true }
            let file = files[fileIndex]
            if !started {
                // First block of the range: seek to `lower`.
                started = true
                blockIndex = lower.withUnsafeBytes { file.blockIndex(atOrAfter: $0, sequence: SegmentFormat.maxSequence) }
                if blockIndex < file.blockCount {
                    var fresh = BlockCursor(block: try file.block(blockIndex), keyBuffer: rawKey)
                    holdsUnconsumed = try lower.withUnsafeBytes { try fresh.seek(userKey: $0, sequence: SegmentFormat.maxSequence) }
                    cursor = fresh
                    continue
                }
            } else {
                blockIndex += 1
            }
            if blockIndex < file.blockCount {
                cursor = BlockCursor(block: try file.block(blockIndex), keyBuffer: rawKey)
            } else {
                // Next file: every key in it is past this one's, so it starts at block 0.
                fileIndex += 1
                blockIndex = 0
                cursor = nil
                if fileIndex < files.count {
                    cursor = BlockCursor(block: try files[fileIndex].block(0), keyBuffer: rawKey)
                }
            }
        }
        return false
    }

    // MARK: Reverse

    private func advanceBackward() throws -> Bool {
        while let first = try takeRawBackward() {
            // Walking backward, one key's versions come oldest first: the visible one is the
            // last at or below the sequence.
            var candidate = first.trailer >> 8 <= visibleSequence ? first : nil
            while let next = try peekRawBackward(), next.key == first.key {
                peeked = nil
                if next.trailer >> 8 <= visibleSequence { candidate = next }
            }
            if let candidate {
                reverseKeyFlip.toggle()
                let reverseKey = reverseKeyFlip ? reverseKeyB : reverseKeyA
                candidate.key.withUnsafeBytes { reverseKey.set($0) }
                candidate.value.withUnsafeBytes { reverseValue.set($0) }
                key = reverseKey.bytes
                value = reverseValue.bytes
                sequence = candidate.trailer >> 8
                isTombstone = candidate.trailer & 0xFF == UInt64(SegmentFormat.EntryKind.tombstone.rawValue)
                return true
            }
        }
        return false
    }

    private func takeRawBackward() throws -> (key: [UInt8], trailer: UInt64, value: [UInt8])? {
        let entry = try peekRawBackward()
        peeked = nil
        return entry
    }

    /// The next raw entry walking backward from `upper` (exclusive) down to `lower`.
    private func peekRawBackward() throws -> (key: [UInt8], trailer: UInt64, value: [UInt8])? {
        if let peeked { return peeked }
        while fileIndex >= 0 {
            if reversePosition > 0 {
                reversePosition -= 1
                let entry = reverseEntries[reversePosition]
                if let upper, !entry.key.lexicographicallyPrecedes(upper) { continue }
                if entry.key.lexicographicallyPrecedes(lower) {
                    fileIndex = -1
                    return nil
                }
                peeked = entry
                return entry
            }
            let file = files[fileIndex]
            if !started {
                started = true
                if let upper {
                    blockIndex = min(upper.withUnsafeBytes { file.blockIndex(atOrAfter: $0, sequence: SegmentFormat.maxSequence) }, file.blockCount - 1)
                } else {
                    blockIndex = file.blockCount - 1
                }
            } else {
                blockIndex -= 1
                if blockIndex < 0 {
                    fileIndex -= 1
                    if fileIndex < 0 { return nil }
                    blockIndex = files[fileIndex].blockCount - 1
                }
            }
            try loadBlockForReverse(files[fileIndex], blockIndex)
        }
        return nil
    }

    private func loadBlockForReverse(_ file: SegmentTable, _ index: Int) throws {
        reverseEntries.removeAll(keepingCapacity: true)
        reversePosition = 0
        guard index >= 0 && index < file.blockCount else { return }
        var walker = BlockCursor(block: try file.block(index), keyBuffer: rawKey)
        while try walker.next() {
            reverseEntries.append((copyBytes(walker.userKey), walker.trailer, copyBytes(walker.value)))
        }
        reversePosition = reverseEntries.count
    }
}
