@_spi(Engine) import StrataFormat

/// Where each key a write transaction wrote sits in its `entries`: an open-addressing table
/// of 64-bit slots, each the key's `hashKey` (its upper 32 bits) and its position plus one
/// (the lower 32; 0 marks an empty slot).
///
/// A `[HashedKey: Int]` did the same through the standard library's hasher: a seeded SipHash
/// round per lookup on top of `hashKey`, generic dictionary code, and a table that grew by
/// rehashing from a handful of slots, about a tenth of the writer's time in a random fill of
/// 1,000-put transactions. Here a lookup is one `hashKey`, one load, and a key comparison
/// only when the upper hash bits agree.
///
/// Invariants:
/// 1. Each key is in the table at most once, and a slot's position is the key's index in the
///    transaction's `entries` (the caller appends there whatever `position(of:inserting:)`
///    added).
/// 2. At most half the slots are used, so every probe ends at an empty slot.
/// 3. Used only by the thread running the transaction's closure (WriteTransaction is not
///    Sendable).
final class TransactionKeyIndex {
    private var slots: UnsafeMutableBufferPointer<UInt64>
    private var used = 0

    /// A table for at least `capacity` keys.
    init(capacity: Int) {
        slots = TransactionKeyIndex.emptySlots(for: capacity)
    }

    deinit {
        slots.deallocate()
    }

    private static func emptySlots(for keys: Int) -> UnsafeMutableBufferPointer<UInt64> {
        var count = 16
        while count < 2 * keys { count <<= 1 }
        let slots = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: count)
        slots.initialize(repeating: 0)
        return slots
    }

    /// A slot's probe starts at its hash's upper 32 bits (the half the slot keeps), so a
    /// growth places every key from its slot alone (`hashKey` mixes all its bits).
    @inline(__always)
    private static func start(_ hash: UInt64, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: hash >> 32) & mask
    }

    /// The position of `key`, whose `hashKey` is `hash`, if the table holds it. With
    /// `inserting` set, a key not yet held is added at that position and nil is returned.
    /// `holdsKey` says whether the entry at a position has `key`, for the comparison.
    @inline(__always)
    func position(
        of key: UnsafeRawBufferPointer, hash: UInt64, inserting newPosition: Int?, holdsKey: (Int) -> Bool
    ) -> Int? {
        let mask = slots.count - 1
        let upper = hash & 0xFFFF_FFFF_0000_0000
        var index = Self.start(hash, mask)
        while true {
            let slot = slots[index]
            if slot == 0 { break }
            if slot & 0xFFFF_FFFF_0000_0000 == upper {
                let position = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                if holdsKey(position) { return position }
            }
            index = (index + 1) & mask
        }
        guard let newPosition else { return nil }
        assert(newPosition >= 0 && newPosition < 1 << 32, "TransactionKeyIndex: a position must fit the slot's 32 bits")
        slots[index] = upper | UInt64(newPosition + 1)
        used += 1
        if 2 * used > slots.count { grow() }
        assert(2 * used <= slots.count, "TransactionKeyIndex invariant 2: over half the slots used")
        return nil
    }

    /// Twice the slots, refilled from the slots alone (invariant 1: each key is there once,
    /// so no key is compared).
    private func grow() {
        let old = slots
        slots = Self.emptySlots(for: old.count)
        let mask = slots.count - 1
        for slot in old where slot != 0 {
            var index = Self.start(slot, mask)
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = slot
        }
        old.deallocate()
    }
}
