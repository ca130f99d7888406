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
///
/// Taking a read view costs one uncontended lock and a retain; the writer holds the same lock
/// only to swap two words, so readers never wait for a commit. The object lives as long as
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
    }

    private let state: Locked<State>

    init(_ view: ReadView) {
        state = Locked(State(view: view))
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
        }
    }

    /// Swaps in a new Version built from the current one, keeping the sequence: the new
    /// version holds the same data, arranged differently (a sealed memtable, a flush or a
    /// compaction installed).
    func replaceVersion(_ transform: (Version) -> Version) {
        state.withLock { state in
            state.view = ReadView(version: transform(state.view.version), sequence: state.view.sequence)
        }
    }

    func setAdmission(_ admission: Admission) {
        state.withLock { $0.admission = admission }
    }

    /// Installs the state a reload read from disk. The sequence may be anything: another
    /// process wrote the store meanwhile (invariant 1 holds within one loaded state).
    func reset(to view: ReadView) {
        state.withLock { $0.view = view }
    }
}
