import StrataIO
import Synchronization

/// A long-lived, read-only view of the store as of one commit. What it sees never changes,
/// whatever is written afterwards, and reading it never waits for the writer. It is
/// `Sendable`: hand it to another thread or actor freely.
///
/// A snapshot keeps the data it sees in memory; call ``close()`` (or let it go) when done.
public final class Snapshot: Sendable {
    // Invariants (`state` and `view`):
    // 1. `view` is written only by the one caller whose compare-and-exchange turns "closed, no
    //    copy under way" into "closed and released" (`release`); no read copies it after that,
    //    since a read copies only when it saw the snapshot open.
    // 2. A read copies `view` only between raising the count and lowering it again, having seen
    //    the closed bit clear when it raised it; so `view` is not nil while it copies.
    // 3. The closed and released bits are only ever set, and released only once closed is.

    /// The commit sequence this snapshot sees.
    public let version: UInt64
    private let registry: SnapshotRegistry
    /// Bit 0: closed. Bit 1: `view` released. Above them, four times the number of reads
    /// copying `view` right now (the invariants above).
    ///
    /// An atomic rather than a lock: taking and closing a snapshot then allocates only the
    /// snapshot itself.
    private let state = Atomic<Int>(0)
    /// Written by `release` alone (invariant 1); read by the copies of invariant 2.
    nonisolated(unsafe) private var view: ReadView?

    private static let closedBit = 1
    private static let releasedBit = 2
    private static let oneCopy = 4

    init(view: ReadView, registry: SnapshotRegistry) {
        self.version = view.sequence
        self.view = view
        self.registry = registry
        registry.opened(view.sequence)
    }

    deinit {
        close()
    }

    /// Runs `body` on this snapshot's data, on the calling thread.
    @inlinable
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        // Inlinable for the caller's `T`, as `Store.read` is; the work is `readSnapshot`.
        var value: T? = nil
        try readSnapshot { tx in value = try body(tx) }
        guard let value else { preconditionFailure("Snapshot.read: the read returned without running its body") }
        return value
    }

    /// The work of `read`: a transaction on this snapshot's view, for `body`.
    @usableFromInline
    func readSnapshot(_ body: (ReadTransaction) throws -> Void) throws {
        guard let current = copyView() else {
            throw StoreError(.closed, "the snapshot was closed; take a new one with store.snapshot()")
        }
        try registry.admits()
        try ReadTransaction.run(on: current, body)
    }

    /// Releases what the snapshot pins. Idempotent; later reads throw `.closed`.
    public func close() {
        let before = state.bitwiseOr(Self.closedBit, ordering: .acquiringAndReleasing).oldValue
        guard before & Self.closedBit == 0 else { return }
        registry.closed(version)
        // A read copying now releases when it finishes (`copyView`).
        if before < Self.oneCopy { release() }
    }

    /// The view, retained, or nil once the snapshot is closed (invariant 2).
    private func copyView() -> ReadView? {
        let before = state.wrappingAdd(Self.oneCopy, ordering: .acquiringAndReleasing).oldValue
        assert(before & Self.releasedBit == 0 || before & Self.closedBit != 0, "Snapshot invariant 3: released but not closed")
        let copy = before & Self.closedBit == 0 ? view : nil
        assert(before & Self.closedBit != 0 || copy != nil, "Snapshot invariant 2: an open snapshot has no view")
        let after = state.wrappingSubtract(Self.oneCopy, ordering: .acquiringAndReleasing).newValue
        // The last copy out of a snapshot closed meanwhile releases it.
        if after == Self.closedBit { release() }
        return copy
    }

    /// Drops `view`, if no one has yet (invariant 1).
    private func release() {
        let (exchanged, _) = state.compareExchange(
            expected: Self.closedBit, desired: Self.closedBit | Self.releasedBit, ordering: .acquiringAndReleasing)
        if exchanged { view = nil }
    }
}

/// Counts live snapshots and the oldest version they pin, for `stats()`.
final class SnapshotRegistry: Sendable {
    private let pinned = Locked<[UInt64: Int]>([:])
    /// Throws when the store refuses reads (suspended or closed): one closure for the store,
    /// rather than one for each snapshot.
    let admits: @Sendable () throws(StoreError) -> Void

    init(admits: @escaping @Sendable () throws(StoreError) -> Void) {
        self.admits = admits
    }

    func opened(_ version: UInt64) {
        pinned.withLock { $0[version, default: 0] += 1 }
    }

    func closed(_ version: UInt64) {
        pinned.withLock { counts in
            if let n = counts[version], n > 1 { counts[version] = n - 1 } else { counts[version] = nil }
        }
    }

    /// Each pinned version with its snapshot count, oldest first.
    var pinnedVersions: [(version: UInt64, count: Int)] {
        pinned.withLock { counts in counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    var summary: (count: Int, oldest: UInt64?) {
        pinned.withLock { counts in (counts.values.reduce(0, +), counts.keys.min()) }
    }
}
