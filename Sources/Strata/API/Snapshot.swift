import StrataIO
import Synchronization

/// A long-lived, read-only view of the store as of one commit. What it sees never changes,
/// whatever is written afterwards, and reading it never waits for the writer. It is
/// `Sendable`: hand it to another thread or actor freely.
///
/// A snapshot keeps the data it sees in memory; call ``close()`` (or let it go) when done.
public final class Snapshot: Sendable {
    /// The commit sequence this snapshot sees.
    public let version: UInt64
    private let view: Locked<ReadView?>
    private let registry: SnapshotRegistry
    /// Throws when the store refuses reads (suspended or closed).
    private let admits: @Sendable () throws(StoreError) -> Void

    init(view: ReadView, registry: SnapshotRegistry, admits: @escaping @Sendable () throws(StoreError) -> Void) {
        self.version = view.sequence
        self.view = Locked(view)
        self.registry = registry
        self.admits = admits
        registry.opened(view.sequence)
    }

    deinit {
        close()
    }

    /// Runs `body` on this snapshot's data, on the calling thread.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        guard let current = view.withLock({ $0 }) else {
            throw StoreError(.closed, "the snapshot was closed; take a new one with store.snapshot()")
        }
        try admits()
        return try ReadTransaction.run(on: current, body)
    }

    /// Releases what the snapshot pins. Idempotent; later reads throw `.closed`.
    public func close() {
        let released = view.withLock { view -> Bool in
            defer { view = nil }
            return view != nil
        }
        if released { registry.closed(version) }
    }
}

/// Counts live snapshots and the oldest version they pin, for `stats()`.
final class SnapshotRegistry: Sendable {
    private let pinned = Locked<[UInt64: Int]>([:])

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
