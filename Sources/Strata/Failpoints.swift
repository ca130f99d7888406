/// Named points in the write path. A test installs a handler that runs on the writer thread
/// at each point; it can block (to freeze the writer, as a suspended app is frozen) or throw
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
    }

    public var handler: @Sendable (Point) throws -> Void

    public init(handler: @escaping @Sendable (Point) throws -> Void) {
        self.handler = handler
    }
}
