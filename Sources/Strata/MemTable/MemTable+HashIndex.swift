import CStrata
@_spi(Engine) import StrataFormat
import Synchronization

/// A hash index over the memtable for point lookups: key -> the node of its newest version.
/// A get probes it and then walks that key's versions, which sit newest first on the
/// skiplist's bottom level, instead of searching the skiplist (about log n cache misses).
///
/// Invariants:
/// 1. Only the memtable's writer inserts or grows the index (MemTable invariant 1).
/// 2. A slot's hash is stored (release) after its node pointer, so a reader that sees a
///    hash sees a node; a slot's node is replaced (release) only by a newer version of its
///    key. The full hash is kept so growing never has to read the nodes' keys again.
/// 3. Growing builds a complete new table and then publishes it (release); the old tables
///    stay allocated until the memtable is freed, so a reader may finish with either.
///    Whichever table a reader sees holds every key inserted before the reader's snapshot
///    was published, so it finds the newest version of each key it may see, or a newer one.
final class MemTableHashIndex {
    let mask: Int
    /// Slot i is two words: its tag (the key's hash, 0 when empty) at 2i, its node's address
    /// at 2i + 1, so one cache line holds both and a probe or a record misses once, not twice.
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    /// The bytes `slots` was mapped with (`strata_map_pages`), or 0 when it came from the
    /// allocator: a table of 2 MiB or more is mapped in large pages, since each probe lands
    /// on a random slot and in 4 KiB pages most probes of a large table also missed the TLB.
    private let mappedBytes: Int
    // No count of keys here: the object's first line is read by every lookup, and a count
    // the writer updated on every insert would pull that line to the writer's core each
    // time. The memtable counts instead (`MemTable.indexedKeys`).

    /// Where a mapped table came from and goes back to when the index goes (the writer's
    /// chunk pool), or nil.
    private let pool: ArenaChunkPool?

    /// `table`: a mapping of `mappedBytes(capacity:)` from `pool` to use (its contents are
    /// zeroed here); otherwise the pool's, or a fresh one.
    init(capacity: Int, pool: ArenaChunkPool? = nil, table: UnsafeMutableRawPointer? = nil) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        mask = capacity - 1
        self.pool = pool
        let bytes = 2 * capacity * MemoryLayout<UInt64>.stride
        let mapping = Self.mappedBytes(capacity: capacity)
        if let mapping, let reused = table ?? pool?.takeTable(bytes: mapping) {
            // A freed table's mapping, its pages set up; the loop below zeroes its slots.
            slots = reused.bindMemory(to: Atomic<UInt64>.self, capacity: 2 * capacity)
            mappedBytes = mapping
        } else if let mapping, let mapped = strata_map_pages(mapping) {
            // Already set up and zeroed; the loop below only gives the words their type.
            slots = mapped.bindMemory(to: Atomic<UInt64>.self, capacity: 2 * capacity)
            mappedBytes = mapping
        } else {
            slots = .allocate(capacity: 2 * capacity)
            mappedBytes = 0
            // Its pages at once, not a fault each as the loop below reaches them.
            strata_prefault(slots, bytes)
        }
        for word in 0..<(2 * capacity) { (slots + word).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: 2 * (mask + 1))
        if mappedBytes > 0 {
            if !(pool?.giveTable(slots, bytes: mappedBytes) ?? false) { strata_unmap_pages(slots, mappedBytes) }
        } else {
            slots.deallocate()
        }
    }

    @inline(__always)
    var capacity: Int { mask + 1 }

    /// The bytes of the large-page mapping a table of `capacity` slots is made in, or nil
    /// when it is small enough to come from the allocator.
    static func mappedBytes(capacity: Int) -> Int? {
        let bytes = 2 * capacity * MemoryLayout<UInt64>.stride
        let largePage = Int(STRATA_LARGE_PAGE_BYTES)
        return bytes >= largePage ? (bytes + largePage - 1) / largePage * largePage : nil
    }

    /// Slots a table starts with when no size is known.
    static let initialCapacity = 1024

    /// The capacity a new memtable's index starts with when the table before it held `keys`
    /// distinct keys: room for a quarter more than that below the 70% mark, so a table like
    /// the one before fills without the index growing, at most `maxBytes` of slots (then it
    /// grows as it would from the start). Growing copies every slot into a table twice the
    /// size, about a tenth of a bulk load's insert time at 80,000 keys a table, and each
    /// table outgrown stays allocated until the memtable goes (invariant 3), counted in its
    /// size: so a table sized ahead holds as many entries in no more memory
    /// (docs/benchmarks.md, "Memtable indexes sized ahead").
    static func capacity(expecting keys: Int, maxBytes: Int) -> Int {
        let wanted = max(keys, 0) + max(keys, 0) / 4
        let slotBytes = 2 * MemoryLayout<UInt64>.stride
        var capacity = initialCapacity
        while isFull(holding: wanted, capacity: capacity) && (capacity * 2) * slotBytes <= maxBytes { capacity *= 2 }
        return capacity
    }
    /// True when `keys` keys fill it past 70%: the writer then grows it.
    @inline(__always)
    func isFull(holding keys: Int) -> Bool { Self.isFull(holding: keys, capacity: capacity) }

    /// True when `keys` keys fill a table of `capacity` slots past 70%.
    @inline(__always)
    static func isFull(holding keys: Int, capacity: Int) -> Bool { keys * 10 >= capacity * 7 }

    @inline(__always)
    static func tag(_ hash: UInt64) -> UInt64 {
        hash | 1  // never 0, which marks an empty slot
    }

    @inline(__always)
    private func tagWord(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { slots + 2 * slot }
    @inline(__always)
    private func nodeWord(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { slots + 2 * slot + 1 }

    @inline(__always)
    private static func node(_ word: UInt64) -> MemTable.Node {
        MemTable.Node(raw: UnsafeMutableRawPointer(bitPattern: UInt(word))!)
    }

    @inline(__always)
    private static func word(_ node: MemTable.Node) -> UInt64 {
        UInt64(UInt(bitPattern: node.raw))
    }

    /// Writer only: points `key`'s slot at `node`, its newest version. True when the key was
    /// not in the index before.
    @discardableResult
    func record(_ node: MemTable.Node, hash: UInt64) -> Bool {
        let tag = Self.tag(hash)
        var slot = Int(truncatingIfNeeded: tag) & mask  // from the tag, as grown() places it
        while true {
            let found = tagWord(slot).pointee.load(ordering: .relaxed)
            if found == 0 {
                nodeWord(slot).pointee.store(Self.word(node), ordering: .relaxed)
                tagWord(slot).pointee.store(tag, ordering: .releasing)
                return true
            }
            if found == tag {
                let existing = Self.node(nodeWord(slot).pointee.load(ordering: .relaxed))
                if compareKeys(existing.key, node.key) == 0 {
                    if node.sequence > existing.sequence {
                        nodeWord(slot).pointee.store(Self.word(node), ordering: .releasing)
                    }
                    return false
                }
            }
            slot = (slot + 1) & mask
        }
    }

    /// The node of the newest version of `key` recorded, or nil.
    func newest(_ key: UnsafeRawBufferPointer, hash: UInt64) -> MemTable.Node? {
        let tag = Self.tag(hash)
        var slot = Int(truncatingIfNeeded: tag) & mask  // from the tag, as grown() places it
        while true {
            let found = tagWord(slot).pointee.load(ordering: .acquiring)
            if found == 0 { return nil }
            if found == tag {
                let node = Self.node(nodeWord(slot).pointee.load(ordering: .acquiring))
                if compareKeys(node.key, key) == 0 { return node }
            }
            slot = (slot + 1) & mask
        }
    }

    /// Starts loading the line of the slot `record(_:hash:)` will start at, without waiting.
    @inline(__always)
    func prefetch(hash: UInt64) {
        let slot = Int(truncatingIfNeeded: Self.tag(hash)) & mask
        strata_prefetch(tagWord(slot), 2 * MemoryLayout<UInt64>.size)
    }

    /// Writer only: a copy of this index with twice the capacity, built from the stored
    /// hashes alone (each key is in the table once, so no key comparison is needed).
    func grown() -> MemTableHashIndex {
        let larger = MemTableHashIndex(capacity: capacity * 2, pool: pool)
        for slot in 0...mask {
            let tag = tagWord(slot).pointee.load(ordering: .relaxed)
            guard tag != 0 else { continue }
            var target = Int(truncatingIfNeeded: tag) & larger.mask
            while larger.tagWord(target).pointee.load(ordering: .relaxed) != 0 { target = (target + 1) & larger.mask }
            larger.nodeWord(target).pointee.store(nodeWord(slot).pointee.load(ordering: .relaxed), ordering: .relaxed)
            larger.tagWord(target).pointee.store(tag, ordering: .relaxed)
        }
        // The new table is published with a release store (MemTable.publish), which orders
        // these relaxed stores before any reader can reach them.
        return larger
    }
}

/// Chosen at random once per process, so nobody can pick keys that all collide.
private let hashSeed = UInt64.random(in: .min ... .max)

/// A fast 64-bit hash of key bytes for the memtable's index: eight bytes at a time, then a
/// final avalanche (the finalizer of MurmurHash3), so similar keys spread over the table.
@inline(__always)
func hashKey(_ key: UnsafeRawBufferPointer) -> UInt64 {
    var hash: UInt64 = hashSeed ^ UInt64(key.count)
    var index = 0
    while index + 8 <= key.count {
        hash = (hash ^ key.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
        hash ^= hash >> 31
        index += 8
    }
    var tail: UInt64 = 0
    var shift: UInt64 = 0
    while index < key.count {
        tail |= UInt64(key[index]) << shift
        shift += 8
        index += 1
    }
    return avalanche64((hash ^ tail) &* 0x94D0_49BB_1331_11EB)
}
