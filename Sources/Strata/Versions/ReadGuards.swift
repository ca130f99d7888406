import StrataIO
import Synchronization

/// Slots through which a point read announces the Version it reads without retaining it
/// (`PublishedState.withGuardedView`), so that the writer's thread does not release that
/// Version under it. A retain and release of the shared Version on every get, and the lock
/// that hands it out, were writes to memory every reader thread shares: with four reader
/// threads on two cores, a tenth of the gets' time went to moving those cache lines between
/// the cores.
///
/// One table serves the process: a thread claims a slot on its first guarded read and gives
/// it back when it ends (`ReadScratch`). Each slot has a cache line of its own, so a reader
/// writes only memory no other thread writes.
///
/// Invariants:
/// 1. A slot belongs to at most one thread, which alone stores into it; it holds 0 or the
///    address of the Version its thread is reading.
/// 2. Every store into a slot, every load of a scan (`isGuarding`) and every store of
///    `claimedSlots` is sequentially consistent, and so are `PublishedState`'s changes of its
///    generation: a reader that stored a slot and then found the generation unchanged is
///    seen by every scan that starts after the Version it read stopped being current
///    (PublishedState invariant 4).
/// 3. A slot is given back only with 0 in it.
final class ReadGuards: @unchecked Sendable {
    // @unchecked Sendable: `slots` is touched only through atomics, and `free` under its lock.

    /// The process's table. Threads past its capacity read through the lock and a retain,
    /// as every read did before; 256 covers any thread pool an app runs reads on.
    static let shared = ReadGuards(capacity: 256)

    /// Bytes between slots: one cache line each.
    private static let stride = 64

    let capacity: Int
    private let slots: UnsafeMutableRawPointer
    /// Unclaimed slots; the lowest is handed out first, so scans stay short.
    private let free: Locked<[Int]>
    /// One past the highest slot ever claimed: a scan stops there.
    private let claimedSlots = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = capacity
        slots = .allocate(byteCount: capacity * ReadGuards.stride, alignment: ReadGuards.stride)
        for i in 0..<capacity {
            (slots + i * ReadGuards.stride).bindMemory(to: Atomic<UInt>.self, capacity: 1).initialize(to: Atomic(0))
        }
        free = Locked(Array((0..<capacity).reversed()))
    }

    deinit {
        for i in 0..<capacity { _ = slot(i).move() }
        slots.deallocate()
    }

    /// Slot `index`.
    @inline(__always)
    func slot(_ index: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
        (slots + index * ReadGuards.stride).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    /// A slot for the calling thread, nil when every slot is taken.
    func claim() -> Int? {
        free.withLock { free -> Int? in
            guard let index = free.popLast() else { return nil }
            // Under the lock, so claims raise it in order (invariant 2).
            if index + 1 > claimedSlots.load(ordering: .relaxed) {
                claimedSlots.store(index + 1, ordering: .sequentiallyConsistent)
            }
            return index
        }
    }

    /// Gives slot `index` back, empty (invariant 3).
    func giveBack(_ index: Int) {
        precondition(slot(index).pointee.load(ordering: .relaxed) == 0, "ReadGuards invariant 3: a slot given back still guards a version")
        free.withLock { free in
            free.append(index)
            // Lowest last, so `claim` takes it first.
            free.sort(by: >)
        }
    }

    /// Whether any slot holds `address`.
    func isGuarding(_ address: UInt) -> Bool {
        let count = claimedSlots.load(ordering: .sequentiallyConsistent)
        for i in 0..<count where slot(i).pointee.load(ordering: .sequentiallyConsistent) == address {
            return true
        }
        return false
    }

    /// How many slots are free (for tests).
    var freeSlots: Int { free.withLock { $0.count } }
}
