@_spi(Engine) import StrataFormat

/// Merges the sources of a scan into one ordered walk of visible entries: for each user key,
/// the version from the source with the highest sequence wins (Version invariant 1 makes that
/// the newest source); tombstones hide the key. `key` and `value` of the entry just returned
/// stay valid until the next `next()`: the winning source is advanced only then.
///
/// Each source's current key and sequence are cached in plain buffers, so ordering the heap
/// makes no call into the sources. Older versions of a key are dropped as they reach the
/// top, by comparing them with the last key passed, where its source still holds it (one
/// comparison per entry, no copy), rather than by looking for them below the winner.
final class MergingCursor {
    private let sources: [MergeSource]
    /// `sources` again, unretained: the array keeps them alive, and calling through these
    /// copies costs no reference-count traffic on every entry.
    private let unretained: UnsafeMutablePointer<Unmanaged<MergeSource>>
    private let count: Int
    private let keys: UnsafeMutablePointer<UnsafeRawBufferPointer>
    private let sequences: UnsafeMutablePointer<UInt64>
    private let live: UnsafeMutablePointer<Bool>
    /// A binary heap of live source indices in `heap[0..<heapCount]`, ordered by `precedes`:
    /// a step costs about log2(sources) comparisons instead of one per source.
    private let heap: UnsafeMutablePointer<Int>
    // The `@exclusivity(unchecked)` state below is touched on every entry of a scan by the one
    // thread that owns the cursor (cursors are not shared). Left checked, each access paid a
    // runtime exclusivity check, a thread-local lookup, which cost a scan about a tenth of
    // its time.
    @exclusivity(unchecked) private var heapCount = 0
    /// The top source's entry was handed out and must move on at the next call.
    @exclusivity(unchecked) private var pendingCount = 0
    @exclusivity(unchecked) private var started = false
    /// The user key of the last entry passed, visible or a tombstone: any later entry with
    /// the same key is an older version, shadowed. Not a copy: the bytes of the source that
    /// handed it out, which has moved on once since and keeps them valid through that step
    /// (MergeSource invariant 2). It moves again only when its next entry is passed, which
    /// replaces this key first, or skipped, which cannot happen, since that entry's key would
    /// equal this one and a source hands out each key once (MergeSource invariant 3).
    @exclusivity(unchecked) private var lastKey = UnsafeRawBufferPointer(start: nil, count: 0)
    @exclusivity(unchecked) private var hasLastKey = false
    /// The source whose entry `lastKey` is. Its current entry cannot be an older version of
    /// that key (MergeSource invariant 3), so when it is on top again the comparison with
    /// `lastKey` is skipped: in a scan of two interleaved sources most entries follow one
    /// from their own source.
    @exclusivity(unchecked) private var lastSource = -1
    private let reverse: Bool
    /// Hand out tombstones too (a history probe asks what last happened to each key).
    private let includingDeletions: Bool
    /// The sequence of the entry just returned, and whether it is a tombstone (only ever
    /// true when `includingDeletions`).
    @exclusivity(unchecked) private(set) var sequence: UInt64 = 0
    @exclusivity(unchecked) private(set) var isDeletion = false
    @exclusivity(unchecked) private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    @exclusivity(unchecked) private(set) var value = UnsafeRawBufferPointer(start: nil, count: 0)

    init(sources: [MergeSource], reverse: Bool, includingDeletions: Bool = false) {
        self.includingDeletions = includingDeletions
        self.sources = sources
        count = sources.count
        unretained = .allocate(capacity: max(count, 1))
        for (i, source) in sources.enumerated() { (unretained + i).initialize(to: Unmanaged.passUnretained(source)) }
        keys = .allocate(capacity: max(count, 1))
        keys.initialize(repeating: UnsafeRawBufferPointer(start: nil, count: 0), count: max(count, 1))
        sequences = .allocate(capacity: max(count, 1))
        sequences.initialize(repeating: 0, count: max(count, 1))
        live = .allocate(capacity: max(count, 1))
        live.initialize(repeating: false, count: max(count, 1))
        heap = .allocate(capacity: max(count, 1))
        heap.initialize(repeating: 0, count: max(count, 1))
        self.reverse = reverse
    }

    deinit {
        unretained.deinitialize(count: count)
        unretained.deallocate()
        heap.deallocate()
        keys.deallocate()
        sequences.deallocate()
        live.deallocate()
    }

    private func advance(_ i: Int) throws {
        let moved = try unretained[i]._withUnsafeGuaranteedRef { source throws -> Bool in
            guard try source.advance() else { return false }
            keys[i] = source.key
            sequences[i] = source.sequence
            return true
        }
        live[i] = moved
    }

    /// True when source `a`'s entry comes before source `b`'s: key order (or reverse), and
    /// for one key the higher sequence first, so the newest version surfaces.
    @inline(__always)
    private func precedes(_ a: Int, _ b: Int) -> Bool {
        var order = compareKeys(keys[a], keys[b])
        if reverse { order = -order }
        return order < 0 || (order == 0 && sequences[a] > sequences[b])
    }

    private func swap(_ i: Int, _ j: Int) {
        let t = heap[i]
        heap[i] = heap[j]
        heap[j] = t
    }

    private func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            if !precedes(heap[i], heap[parent]) { return }
            swap(i, parent)
            i = parent
        }
    }

    /// Advances the source at the top of the heap and restores the heap. The top's new key
    /// usually belongs near the bottom (the sources interleave), so the hole left at the top
    /// goes down along the preceding children to a leaf, one comparison per level, and the
    /// source climbs back from there: about half the comparisons of a plain sift-down.
    private func advanceTop() throws {
        let top = heap[0]
        try advance(top)
        let item: Int
        if live[top] {
            item = top
        } else {
            heapCount -= 1
            if heapCount == 0 { return }
            item = heap[heapCount]
        }
        var i = 0
        while true {
            let left = 2 * i + 1
            if left >= heapCount { break }
            var child = left
            if left + 1 < heapCount && precedes(heap[left + 1], heap[left]) { child = left + 1 }
            heap[i] = heap[child]
            i = child
        }
        while i > 0 {
            let parent = (i - 1) / 2
            if !precedes(item, heap[parent]) { break }
            heap[i] = heap[parent]
            i = parent
        }
        heap[i] = item
    }

    /// Moves past the top entry, remembering its key for the shadow check.
    private func passTop() throws {
        lastKey = keys[heap[0]]
        lastSource = heap[0]
        hasLastKey = true
        try advanceTop()
    }

    /// The next visible entry; false at the end.
    func next() throws -> Bool {
        if !started {
            started = true
            for i in 0..<count {
                try advance(i)
                if live[i] {
                    heap[heapCount] = i
                    heapCount += 1
                    siftUp(heapCount - 1)
                }
            }
        } else if pendingCount > 0 {
            // The entry handed out last time: its source moves on now.
            pendingCount = 0
            try passTop()
        }
        while heapCount > 0 {
            let winner = heap[0]
            let winnerKey = keys[winner]
            // For one key the newest version surfaces first (`precedes`); the versions after
            // it are older ones in other sources.
            if hasLastKey && winner != lastSource && compareKeys(winnerKey, lastKey) == 0 {
                try advanceTop()
                continue
            }
            let (isTombstone, winnerValue) = unretained[winner]._withUnsafeGuaranteedRef { ($0.isTombstone, $0.value) }
            if isTombstone && !includingDeletions {
                try passTop()
                continue
            }
            key = winnerKey
            value = winnerValue
            sequence = sequences[winner]
            isDeletion = isTombstone
            pendingCount = 1
            return true
        }
        return false
    }
}
