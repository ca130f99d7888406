/// Figures about an open store, from ``Store/stats()``.
public struct StoreStats: Sendable, Equatable {
    /// The latest commit sequence readers can see.
    public var version: UInt64
    /// Versions (puts and tombstones) held in the memtable.
    public var memtableEntries: Int
    /// Approximate bytes the memtable holds.
    public var memtableBytes: Int
    /// WAL segment files.
    public var walSegments: Int
    /// Bytes of log data in the WAL segments.
    public var walBytes: Int
    /// Snapshots not yet closed.
    public var liveSnapshots: Int
    /// The oldest version a live snapshot pins, if any.
    public var oldestSnapshotVersion: UInt64?
}
