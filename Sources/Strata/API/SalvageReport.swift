/// What a salvaging open (``StoreOptions/salvage``) had to give up to open a damaged store.
///
/// Everything the store dropped is listed here, and logged as a warning: a salvaged store is
/// never silently smaller. Empty (``isEmpty``) when the store was not damaged.
public struct SalvageReport: Sendable, Equatable {
    /// Bytes of a WAL segment that salvage skipped: a damaged region (the records in it are
    /// lost), or one intact record it could not apply.
    public struct DroppedLogBytes: Sendable, Equatable {
        /// The WAL segment's name in the store directory.
        public var file: String
        /// Where the skipped bytes start.
        public var offset: Int64
        /// How many bytes were skipped.
        public var byteCount: Int64
        /// Why, for people.
        public var reason: String
    }

    /// A segment file that salvage took out of the store because it could not be read whole.
    public struct LostSegment: Sendable, Equatable {
        /// The segment file's name in the store directory.
        public var file: String
        /// Where the file is now, relative to the store directory (in `aside/`); nil when it
        /// was missing.
        public var movedTo: String?
        /// The smallest and largest keys the file held, when the manifest recorded them: the
        /// range whose keys may now be missing or show an older value.
        public var smallestKey: [UInt8]?
        public var largestKey: [UInt8]?
        /// How many entries (versions of keys) it held, when known.
        public var entryCount: UInt64?
        /// Why, for people.
        public var reason: String
    }

    /// Why the manifest was rebuilt from the segment files, or nil when it was read. A
    /// rebuilt store keeps every version the files hold, gets a new store identifier when the
    /// old one could not be read (references taken before are then refused), and answers
    /// `changedSince` conservatively for keys it no longer holds.
    public var manifestRebuilt: String? = nil
    /// WAL bytes skipped, in log order.
    public var droppedLogBytes: [DroppedLogBytes] = []
    /// Commit sequences no intact WAL record was found for: transactions lost in the
    /// skipped bytes.
    public var missingSequences: [ClosedRange<UInt64>] = []
    /// Segment files taken out of the store.
    public var lostSegments: [LostSegment] = []

    public init() {}

    /// True when salvage found nothing to give up or rebuild.
    public var isEmpty: Bool {
        manifestRebuilt == nil && droppedLogBytes.isEmpty && missingSequences.isEmpty && lostSegments.isEmpty
    }
}
