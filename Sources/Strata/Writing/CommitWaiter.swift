import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a thread that queued a request waits for the writer to complete it: it polls for up
/// to a budget the writer sets (`Writer.pollBudget`, invariant 8), then sleeps on a semaphore.
///
/// Why poll at all: a caller whose synced commit is queued behind a round waits for about one
/// fdatasync. When the disk syncs in a few hundred microseconds, waking a sleeping thread is
/// a large share of that: with every thread asleep through the fdatasync, an idle core halts,
/// and on this project's machine it came back a median of 83 µs after the writer's wake-up,
/// every round (docs/benchmarks.md, "The sync probe"). A caller that polls, yielding its core
/// between looks, keeps the cores awake and sees its outcome as soon as the writer posts it.
/// The budget is zero unless the disk's last fdatasync was short, and while the machine is
/// busy (`Polling`); docs/decisions/2026-11-26-polling-commit-waits.md.
///
/// Invariant: `signal()` runs once; `finished` is set before the semaphore is signalled, so a
/// caller that saw it set takes the signal without sleeping.
final class CommitWaiter: Sendable {
    private let finished = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// The request's completion: called once, on the writer's thread.
    func signal() {
        finished.store(true, ordering: .releasing)
        done.signal()
    }

    /// Returns once `signal()` has run: polls for up to `pollNanoseconds`, then sleeps.
    func wait(pollNanoseconds: UInt64, contention: Contention) {
        if pollNanoseconds > 0 {
            _ = Polling.poll(for: pollNanoseconds, contention: contention) { finished.load(ordering: .acquiring) }
        }
        done.wait()
    }
}

/// Waiting by looking again and again, giving the core away between looks (`sched_yield`):
/// for waits of a few hundred microseconds at most, where a sleeping thread's wake-up would
/// cost a large share of the wait (`CommitWaiter`, and the writer's gathering).
enum Polling {
    /// A yield that gives the core away for longer than this means another thread wanted it:
    /// the machine is busy, and polling would take cores from its work (and wait behind its
    /// time slices) instead of keeping idle cores awake.
    static let busyYieldNanoseconds: UInt64 = 500_000

    /// Calls `isDone` until it is true (returns true) or `nanoseconds` have passed (false),
    /// yielding between calls. Stops early, noting it in `contention`, when a yield shows the
    /// machine busy.
    static func poll(for nanoseconds: UInt64, contention: Contention, until isDone: () -> Bool) -> Bool {
        poll(for: nanoseconds, contention: contention, yielding: { _ = sched_yield() }, until: isDone)
    }

    /// `poll(for:contention:until:)` with the yield given: tests stand in a slow one for a busy
    /// machine.
    static func poll(
        for nanoseconds: UInt64, contention: Contention, yielding yield: () -> Void, until isDone: () -> Bool
    ) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds &+ nanoseconds
        while true {
            if isDone() { return true }
            let before = DispatchTime.now().uptimeNanoseconds
            guard before < deadline else { return false }
            yield()
            if DispatchTime.now().uptimeNanoseconds &- before > busyYieldNanoseconds {
                contention.note()
                return isDone()
            }
        }
    }
}

/// When a poll last found the machine busy (`Polling`): for a second after it, nobody polls.
/// A second, because the discovery itself costs a poller a time slice of the other thread.
final class Contention: Sendable {
    static let quietNanoseconds: UInt64 = 1_000_000_000
    private let until = Atomic<UInt64>(0)

    func note() {
        until.store(DispatchTime.now().uptimeNanoseconds &+ Contention.quietNanoseconds, ordering: .relaxed)
    }

    /// Whether a poll found the machine busy within the last `quietNanoseconds`.
    var isRecent: Bool { DispatchTime.now().uptimeNanoseconds < until.load(ordering: .relaxed) }
}
