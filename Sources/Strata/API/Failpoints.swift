/// Named points in the write path. A test installs a handler that runs at each point, on the
/// writer thread or (for flush and compaction) the maintenance threads; it can block (to freeze the writer, as a suspended app is frozen) or throw
/// (the writer then behaves as if the file system failed there).
@_spi(Testing)
public struct Failpoints: Sendable {
    public enum Point: String, Sendable, CaseIterable {
        /// A group of transactions has run and been encoded; nothing is written yet.
        case beforeWALWrite
        /// The group's WAL bytes are written; the sync (if any) has not started.
        case afterWALWriteBeforeSync
        /// The group is durable as promised; it is not yet visible to readers.
        case beforePublish
        /// The writer is about to create the next WAL segment.
        case beforeSegmentRoll
        /// The writer is about to have the WAL segment after the current one made ahead of
        /// the roll (on a background thread, or on the writer when background work runs
        /// inline). A failure making it is no error: the roll makes it again. A throw here is
        /// ignored.
        case makingWALSegmentAhead
        /// A sealed memtable is about to be written to a segment file.
        case beforeFlush
        /// A compaction is about to merge its input files.
        case beforeCompaction
        /// New segment files are written and synced; the manifest edit naming them is not.
        case beforeManifestEdit
        /// A new manifest is about to be written and renamed into place.
        case beforeManifestInstall
        /// A synchronous write found the writer idle and took its turn, on the caller's
        /// thread; it has not yet entered the writer's queue. A throw here is ignored.
        case inlineRoundAdmitted
        /// `suspend()` has refused new calls, stopped the writer's intake and asked flushes
        /// and compactions to stop; it has not yet waited for the round in flight or for
        /// them. A throw here is ignored.
        case suspending
    }

    public var handler: @Sendable (Point) throws -> Void

    public init(handler: @escaping @Sendable (Point) throws -> Void) {
        self.handler = handler
    }
}
