/// Merges the sources of a scan into one ordered walk of visible entries: for each user key,
/// the version from the source with the highest sequence wins (Version invariant 1 makes that
/// the newest source); tombstones hide the key. `key` and `value` of the entry just returned
/// stay valid until the next `next()`: the winning source is advanced only then.
///
/// Scans touch few sources (the memtables, a few level-0 files, one per deeper level), so a
/// linear pick over them costs less than keeping a heap.
final class MergingCursor {
    private let sources: [any MergeSource]
    private var live: [Bool]
    private var started = false
    private let reverse: Bool
    /// Sources whose current entry was used (handed out or shadowed) and must move on.
    private var toAdvance: [Int] = []
    private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var value = UnsafeRawBufferPointer(start: nil, count: 0)

    init(sources: [any MergeSource], reverse: Bool) {
        self.sources = sources
        self.live = Array(repeating: true, count: sources.count)
        self.reverse = reverse
    }

    /// The next visible entry; false at the end.
    func next() throws -> Bool {
        if !started {
            started = true
            for i in sources.indices { live[i] = try sources[i].advance() }
        }
        while true {
            for i in toAdvance { live[i] = try sources[i].advance() }
            toAdvance.removeAll(keepingCapacity: true)
            var best = -1
            for i in sources.indices where live[i] {
                if best < 0 {
                    best = i
                    continue
                }
                var order = compareKeys(sources[i].key, sources[best].key)
                if reverse { order = -order }
                if order < 0 {
                    best = i
                } else if order == 0 && sources[i].sequence > sources[best].sequence {
                    best = i
                }
            }
            if best < 0 { return false }
            let winner = sources[best]
            // Every source at this key moves on; the winner's bytes are needed until the next call.
            for i in sources.indices where live[i] && (i == best || compareKeys(sources[i].key, winner.key) == 0) {
                toAdvance.append(i)
            }
            if winner.isTombstone { continue }
            key = winner.key
            value = winner.value
            return true
        }
    }
}
