@_spi(Engine) import StrataFormat
import Synchronization

/// The in-memory, sorted, multi-version table every commit is applied to: skiplists of
/// nodes `(key, sequence) -> value | tombstone`, ordered by key ascending, then sequence
/// descending, so the newest version of a key comes first.
///
/// The nodes sit in one or more skiplists, its runs. An insert at a random key walks its run
/// from the top, and each level down is a likely cache miss; in a run of 110,000 nodes (a
/// 16 MiB table of 100-byte values) the walk took about twice as long as in one of 30,000.
/// So once the newest run holds `runLength` nodes (docs/decisions/2026-11-21-memtable.md says
/// why 8,192), an insert that does not continue it in order starts a new run; inserts in key order (a bulk load, a replay) stay in one run,
/// where the finger makes them cheap anyway. Point lookups do not walk the runs: one hash
/// index over all of them leads to a key's newest version. Scans merge the runs, and a flush
/// writes them merged, so a table of several runs becomes one segment file as before.
///
/// Invariants:
/// 1. Only one thread inserts at a time: the writer queue (or recovery before the writer
///    starts; the queue's hand-off orders the two). Any number of threads read concurrently,
///    without locks.
/// 2. A node is written completely before it is linked; links are published with release
///    stores and followed with acquire loads, so a reader that reaches a node sees all of it.
/// 3. Nothing is ever unlinked, changed or freed while the table lives: a reader may hold a
///    node pointer for as long as it holds the table. Memory goes with the table's arena.
/// 4. Each (key, sequence) pair is inserted at most once, in any run. Readers filter by
///    sequence, so an entry newer than a reader's snapshot is invisible to it even after it
///    is linked.
/// 5. Point lookups go through a hash index of each key's newest node over all runs, updated
///    after the node is linked (its own invariants are in MemTable+HashIndex.swift), and
///    before `insert` returns: a batch of inserts may index its nodes a few inserts late,
///    which no reader notices, since none may see their sequence until the writer publishes
///    it after the batch.
/// 6. Runs are only added, never removed, at most `maxRuns`: run i's head is stored before
///    `runCount` is raised past i (release), so a reader that sees the count sees the head.
///    Readers never assume which run holds which versions of a key: they take the newest
///    visible version over all runs.
final class MemTable: @unchecked Sendable {
    // @unchecked Sendable: mutation is confined to the single writer (invariant 1); readers
    // only follow atomically published links to immutable nodes (invariants 2, 3 and 6).

    static let maxHeight = 12
    /// Nodes a run takes before an insert out of order starts the next run.
    static let defaultRunLength = 8_192
    /// Runs a table may have; after that, inserts go to the last one.
    static let maxRuns = 64
    private static let tombstoneLength = UInt32.max

    // Lookups read the fields up to `separation` on every get; the writer writes the fields
    // after it on every insert. The gap keeps the two groups on different cache lines (the
    // compiler lays out a class's stored properties in the order they are declared), so a
    // reader's get does not pull a line from the writer's core that the writer then pulls
    // back (docs/benchmarks.md, 2026-11-26, last: "point reads that retain nothing").

    /// Each run's head node (its address), written once before `runCount` covers it.
    private let heads: UnsafeMutablePointer<UInt>
    /// Each run's current height.
    private let heights: UnsafeMutablePointer<Atomic<Int>>
    private let runCount = Atomic<Int>(0)
    /// The point-lookup index readers use (see MemTableHashIndex), published atomically.
    private let currentIndex = Atomic<UInt>(0)
    private let arena: Arena
    private let runLength: Int
    /// Writer only: the predecessors of the last node inserted, at every level, so an insert
    /// of a larger key (a bulk load in key order) can start its search there instead of at
    /// the head.
    private let finger: UnsafeMutablePointer<Node>
    /// 64 bytes of nothing (see above).
    private let separation: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private let entryCount = Atomic<Int>(0)
    private let payloadBytes = Atomic<Int>(0)
    private let indexBytes = Atomic<Int>(0)
    /// Writer-only state for choosing node heights (invariant 1).
    private var randomState: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// Writer only: the run inserts go to, and the nodes it holds.
    private var currentRun = 0
    private var currentRunEntries = 0
    /// Writer only: keys in the current index, which grows past 70% full.
    private var indexedKeys = 0
    private var lastInserted: Node? = nil
    /// Every index built, kept alive until the table goes (MemTableHashIndex invariant 3).
    /// Writer only.
    private var indexes: [MemTableHashIndex] = []
    /// Slots of the first index, made at the first insert: a table that is never written to
    /// (an idle store's, after a flush) holds none.
    private let firstIndexCapacity: Int

    /// Writer only: gives the arena `pool` (see `init`), for a table made before its writer.
    func useChunkPool(_ pool: ArenaChunkPool) {
        if arena.pool == nil { arena.pool = pool }
    }

    /// `runLength`: nodes a run takes (nil for `defaultRunLength`; tests make it small).
    /// `chunkPool`: where the arena takes its chunks from and gives them back (the writer's).
    /// `indexCapacity`: slots of the hash index made at the first insert (a power of two), or
    /// nil to start small and grow (see `MemTableHashIndex.capacity(expecting:maxBytes:)`).
    init(runLength: Int? = nil, chunkPool: ArenaChunkPool? = nil, indexCapacity: Int? = nil) {
        firstIndexCapacity = indexCapacity ?? MemTableHashIndex.initialCapacity
        self.runLength = max(runLength ?? MemTable.defaultRunLength, 1)
        arena = Arena(pool: chunkPool)
        heads = .allocate(capacity: MemTable.maxRuns)
        heads.initialize(repeating: 0, count: MemTable.maxRuns)
        heights = .allocate(capacity: MemTable.maxRuns)
        for run in 0..<MemTable.maxRuns { (heights + run).initialize(to: Atomic(1)) }
        finger = .allocate(capacity: MemTable.maxHeight)
        startRun()
    }

    deinit {
        finger.deallocate()
        heads.deinitialize(count: MemTable.maxRuns)
        heads.deallocate()
        heights.deinitialize(count: MemTable.maxRuns)
        heights.deallocate()
    }

    /// Writer only: opens a new, empty run and makes it the one inserts go to (invariant 6).
    private func startRun() {
        let head = MemTable.makeNode(
            in: arena, key: UnsafeRawBufferPointer(start: nil, count: 0),
            sequence: 0, value: nil, height: MemTable.maxHeight)
        let run = runCount.load(ordering: .relaxed)
        heads[run] = UInt(bitPattern: head.raw)
        runCount.store(run + 1, ordering: .releasing)
        currentRun = run
        currentRunEntries = 0
        finger.initialize(repeating: head, count: MemTable.maxHeight)  // Node is trivial: no deinitialize needed
        lastInserted = nil
    }

    /// Runs readers may look in (invariant 6).
    var runs: Int { runCount.load(ordering: .acquiring) }

    @inline(__always)
    private func head(_ run: Int) -> Node {
        Node(raw: UnsafeMutableRawPointer(bitPattern: heads[run])!)
    }

    private func publish(_ index: MemTableHashIndex) {
        indexes.append(index)
        indexBytes.add(index.capacity * 2 * MemoryLayout<UInt64>.stride, ordering: .relaxed)
        currentIndex.store(UInt(bitPattern: Unmanaged.passUnretained(index).toOpaque()), ordering: .releasing)
    }

    /// Runs `body` on the current index, nil until the first insert (an empty table holds
    /// nothing). The index is not retained: the table keeps every index it built alive
    /// (`indexes`), and a retain per lookup would write to the index's reference count, a
    /// cache line the writer touches on every insert, so reader and writer would pass it
    /// back and forth between cores.
    @inline(__always)
    private func withIndex<R>(_ body: (MemTableHashIndex) -> R) -> R? {
        guard let raw = UnsafeRawPointer(bitPattern: currentIndex.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<MemTableHashIndex>.fromOpaque(raw)._withUnsafeGuaranteedRef(body)
    }

    /// Visits every version in the table, in (key ascending, sequence descending) order,
    /// whatever its sequence: a flush writes them all. Several runs are merged.
    func forEachNode(_ body: (Node) throws -> Void) rethrows {
        let count = runs
        if count == 1 {
            var node = head(0).next(0)
            while let current = node {
                try body(current)
                node = current.next(0)
            }
            return
        }
        var positions = (0..<count).map { head($0).next(0) }
        while true {
            var first = -1
            for run in 0..<count {
                guard let candidate = positions[run] else { continue }
                if first < 0 || MemTable.nodePrecedes(candidate, positions[first]!) { first = run }
            }
            guard first >= 0, let current = positions[first] else { return }
            try body(current)
            positions[first] = current.next(0)
        }
    }

    /// Number of versions (puts and tombstones) inserted.
    var count: Int { entryCount.load(ordering: .relaxed) }

    /// Writer only: distinct keys inserted (the keys in the hash index).
    var distinctKeys: Int { indexedKeys }

    /// Writer only: the hash index's slots, 0 before it has one; for tests.
    var indexCapacity: Int { withIndex { $0.capacity } ?? 0 }

    /// Checks invariants 3 to 6 over the whole table: each run's bottom level in (key
    /// ascending, sequence descending) order, no (key, sequence) twice in all the runs, the
    /// count matching, and the hash index finding each key's newest node. O(n): the writer
    /// runs it when it seals a table, in debug builds only; tests call it directly.
    func checkInvariants() {
        #if STRATA_INTERNAL_CHECKS
            let count = runs
            precondition(count >= 1 && count <= MemTable.maxRuns, "MemTable invariant 6: \(count) runs")
            for run in 0..<count {
                var node = head(run).next(0)
                while let current = node, let next = current.next(0) {
                    precondition(MemTable.nodePrecedes(current, next), "MemTable invariant 3: run \(run) out of order")
                    node = next
                }
            }
            var previous: Node? = nil
            var nodes = 0
            forEachNode { node in
                nodes += 1
                if let previous {
                    let order = compareKeys(previous.key, node.key)
                    precondition(
                        order < 0 || (order == 0 && previous.sequence > node.sequence),
                        "MemTable invariants 3 and 4: nodes out of order or a (key, sequence) twice")
                }
                if previous.map({ compareKeys($0.key, node.key) != 0 }) ?? true {
                    precondition(
                        findVisible(node.key, at: .max)?.sequence == node.sequence,
                        "MemTable invariant 5: the hash index does not lead to a key's newest version")
                }
                previous = node
            }
            precondition(nodes == self.count, "MemTable: \(nodes) nodes linked but \(self.count) counted")
        #endif
    }

    /// Approximate memory held, in bytes: the nodes and every hash index built.
    var approximateBytes: Int { payloadBytes.load(ordering: .relaxed) + indexBytes.load(ordering: .relaxed) }

    // MARK: Writing (writer only)

    /// Inserts a version. `value == nil` inserts a tombstone.
    func insert(key: UnsafeRawBufferPointer, sequence: UInt64, value: UnsafeRawBufferPointer?) {
        let (node, hash) = link(key: key, sequence: sequence, value: value)
        index(node, hash: hash)
    }

    /// Inserts `count` versions, all at `sequence` (one transaction's writes, each key once):
    /// `entry(i)` gives the i-th key and value (nil for a tombstone). Each node is indexed
    /// `indexLag` inserts after it is linked, so the index slot requested when it was linked
    /// (a likely cache miss, one per insert in a large table) has arrived by then. Every node
    /// is indexed before this returns.
    func insert(
        count: Int, sequence: UInt64, _ entry: (Int) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?)
    ) {
        let lag = MemTable.indexLag
        withUnsafeTemporaryAllocation(of: (node: Node, hash: UInt64).self, capacity: lag) { pending in
            for i in 0..<count {
                let (key, value) = entry(i)
                let linked = link(key: key, sequence: sequence, value: value)
                let slot = i & (lag - 1)
                if i >= lag { index(pending[slot].node, hash: pending[slot].hash) }
                pending[slot] = linked
            }
            for i in max(count - lag, 0)..<count {
                index(pending[i & (lag - 1)].node, hash: pending[i & (lag - 1)].hash)
            }
        }
    }

    /// Inserts between linking a node and indexing it, in `insert(count:sequence:_:)`: a
    /// power of two.
    static let indexLag = 8

    /// Writer only: records `node` in the index, once it is linked (invariant 5), growing the
    /// index when it is full.
    @inline(__always)
    private func index(_ node: Node, hash: UInt64) {
        let keys = indexedKeys
        let added = withIndex { index -> Bool? in
            guard !index.isFull(holding: keys) else { return nil }
            return index.record(node, hash: hash)
        }
        // nil: no index yet, or a full one.
        if let added = added ?? nil {
            if added { indexedKeys += 1 }
        } else {
            let index = withIndex { $0.grown() } ?? firstIndex()
            publish(index)
            if index.record(node, hash: hash) { indexedKeys += 1 }
        }
    }

    /// Writer only: the table's first index. One of `firstIndexCapacity` slots when that is
    /// small enough for the allocator, or when the pool holds a table of its size (a freed
    /// memtable's, or one set up ahead); otherwise a small one that grows as it fills, while
    /// the pool sets one up for the next memtable (`takeTableForFirstIndex`). Fresh large
    /// pages for a 4 MiB table took the writer 3% to 15% of a short bulk load's time
    /// (docs/benchmarks.md, "Memtable indexes sized ahead").
    private func firstIndex() -> MemTableHashIndex {
        guard let pool = arena.pool, firstIndexCapacity > MemTableHashIndex.initialCapacity,
            let bytes = MemTableHashIndex.mappedBytes(capacity: firstIndexCapacity)
        else { return MemTableHashIndex(capacity: firstIndexCapacity, pool: arena.pool) }
        if let table = pool.takeTableForFirstIndex(bytes: bytes) {
            return MemTableHashIndex(capacity: firstIndexCapacity, pool: pool, table: table)
        }
        return MemTableHashIndex(capacity: MemTableHashIndex.initialCapacity, pool: pool)
    }

    /// Writer only: links a new node for the version into the current run and returns it
    /// with its key's hash, for `index`.
    @inline(__always)
    private func link(key: UnsafeRawBufferPointer, sequence: UInt64, value: UnsafeRawBufferPointer?) -> (node: Node, hash: UInt64) {
        // The index slot this insert will write is a likely cache miss: start loading it now,
        // so that it arrives during the walk below instead of after it.
        let hash = hashKey(key)
        withIndex { $0.prefetch(hash: hash) }
        var fingerApplies = lastInserted.map { MemTable.precedes($0, key, sequence) } ?? false
        if !fingerApplies && currentRunEntries >= runLength && runCount.load(ordering: .relaxed) < MemTable.maxRuns {
            startRun()
            fingerApplies = false
        }
        let run = currentRun
        let head = self.head(run)
        // Appending: the last insert was the run's last node and this one follows it (a bulk
        // load in key order). The finger then holds the run's last node on every level, which
        // are exactly the new node's predecessors: no search is needed.
        let appending = fingerApplies && lastInserted?.next(0) == nil
        let node = withUnsafeTemporaryAllocation(of: Node.self, capacity: MemTable.maxHeight) { previous -> Node in
            let previous = previous.baseAddress!
            let oldHeight = heights[run].load(ordering: .relaxed)
            if appending {
                previous.initialize(from: finger, count: oldHeight)
                assert(
                    findGreaterOrEqual(key, sequence, in: run, previous: nil) == nil,
                    "MemTable: an append found a node after the run's last")
            } else {
                let found =
                    fingerApplies
                    ? findAfterFinger(key, sequence, height: oldHeight, previous: previous)
                    : findGreaterOrEqual(key, sequence, in: run, previous: previous)
                assert(
                    found.map { compareKeys($0.key, key) != 0 || $0.sequence != sequence } ?? true,
                    "MemTable invariant 4: (key, sequence) inserted twice")
                assert(
                    found?.raw == findGreaterOrEqual(key, sequence, in: run, previous: nil)?.raw,
                    "MemTable: the search from the finger found another node than the search from the head")
            }
            let height = randomHeight()
            if height > oldHeight {
                for level in oldHeight..<height { (previous + level).initialize(to: head) }
                // Readers that see the new height before the links find nil at the new levels
                // of head, which is correct; no ordering is needed here.
                heights[run].store(height, ordering: .relaxed)
            }
            let node = MemTable.makeNode(in: arena, key: key, sequence: sequence, value: value, height: height)
            for level in 0..<height {
                node.setNextRelaxed(level, previous[level].next(level))
                previous[level].publishNext(level, node)
            }
            let levels = max(height, oldHeight)
            for level in 0..<levels { finger[level] = level < height ? node : previous[level] }
            lastInserted = node
            return node
        }
        currentRunEntries += 1
        // One writer (invariant 1): plain stores, no read-modify-write needed.
        entryCount.store(entryCount.load(ordering: .relaxed) + 1, ordering: .relaxed)
        payloadBytes.store(payloadBytes.load(ordering: .relaxed) + key.count + (value?.count ?? 0) + 24 + 8 * 2, ordering: .relaxed)
        return (node, hash)
    }

    private func randomHeight() -> Int {
        // xorshift64*; a level is added with probability 1/4, as in leveldb.
        var height = 1
        while height < MemTable.maxHeight {
            randomState ^= randomState >> 12
            randomState ^= randomState << 25
            randomState ^= randomState >> 27
            let r = randomState &* 0x2545_F491_4F6C_DD1D
            if r >> 62 != 0 { break }
            height += 1
        }
        return height
    }

    // MARK: Reading (any thread)

    enum Lookup: Equatable {
        case value([UInt8])
        case deleted
        case absent
    }

    /// Starts loading the index slot a lookup of `hash` starts at, without waiting for it, so
    /// that a caller can do other work, or start other tables' misses, before it looks (see
    /// Version.borrowValue).
    func prefetchIndex(hash: UInt64) {
        withIndex { $0.prefetch(hash: hash) }
    }

    /// The node of the newest version of `key` at or below `sequence`: the hash index gives
    /// the newest version of all, and older ones follow it on the bottom level.
    func findVisible(_ key: UnsafeRawBufferPointer, at sequence: UInt64) -> Node? {
        findVisible(key, hash: hashKey(key), at: sequence)
    }

    @inline(__always)
    func findVisible(_ key: UnsafeRawBufferPointer, hash: UInt64, at sequence: UInt64) -> Node? {
        guard let newest = withIndex({ $0.newest(key, hash: hash) }) ?? nil else { return nil }
        if newest.sequence <= sequence { return newest }
        return findOlder(than: newest, key, at: sequence)
    }

    /// `findVisible` for a reader older than the key's newest version, `newest`: apart, so
    /// that the common case stays small enough to inline into a point read.
    @inline(never)
    private func findOlder(than newest: Node, _ key: UnsafeRawBufferPointer, at sequence: UInt64) -> Node? {
        let count = runs
        if count == 1 {
            // One run: older versions follow the newest on the bottom level.
            var node = newest
            while let older = node.next(0), compareKeys(older.key, key) == 0 {
                if older.sequence <= sequence { return older }
                node = older
            }
            return nil
        }
        // Any run may hold some (invariant 6): the newest visible of them all, one search per
        // run (the newest's own included). Rare: only a reader older than the key's latest
        // version comes here.
        var found: Node? = nil
        for run in 0..<count {
            guard let candidate = findGreaterOrEqual(key, sequence, in: run, previous: nil), compareKeys(candidate.key, key) == 0
            else { continue }
            if found.map({ candidate.sequence > $0.sequence }) ?? true { found = candidate }
        }
        return found
    }

    /// `findGreaterOrEqual` for a target after the last insert (the finger applies), searching
    /// up from the finger instead of down from the head. The finger holds, at each level, the
    /// last node there before the last insert's key, and the node after it on level l is never
    /// before the one after it on level l - 1. So once the node after the finger is at or after
    /// the target on some level, it is on every level above, and the finger is the target's
    /// predecessor there too: climbing stops at the first such level, and the search walks down
    /// from the node the level below had reached. Starting from the head instead compared the
    /// target with a node on every level, each far from the last insert and a likely cache
    /// miss, even when the target was a few nodes further on (a transaction's writes in key
    /// order into a large run).
    private func findAfterFinger(
        _ key: UnsafeRawBufferPointer, _ sequence: UInt64, height: Int, previous: UnsafeMutablePointer<Node>
    ) -> Node? {
        var level = 0
        while level < height, let after = finger[level].next(level), MemTable.precedes(after, key, sequence) {
            level += 1
        }
        for upper in level..<max(height, level) { (previous + upper).initialize(to: finger[upper]) }
        if level == 0 { return finger[0].next(0) }
        // The node after the finger on the level below the climb's end precedes the target.
        return descend(from: finger[level - 1].next(level - 1)!, level: level - 1, key, sequence, previous: previous)
    }

    /// First node of `run` at or after (key, sequence) in table order, searching down from
    /// the head. `previous`, when given, receives the node before it on every level.
    func findGreaterOrEqual(
        _ key: UnsafeRawBufferPointer, _ sequence: UInt64, in run: Int, previous: UnsafeMutablePointer<Node>?
    ) -> Node? {
        descend(from: self.head(run), level: heights[run].load(ordering: .relaxed) - 1, key, sequence, previous: previous)
    }

    /// The search's walk: from `start`, which precedes (key, sequence), forward on `level`
    /// while the next node precedes the target, then down a level, to level 0; returns the
    /// first node at or after the target, and the node before it on every level walked in
    /// `previous` when given.
    @inline(__always)
    private func descend(
        from start: Node, level top: Int, _ key: UnsafeRawBufferPointer, _ sequence: UInt64, previous: UnsafeMutablePointer<Node>?
    ) -> Node? {
        var x = start
        var level = top
        // A node found not to precede the target on one level is often the next node on the
        // level below too: skip comparing it again.
        var knownNotPreceding: UnsafeMutableRawPointer? = nil
        while true {
            let next = x.next(level)
            if let n = next, n.raw != knownNotPreceding, MemTable.precedes(n, key, sequence) {
                x = n
            } else {
                knownNotPreceding = next?.raw
                if let previous { (previous + level).initialize(to: x) }
                if level == 0 { return next }
                level -= 1
            }
        }
    }

    /// True when node `a` comes before node `b` in table order.
    @inline(__always)
    private static func nodePrecedes(_ a: Node, _ b: Node) -> Bool {
        precedes(a, b.key, b.sequence)
    }

    /// The last node, over all runs, whose key is less than `key`, or with the largest key
    /// of all when `key` is nil.
    func findLast(before key: UnsafeRawBufferPointer?) -> Node? {
        var last: Node? = nil
        for run in 0..<runs {
            guard let candidate = findLast(before: key, in: run) else { continue }
            if last.map({ compareKeys(candidate.key, $0.key) > 0 }) ?? true { last = candidate }
        }
        return last
    }

    /// The last node of `run` whose key is less than `key`, or its last node when `key` is nil.
    private func findLast(before key: UnsafeRawBufferPointer?, in run: Int) -> Node? {
        let head = self.head(run)
        var x = head
        var level = heights[run].load(ordering: .relaxed) - 1
        while true {
            if let n = x.next(level), key.map({ compareKeys(n.key, $0) < 0 }) ?? true {
                x = n
            } else {
                if level == 0 { return x.raw == head.raw ? nil : x }
                level -= 1
            }
        }
    }

    /// True when `node` comes before (key, sequence) in table order.
    @inline(__always)
    private static func precedes(_ node: Node, _ key: UnsafeRawBufferPointer, _ sequence: UInt64) -> Bool {
        let c = compareKeys(node.key, key)
        return c < 0 || (c == 0 && node.sequence > sequence)
    }

    // MARK: Nodes

    /// A node in the arena. Layout (all little-endian, 8-byte aligned):
    /// sequence u64 | keyLength u32 | valueLength u32 (max = tombstone) | height u32 | pad u32
    /// | next[height] (atomic pointers) | key | value
    struct Node {
        let raw: UnsafeMutableRawPointer

        static let linksOffset = 24

        var sequence: UInt64 { raw.load(as: UInt64.self) }
        var keyLength: Int { Int(raw.load(fromByteOffset: 8, as: UInt32.self)) }
        var valueLength: UInt32 { raw.load(fromByteOffset: 12, as: UInt32.self) }
        var height: Int { Int(raw.load(fromByteOffset: 16, as: UInt32.self)) }
        var isTombstone: Bool { valueLength == MemTable.tombstoneLength }

        private var keyStart: UnsafeMutableRawPointer { raw + Node.linksOffset + 8 * height }
        var key: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: keyStart, count: keyLength) }
        var value: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: keyStart + keyLength, count: isTombstone ? 0 : Int(valueLength))
        }

        @inline(__always)
        private func link(_ level: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
            (raw + Node.linksOffset + 8 * level).assumingMemoryBound(to: Atomic<UInt>.self)
        }

        @inline(__always)
        func next(_ level: Int) -> Node? {
            let bits = link(level).pointee.load(ordering: .acquiring)
            return bits == 0 ? nil : Node(raw: UnsafeMutableRawPointer(bitPattern: bits)!)
        }

        /// For a node not yet linked: no reader can see it, so no ordering is needed.
        @inline(__always)
        func setNextRelaxed(_ level: Int, _ node: Node?) {
            link(level).pointee.store(node.map { UInt(bitPattern: $0.raw) } ?? 0, ordering: .relaxed)
        }

        /// Links `node` after this one; the release pairs with readers' acquire (invariant 2).
        @inline(__always)
        func publishNext(_ level: Int, _ node: Node) {
            link(level).pointee.store(UInt(bitPattern: node.raw), ordering: .releasing)
        }
    }

    private static func makeNode(
        in arena: Arena, key: UnsafeRawBufferPointer, sequence: UInt64,
        value: UnsafeRawBufferPointer?, height: Int
    ) -> Node {
        let valueCount = value?.count ?? 0
        let raw = arena.allocate(Node.linksOffset + 8 * height + key.count + valueCount)
        raw.storeBytes(of: sequence, as: UInt64.self)
        raw.storeBytes(of: UInt32(key.count), toByteOffset: 8, as: UInt32.self)
        raw.storeBytes(of: value == nil ? tombstoneLength : UInt32(valueCount), toByteOffset: 12, as: UInt32.self)
        raw.storeBytes(of: UInt32(height), toByteOffset: 16, as: UInt32.self)
        raw.storeBytes(of: UInt32(0), toByteOffset: 20, as: UInt32.self)
        let links = (raw + Node.linksOffset).bindMemory(to: Atomic<UInt>.self, capacity: height)
        for level in 0..<height { (links + level).initialize(to: Atomic(0)) }
        let keyStart = raw + Node.linksOffset + 8 * height
        if key.count > 0 { keyStart.copyMemory(from: key.baseAddress!, byteCount: key.count) }
        if let value, valueCount > 0 { (keyStart + key.count).copyMemory(from: value.baseAddress!, byteCount: valueCount) }
        return Node(raw: raw)
    }
}

/// A copy of `bytes` as an array: one allocation and one memcpy.
@inline(__always)
func copyBytes(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    // The initializer from a raw buffer is one the standard library ships specialized for
    // UInt8; the generic ones (`unsafeUninitializedCapacity`, `repeating:count:`) look up
    // the array's storage metadata in the runtime's cache on every call, about a third of a
    // 100-byte copy.
    [UInt8](bytes)
}
