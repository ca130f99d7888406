import StrataIO
import Synchronization

/// What one commit wrote, as observers and change feeds get it: on the writer queue, after
/// the commit is published, so whoever reads in response sees it.
struct CommittedWrites {
    let sequence: UInt64
    let entries: [WriteTransaction.PendingEntry]
}

/// Every observation and change feed of a store: the one hook in the engine's commit path
/// (docs/architecture.md, "Observation"). The store owns it, so it outlives reloads.
///
/// Invariants:
/// 1. `isActive` is true whenever a listener is registered: the writer reads it (one relaxed
///    atomic load per commit) to decide whether to keep a round's writes for `committed`.
/// 2. `committed` runs on the writer queue, after publishing, and does nothing but match
///    keys and hand on signals or changes: no listener code, no store call, runs there.
final class CommitListeners: Sendable {
    private let listeners = Locked<[ObjectIdentifier: any CommitListener]>([:])
    private let active = Atomic<Bool>(false)

    var isActive: Bool { active.load(ordering: .relaxed) }

    func add(_ listener: any CommitListener) {
        listeners.withLock { all in
            all[ObjectIdentifier(listener)] = listener
            active.store(true, ordering: .relaxed)
        }
    }

    func remove(_ listener: any CommitListener) {
        listeners.withLock { all in
            all[ObjectIdentifier(listener)] = nil
            active.store(!all.isEmpty, ordering: .relaxed)
        }
    }

    private var all: [any CommitListener] { listeners.withLock { Array($0.values) } }

    /// One round's commits, in commit order.
    func committed(_ commits: [CommittedWrites]) {
        for listener in all { listener.committed(commits) }
    }

    /// The store changed state (suspended, resumed, reloaded): observers evaluate again, and
    /// report the interruption or the new value.
    func lifecycleChanged() {
        for listener in all { listener.lifecycleChanged() }
    }

    /// The store closed: every observation and feed ends.
    func storeClosed() {
        for listener in listeners.withLock({ all in
            defer {
                all = [:]
                active.store(false, ordering: .relaxed)
            }
            return Array(all.values)
        }) {
            listener.storeClosed()
        }
    }
}

protocol CommitListener: AnyObject, Sendable {
    func committed(_ commits: [CommittedWrites])
    func lifecycleChanged()
    func storeClosed()
}
