import Dispatch
import StrataIO

/// A WAL segment the writer has rolled away from, until it is synced to its end and ends
/// with a synced sync mark (docs/format/wal.md, "Writing", rule 4). The writer no longer waits
/// for that at the roll: the fdatasync of a segment written without one took 5 to 27 ms on
/// the benchmark machine, up to a sixth of a bulk load's time on the writer
/// (docs/benchmarks.md, "Rolled WAL segments synced in the background"). It runs on
/// `finishingThread` while the writer fills the next segment, and the writer waits for it only
/// where the next segment's bytes must become durable: before any fdatasync of the next
/// segment, and before the next roll (WALWriter invariant 8). Recovery knows the one state this
/// leaves after a crash: a segment not the last, torn at its end, followed by segments that
/// hold no record proving a sync of theirs.
///
/// Invariants:
/// 1. The work runs at most once, on whichever thread comes first: `finishingThread`, or
///    the writer in `finish()` (always the writer when the store runs background work
///    inline, so crash tests meet the same operations in the same order every run).
/// 2. The sync mark is written only after the first fdatasync returned, and synced after it:
///    a mark on disk proves every byte before it synced.
/// 3. The handle is closed exactly once: by the work, or by `abandon()` when the work never
///    ran.
final class WALRolledSegment: Sendable {
    /// Where finishing runs, for every store of the process, and where the next segment is
    /// made ahead (`WALSegmentAhead`, queued behind the finishing it follows); both block in
    /// fdatasync, so its low CPU priority costs nothing.
    static let finishingThread = BackgroundThread(name: "strata.wal-finish")

    private struct Work: Sendable {
        let handle: any FileHandle
        let end: Int
        let synced: Bool
        /// The sync mark framed at `end`, or empty when the segment already proves itself.
        let mark: [UInt8]
        let preallocatedEnd: Int
    }

    private let work: Locked<Work?>
    private let outcome = Locked<(any Error)?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - end: where the segment's data ends; `synced`: whether it is synced that far.
    ///   - mark: the sync mark framed to go at `end`, empty when none is needed.
    init(handle: any FileHandle, end: Int, synced: Bool, mark: [UInt8], preallocatedEnd: Int) {
        work = Locked(Work(handle: handle, end: end, synced: synced, mark: mark, preallocatedEnd: preallocatedEnd))
    }

    /// Queues the work on `finishingThread`.
    func start() {
        WALRolledSegment.finishingThread.async { self.run() }
    }

    /// The work, for the one caller that comes first (invariants 1 and 3).
    private func takeWork() -> Work? {
        work.withLock { work -> Work? in
            defer { work = nil }
            return work
        }
    }

    /// Runs the work unless it ran already (invariant 1).
    private func run() {
        guard let work = takeWork() else { return }
        var failure: (any Error)? = nil
        do {
            if !work.synced { try work.handle.sync() }
            if !work.mark.isEmpty {
                let end = work.end + work.mark.count
                if end > work.preallocatedEnd { try work.handle.preallocate(to: Int64(WALWriter.preallocationTarget(for: end))) }
                try work.handle.write(work.mark, at: Int64(work.end))
                try work.handle.sync()
            }
        } catch {
            failure = error
        }
        try? work.handle.close()
        outcome.withLock { $0 = failure }
        done.signal()
    }

    /// Writer only: returns once the segment is synced to its end and marked, running the
    /// work here when nobody has started it; throws its error.
    func finish() throws {
        run()
        done.wait()
        done.signal()
        if let failure = outcome.withLock({ $0 }) { throw failure }
    }

    /// Writer only, at close after a failure: closes the handle if the work never ran, or
    /// waits for the work that did (invariant 3). Its outcome no longer matters.
    func abandon() {
        if let work = takeWork() {
            try? work.handle.close()
            done.signal()
            return
        }
        done.wait()
        done.signal()
    }
}
