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
    private let state: Mutex<ReadView>

    init(_ view: ReadView) {
        state = Mutex(view)
    }

    func current() -> ReadView {
        state.withLock { $0 }
    }

    func publish(sequence: UInt64) {
        state.withLock { view in
            assert(sequence >= view.sequence, "PublishedState invariant 1: sequence went backwards")
            view = ReadView(version: view.version, sequence: sequence)
        }
    }
}
