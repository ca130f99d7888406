import Dispatch
import StrataIO

/// The WAL segment after the current one, created before the writer rolls to it. Creating a
/// segment syncs its header and the directory (WALWriter invariant 3); at the roll those syncs
/// waited behind the previous segment's sync on the same device, 3 to 28 ms a roll under a
/// bulk load (docs/benchmarks.md). Made ahead, on `WALRolledSegment.finishingThread`, the
/// roll only takes the handle.
///
/// On disk it is an empty segment after the current one. A crash leaves the current segment
/// followed by it, which recovery treats as it treats any segment followed by one that holds no
/// record (docs/format/wal.md, "Recovery"): the current segment is marked, or cut where it is
/// torn, and the empty one is deleted or written next.
///
/// Invariants:
/// 1. The creation runs at most once, on whichever thread comes first: `finishingThread`,
///    the writer when it takes the segment, or nobody when it is discarded first.
/// 2. The handle of a created segment goes to exactly one owner: the writer that takes it, or
///    `discard()`, which closes it and removes the file.
/// 3. A failed creation is never an error of its own: the writer creates the segment itself at
///    the roll and reports what fails then.
final class WALSegmentAhead: Sendable {
    let number: UInt64
    private let fileSystem: any FileSystem
    private let directory: String
    /// Whether the creation is still to run (invariant 1).
    private let pending = Locked(true)
    private let created = Locked<(any FileHandle)?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(fileSystem: any FileSystem, directory: String, number: UInt64) {
        self.fileSystem = fileSystem
        self.directory = directory
        self.number = number
    }

    /// Queues the creation on `finishingThread`, behind the finishing of a rolled segment.
    func start() {
        WALRolledSegment.finishingThread.async { self.run() }
    }

    /// Whether this caller is the one to run the creation, or to skip it (invariant 1).
    private func claim() -> Bool {
        pending.withLock { pending in
            defer { pending = false }
            return pending
        }
    }

    /// Creates the segment unless that ran or was skipped already.
    func run() {
        guard claim() else { return }
        let handle = try? WALWriter.createSegment(fileSystem: fileSystem, directory: directory, number: number)
        created.withLock { $0 = handle }
        done.signal()
    }

    /// Writer only: the segment, durable and empty, creating it here when nobody has started
    /// to; nil when its creation failed (invariant 3).
    func take() -> (any FileHandle)? {
        run()
        done.wait()
        done.signal()
        return created.withLock { created in
            defer { created = nil }
            return created
        }
    }

    /// Writer only, at close or suspension: skips the creation when it has not started, or
    /// waits for it, then closes the segment and removes its file (a failed creation may have
    /// left one). The directory is not synced: a crash that brings the file back leaves an
    /// empty segment after the current one, which recovery expects.
    func discard() {
        if claim() {
            done.signal()
            return
        }
        try? take()?.close()
        try? fileSystem.removeFile(fileSystem.path(directory, WALWriter.segmentName(number)))
    }
}
