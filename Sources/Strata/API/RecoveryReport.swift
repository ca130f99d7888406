/// What opening the store found and did while replaying the write-ahead log.
public struct RecoveryReport: Sendable, Equatable {
    /// A torn write at the end of the log: bytes of a write that never completed, cut off.
    public struct TruncatedTail: Sendable, Equatable {
        /// The WAL segment file that was cut.
        public var file: String
        /// The size the file's valid data was cut back to.
        public var offset: Int64
        /// How many non-zero bytes past `offset` were discarded.
        public var discardedBytes: Int64
    }

    /// WAL segments replayed.
    public var segmentsReplayed = 0
    /// Committed transactions replayed.
    public var transactionsReplayed = 0
    /// The last commit sequence found: the store's version after opening.
    public var lastSequence: UInt64 = 0
    /// The torn tail cut off the segment where the log ends, if there was one: the last
    /// segment, or one a crash interrupted before its sync had finished
    /// (``removedUnsyncedSegments``). A store opened read-only (``StoreOptions/readOnly``)
    /// reports it too, but skips it without cutting it.
    public var truncatedTail: TruncatedTail? = nil
    /// WAL segment files removed because their creation never completed (no header made it
    /// to disk, and nothing follows it). Always empty for a store opened read-only, which
    /// passes over such a file and removes nothing.
    public var removedIncompleteSegments: [String] = []
    /// WAL segment files removed because they followed a segment cut at a torn write: the
    /// crash came before the segment the writer had moved on from was synced to its end, so
    /// nothing in these files had been synced or acknowledged as durable. A store opened
    /// read-only skips them without removing them, and lists them here too.
    public var removedUnsyncedSegments: [String] = []
    /// Segment files listed in the manifest when the store opened.
    public var segmentFiles = 0
    /// Files no manifest references (left by a flush or compaction a crash interrupted, or
    /// WAL segments a flush had covered), removed when the store opened. Always empty for a
    /// store opened read-only, which ignores them.
    public var removedUnreferencedFiles: [String] = []
    /// Where the manifest's last record was torn (an edit interrupted before it was
    /// acknowledged, so nothing depended on it), if it was; the edit was discarded.
    public var discardedManifestTail: TruncatedTail? = nil

    /// A file the store found under one of its own names that did not hold its own format,
    /// and moved into the store's `aside/` directory instead of removing it.
    public struct MovedFile: Sendable, Equatable {
        /// The file's name in the store directory.
        public var name: String
        /// Where it is now, relative to the store directory (`aside/NAME`, with a numeric
        /// suffix when that name was taken).
        public var movedTo: String
        /// Why the file was not taken for the store's own.
        public var reason: String
    }

    /// Files named like the store's own leftovers (an old or interrupted WAL segment, a
    /// segment file or a manifest nothing references) whose contents the store did not
    /// recognise as its own: it never deletes those, but moves them into `aside/` in the store
    /// directory, each reported here and logged as a warning. Look at them, then delete them
    /// or put them where they belong. Always empty for a store opened read-only.
    public var movedAside: [MovedFile] = []
    /// What a salvaging open gave up (``StoreOptions/salvage``); nil for an ordinary open.
    public var salvage: SalvageReport? = nil

    public init() {}
}
