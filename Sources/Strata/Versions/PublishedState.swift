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
/// Taking a read view costs one uncontended lock and a retain; the writer holds the same lock
/// only to swap two words, so readers never wait for a commit.
final class PublishedState: Sendable {
    private struct State {
        var view: ReadView
        /// False once the store starts closing: reads then fail with `.closed`.
        var isOpen = true
    }

    private let state: Locked<State>

    init(_ view: ReadView) {
        state = Locked(State(view: view))
    }

    /// The view a new read sees, or nil once the store is closing. One lock for both, so a
    /// read costs a single uncontended lock.
    func current() -> ReadView? {
        state.withLock { $0.isOpen ? $0.view : nil }
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

    func markClosing() {
        state.withLock { $0.isOpen = false }
    }
}
