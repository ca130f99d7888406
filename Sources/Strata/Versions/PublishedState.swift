import StrataIO
import Synchronization

/// The newest version readers may see and the commit sequence inside it.
///
/// Invariants:
/// 1. Only the writer queue publishes, and the published sequence never decreases.
/// 2. A sequence is published only once its commit is as durable as its caller asked
///    (Writer invariant 3), so a reader never sees a commit that a crash could take back,
///    except `.buffered` commits, which promise only to survive a process crash.
///
/// 3. While the store is suspended or closed, no new read gets a view (`admission`); the
///    store sets it before it stops its writer, so no read starts after a suspension began.
/// 4. The atomics `mirrorVersion`, `mirrorSequence` and `mirrorAdmission` copy `state`, and
///    change only under its lock, between two steps of `generation` (odd while they
///    change). A Version that stops being current is released only once a scan of
///    `ReadGuards`, made after it stopped, finds no read guarding it (`retired`).
///
/// Taking a read view costs one uncontended lock and a retain; the writer holds the same lock
/// only to swap two words, so readers never wait for a commit. A point read takes neither:
/// `withGuardedView` reads the mirror and announces the Version in its thread's guard
/// (ReadGuards.swift), writing no memory another thread writes. The object lives as long as
/// the store: a reload after `resume()` installs the reloaded state here (`reset`).
final class PublishedState: Sendable {
    /// Whether new reads are served.
    enum Admission {
        case open
        case suspended
        case closed
    }

    private struct State {
        var view: ReadView
        var admission = Admission.open
        /// Versions replaced while a point read may still be reading them (invariant 4).
        var retired: [Version] = []
    }

    private let state: Locked<State>

    // The mirror of `state` for point reads (invariant 4).
    private let generation = Atomic<UInt64>(0)
    /// The current Version's address; `state` holds the reference.
    private let mirrorVersion = Atomic<UInt>(0)
    private let mirrorSequence = Atomic<UInt64>(0)
    private let mirrorAdmission = Atomic<UInt8>(0)
    /// `state.retired.count`, so a read can tell without the lock that nothing waits for it.
    private let retiredCount = Atomic<Int>(0)

    private let guards = ReadGuards.shared

    init(_ view: ReadView) {
        state = Locked(State(view: view))
        state.withLock { mirror($0.view, $0.admission) }
    }

    /// Copies the view and admission of `state` into the mirror; under its lock.
    private func mirror(_ view: ReadView, _ admission: Admission) {
        let (before, _) = generation.add(1, ordering: .sequentiallyConsistent)
        assert(before & 1 == 0, "PublishedState invariant 4: the mirror changed by two writers at once")
        mirrorVersion.store(PublishedState.address(view.version), ordering: .sequentiallyConsistent)
        mirrorSequence.store(view.sequence, ordering: .sequentiallyConsistent)
        mirrorAdmission.store(PublishedState.code(admission), ordering: .sequentiallyConsistent)
        generation.add(1, ordering: .sequentiallyConsistent)
    }

    private static func address(_ version: Version) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(version).toOpaque())
    }

    private static func code(_ admission: Admission) -> UInt8 {
        switch admission {
        case .open: 0
        case .suspended: 1
        case .closed: 2
        }
    }

    /// Runs `body` on the current Version and sequence, as `current()` would give them, with
    /// neither a lock nor a retain: the Version is announced in the thread's read guard
    /// (ReadGuards.swift) and stays alive until `body` returns. Throws as `current()` does.
    /// A thread without a guard, or already inside a guarded read, takes `current()`.
    @inline(__always)
    func withGuardedView<R>(_ body: (Version, UInt64) throws -> R) throws -> R {
        if let guardSlot = ReadScratch.readGuard(), guardSlot.pointee.load(ordering: .relaxed) == 0 {
            // A few tries: the generation is odd only for the few stores of a change, and
            // moves again only with another commit or version.
            for _ in 0..<4 {
                let before = generation.load(ordering: .acquiring)
                guard before & 1 == 0 else { continue }
                let address = mirrorVersion.load(ordering: .acquiring)
                let sequence = mirrorSequence.load(ordering: .acquiring)
                let admission = mirrorAdmission.load(ordering: .acquiring)
                guardSlot.pointee.store(address, ordering: .sequentiallyConsistent)
                // Unchanged after the guard was set: the version was current then, so any
                // scan that could release it starts later and sees the guard (invariant 4).
                if generation.load(ordering: .sequentiallyConsistent) == before {
                    defer { endGuardedRead(guardSlot) }
                    switch admission {
                    case 0: break
                    case 1: throw StoreError.suspended()
                    default: throw StoreError.closed()
                    }
                    return try Unmanaged<Version>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)._withUnsafeGuaranteedRef {
                        try body($0, sequence)
                    }
                }
            }
            // The guard may hold a version that stopped being current: clear it as a read's
            // end does, releasing what waited only for it.
            endGuardedRead(guardSlot)
        }
        let view = try current()
        return try withExtendedLifetime(view.version) { try body(view.version, view.sequence) }
    }

    /// How many replaced Versions wait for a point read to end (for tests).
    var retiredVersions: Int { retiredCount.load(ordering: .sequentiallyConsistent) }

    /// Clears the thread's guard, then releases what waited only for it.
    @inline(__always)
    private func endGuardedRead(_ guardSlot: UnsafeMutablePointer<Atomic<UInt>>) {
        guardSlot.pointee.store(0, ordering: .sequentiallyConsistent)
        if retiredCount.load(ordering: .sequentiallyConsistent) > 0 { releaseRetired() }
    }

    /// Releases the retired Versions no read guards any more (invariant 4).
    private func releaseRetired() {
        state.withLock { state in
            guard !state.retired.isEmpty else { return }
            releaseUnguarded(&state)
        }
    }

    /// The work of `releaseRetired`, under the lock: in place, so the list keeps its capacity
    /// and a replaced Version costs no allocation.
    private func releaseUnguarded(_ state: inout State) {
        state.retired.removeAll { !guards.isGuarding(PublishedState.address($0)) }
        retiredCount.store(state.retired.count, ordering: .sequentiallyConsistent)
    }

    /// Replaces the current view under the lock. The Version it replaces goes now unless a
    /// point read guards it, and then once the last such read ends (invariant 4).
    private func install(_ state: inout State, _ view: ReadView) {
        let old = state.view.version
        state.view = view
        mirror(view, state.admission)
        if old !== view.version {
            state.retired.append(old)
            // Counted before the scan: a read that ends meanwhile either still shows in the
            // scan or, clearing its guard first, sees the count and releases it itself.
            retiredCount.store(state.retired.count, ordering: .sequentiallyConsistent)
            releaseUnguarded(&state)
        }
    }

    /// The view a new read sees. Throws `.suspended` or `.closed` while the store serves no
    /// reads. One lock for both, so a read costs a single uncontended lock.
    func current() throws(StoreError) -> ReadView {
        let (view, admission) = state.withLock { ($0.view, $0.admission) }
        switch admission {
        case .open: return view
        case .suspended: throw StoreError.suspended()
        case .closed: throw StoreError.closed()
        }
    }

    /// Throws as `current()` does when new reads are refused.
    func checkAdmission() throws(StoreError) {
        _ = try current()
    }

    /// The latest view, open or not (for figures that outlive a close).
    func latest() -> ReadView {
        state.withLock { $0.view }
    }

    func publish(sequence: UInt64) {
        state.withLock { state in
            assert(sequence >= state.view.sequence, "PublishedState invariant 1: sequence went backwards")
            state.view = ReadView(version: state.view.version, sequence: sequence)
            // Only the sequence changed: the Version stays, nothing to retire.
            let (before, _) = generation.add(1, ordering: .sequentiallyConsistent)
            assert(before & 1 == 0, "PublishedState invariant 4: the mirror changed by two writers at once")
            mirrorSequence.store(sequence, ordering: .sequentiallyConsistent)
            generation.add(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Swaps in a new Version built from the current one, keeping the sequence: the new
    /// version holds the same data, arranged differently (a sealed memtable, a flush or a
    /// compaction installed).
    func replaceVersion(_ transform: (Version) -> Version) {
        state.withLock { state in
            install(&state, ReadView(version: transform(state.view.version), sequence: state.view.sequence))
        }
    }

    func setAdmission(_ admission: Admission) {
        state.withLock { state in
            state.admission = admission
            mirror(state.view, admission)
        }
    }

    /// Installs the state a reload read from disk. The sequence may be anything: another
    /// process wrote the store meanwhile (invariant 1 holds within one loaded state).
    func reset(to view: ReadView) {
        state.withLock { install(&$0, view) }
    }
}
