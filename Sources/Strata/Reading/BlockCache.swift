@_spi(Engine) import StrataFormat
import StrataIO
import Synchronization

extension DataBlock {
    /// Bytes this block costs the cache.
    var cost: Int { contents.count + 64 }
}

/// Decoded data blocks shared by every reader, within a byte budget.
///
/// Invariants:
/// 1. Each shard's `bytes` is the sum of the costs of the blocks it holds, and after an insert
///    it is at most the shard's budget (unless one block alone is larger, which is not kept).
/// 2. A block is immutable; evicting it only drops the cache's reference, so a cursor that
///    holds the block keeps reading it safely.
///
/// Eviction is CLOCK (second chance): a hit sets a block's bit, the hand clears bits and
/// evicts the first block whose bit is clear. It costs one lock per lookup, with the keys
/// spread over shards so concurrent readers rarely meet.
final class BlockCache: Sendable {
    struct Key: Hashable {
        let file: UInt64
        let offset: UInt64
    }

    private struct Slot {
        var key: Key
        var block: DataBlock
        var referenced: Bool
    }

    private struct Shard {
        var slots: [Slot] = []
        var positions: [Key: Int] = [:]
        var hand = 0
        var bytes = 0
    }

    private static let shardCount = 8
    let capacity: Int
    private let shardBudget: Int
    private let shards: [Locked<Shard>]

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        shardBudget = self.capacity / BlockCache.shardCount
        shards = (0..<BlockCache.shardCount).map { _ in Locked(Shard()) }
    }

    private func shard(_ key: Key) -> Locked<Shard> {
        let mixed = (key.file &* 0x9E37_79B9_7F4A_7C15) ^ (key.offset &* 0xC2B2_AE3D_27D4_EB4F)
        return shards[Int(truncatingIfNeeded: (mixed >> 29) % UInt64(BlockCache.shardCount))]
    }

    func get(_ key: Key) -> DataBlock? {
        guard shardBudget > 0 else { return nil }
        return shard(key).withLock { shard in
            guard let i = shard.positions[key] else { return nil }
            shard.slots[i].referenced = true
            return shard.slots[i].block
        }
    }

    func insert(_ key: Key, _ block: DataBlock) {
        let cost = block.cost
        guard cost <= shardBudget else { return }
        shard(key).withLock { shard in
            guard shard.positions[key] == nil else { return }
            while shard.bytes + cost > shardBudget, !shard.slots.isEmpty {
                Self.evictOne(&shard)
            }
            shard.positions[key] = shard.slots.count
            shard.slots.append(Slot(key: key, block: block, referenced: false))
            shard.bytes += cost
            Self.checkInvariants(shard, budget: shardBudget)
        }
    }

    /// Invariant 1, and that `positions` indexes `slots` exactly; compiled into debug builds
    /// only. Under the shard's lock, after every insert.
    private static func checkInvariants(_ shard: Shard, budget: Int) {
        #if STRATA_INTERNAL_CHECKS
            precondition(shard.bytes <= budget, "BlockCache invariant 1: shard over budget")
            precondition(shard.bytes == shard.slots.reduce(0) { $0 + $1.block.cost }, "BlockCache invariant 1: byte count drifted")
            precondition(shard.positions.count == shard.slots.count, "BlockCache: positions and slots disagree")
            for (key, index) in shard.positions {
                precondition(shard.slots[index].key == key, "BlockCache: a position points at another block")
            }
        #endif
    }

    private static func evictOne(_ shard: inout Shard) {
        while true {
            if shard.hand >= shard.slots.count { shard.hand = 0 }
            if shard.slots[shard.hand].referenced {
                shard.slots[shard.hand].referenced = false
                shard.hand += 1
                continue
            }
            let victim = shard.slots[shard.hand]
            shard.bytes -= victim.block.cost
            shard.positions[victim.key] = nil
            // Move the last slot into the hole, keeping positions in step.
            let last = shard.slots.count - 1
            if shard.hand != last {
                shard.slots[shard.hand] = shard.slots[last]
                shard.positions[shard.slots[shard.hand].key] = shard.hand
            }
            shard.slots.removeLast()
            return
        }
    }

    /// Bytes held now, over all shards.
    var bytes: Int {
        shards.reduce(0) { total, shard in total + shard.withLock { $0.bytes } }
    }
}
