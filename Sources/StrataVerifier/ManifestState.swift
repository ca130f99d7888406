import StrataFormat

/// The store's files as the current manifest describes them after replaying every record
/// (docs/format/manifest.md, "Replay"). A store without a manifest is this state's default:
/// nothing in segment files, so the WAL holds everything from sequence 1.
struct ManifestState {
    var logNumber: UInt64 = 0
    var lastSequence: UInt64 = 0
    /// The newest sequence of a tombstone a compaction dropped (format 1.1).
    var droppedDeletions: UInt64 = 0
    /// The store's identity, once a record names it (format 1.1).
    var storeIdentifier: [UInt8]?
    /// Nil until a record sets it.
    var nextFileNumber: UInt64?
    /// Live segments by file number.
    var live: [UInt64: SegmentMeta] = [:]
}
