/// Figures about an open store, from ``Store/stats()``.
public struct StoreStats: Sendable, Equatable {
    /// The latest commit sequence readers can see.
    public var version: UInt64
    /// Versions (puts and tombstones) held in the active and sealed memtables.
    public var memtableEntries: Int
    /// Approximate bytes the active and sealed memtables hold.
    public var memtableBytes: Int
    /// Memtables sealed and waiting for their flush to be installed.
    public var sealedMemtables: Int
    /// WAL segment files.
    public var walSegments: Int
    /// Bytes of log data in the WAL segments.
    public var walBytes: Int
    /// Segment files per level, level 0 first.
    public var levels: [LevelStats]
    /// Snapshots not yet closed.
    public var liveSnapshots: Int
    /// The oldest version a live snapshot pins, if any.
    public var oldestSnapshotVersion: UInt64?
    /// Each version pinned by live snapshots, oldest first, with how many snapshots pin it.
    public var pinnedVersions: [PinnedVersion]
    /// Bytes of the block cache in use, and its budget.
    public var blockCacheBytes: Int
    public var blockCacheCapacity: Int
    /// Flushes and compactions finished since the store opened.
    public var flushes: Int
    public var compactions: Int
    /// Times a write waited for a flush or a compaction, because the memtables reached their
    /// hard limit (``StoreOptions/memtableHardLimitBytes``) or level 0 held
    /// ``StoreOptions/level0StopWritesTrigger`` files, and the seconds spent waiting.
    public var writeStalls: Int
    public var writeStallSeconds: Double
    /// True while a write is waiting for a flush right now.
    public var isStalled: Bool

    /// Bytes in segment files, over all levels.
    public var segmentBytes: Int { levels.reduce(0) { $0 + $1.bytes } }
    /// Segment files, over all levels.
    public var segmentFiles: Int { levels.reduce(0) { $0 + $1.files } }

    /// Bytes on disk (segment files and WAL) over an estimate of the live data: the bytes of
    /// the largest level. A level below level 0 holds each key at most once, so its bytes
    /// never exceed the live data by more than the older versions it keeps; after a full
    /// compaction the deepest level holds every live key once and is the largest. 1.0 means no
    /// overhead. Nil while no segment file exists.
    ///
    /// Right after a large load, level 1 often holds most of the data and the deepest level
    /// little of it: the deepest level alone would put the figure at ten or more.
    public var spaceAmplification: Double? {
        // Level 0's files may overlap each other; it is the estimate only when nothing else is.
        let deeper = levels.filter { $0.level > 0 && $0.files > 0 }
        guard let largest = (deeper.isEmpty ? levels.filter { $0.files > 0 } : deeper).map(\.bytes).max(), largest > 0
        else { return nil }
        return Double(segmentBytes + walBytes) / Double(largest)
    }

    /// One level of segment files.
    public struct LevelStats: Sendable, Equatable {
        public var level: Int
        public var files: Int
        public var bytes: Int
        /// Entries (every version and tombstone) in the level's files.
        public var entries: Int
    }

    /// A version live snapshots pin: compaction keeps what it needs.
    public struct PinnedVersion: Sendable, Equatable {
        public var version: UInt64
        public var snapshots: Int
    }
}
