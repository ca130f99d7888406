import StrataFormat

/// The undamaged store every fixture starts from, and where its parts are, so each case can
/// damage exactly one of them.
///
/// Its history: WAL segment 1 (sequences 1 to 6) was flushed into segment file 2, now at
/// level 1; manifest 3 was installed with a snapshot of that; WAL segment 2 (sequences 7 to
/// 10) was then flushed into segment file 4 at level 0. WAL segments 3 and 4 hold sequences
/// 11 to 14, not yet flushed. Segment and manifest files take numbers from one counter,
/// WAL segments from their own (docs/format/manifest.md).
public struct CleanStore: Sendable {
    public static let level1Segment = ManifestFormat.segmentFileName(2)
    public static let level0Segment = ManifestFormat.segmentFileName(4)
    public static let manifest = ManifestFormat.fileName(3)
    public static let olderWAL = "wal-0000000003.log"
    public static let newerWAL = "wal-0000000004.log"

    static let level1Entries = [
        FixtureEncoding.put("apple", "red", 1),
        FixtureEncoding.put("banana", "yellow", 2),
        FixtureEncoding.put("cherry", "dark red", 3),
        FixtureEncoding.put("date", "brown", 4),
        FixtureEncoding.put("elderberry", "purple", 5),
        FixtureEncoding.put("fig", "green", 6)
    ]
    static let level0Entries = [
        FixtureEncoding.put("banana", "green", 7),
        FixtureEncoding.delete("cherry", 8),
        FixtureEncoding.put("grape", "purple", 9),
        FixtureEncoding.put("kiwi", "brown", 10)
    ]
    /// What WAL segment 2 held before it was flushed into segment file 4.
    static let flushedTransactions = [
        FixtureTransaction(sequence: 7, [("banana", "green")]),
        FixtureTransaction(sequence: 8, [("cherry", nil)]),
        FixtureTransaction(sequence: 9, [("grape", "purple")]),
        FixtureTransaction(sequence: 10, [("kiwi", "brown")])
    ]
    static let olderWALTransactions = [
        FixtureTransaction(sequence: 11, [("lemon", "yellow"), ("mango", "orange")]),
        FixtureTransaction(sequence: 12, [("apple", nil)])
    ]
    static let newerWALTransactions = [
        FixtureTransaction(sequence: 13, [("nectarine", "orange")]),
        FixtureTransaction(sequence: 14, [("banana", "ripe"), ("kiwi", nil)])
    ]

    public var store: FixtureStore
    /// The manifest's records: the snapshot, then the flush of WAL segment 2.
    public var manifestEdits: [VersionEdit]
    public var manifestRecordOffsets: [Int]
    public var olderWALRecordOffsets: [Int]
    public var newerWALRecordOffsets: [Int]
    public var level1Meta: SegmentMeta
    public var level0Meta: SegmentMeta

    public init() {
        // A tiny block size spreads the level 1 segment over several data blocks, so the
        // checks across blocks have something to check.
        let level1 = FixtureEncoding.segment(Self.level1Entries, blockSize: 64)
        let level0 = FixtureEncoding.segment(Self.level0Entries)
        level1Meta = FixtureEncoding.meta(level: 1, fileNumber: 2, bytes: level1, entries: Self.level1Entries)
        level0Meta = FixtureEncoding.meta(level: 0, fileNumber: 4, bytes: level0, entries: Self.level0Entries)
        manifestEdits = [
            VersionEdit(logNumber: 2, lastSequence: 6, nextFileNumber: 4, added: [level1Meta]),
            VersionEdit(logNumber: 3, lastSequence: 10, nextFileNumber: 5, added: [level0Meta])
        ]
        let manifest = FixtureEncoding.manifest(number: 3, manifestEdits)
        let older = FixtureEncoding.walSegment(number: 3, Self.olderWALTransactions)
        let newer = FixtureEncoding.walSegment(number: 4, Self.newerWALTransactions)
        manifestRecordOffsets = manifest.recordOffsets
        olderWALRecordOffsets = older.recordOffsets
        newerWALRecordOffsets = newer.recordOffsets
        store = FixtureStore(files: [
            StoreIdentityFormat.fileName: StoreIdentityFormat.encode(),
            // A real store always has its (empty) lock file.
            "LOCK": [],
            Self.level1Segment: level1,
            Self.level0Segment: level0,
            Self.manifest: manifest.bytes,
            Self.olderWAL: older.bytes,
            Self.newerWAL: newer.bytes
        ])
    }

    /// The manifest with `edits` in place of the clean one's.
    public static func manifest(_ edits: [VersionEdit]) -> [UInt8] {
        FixtureEncoding.manifest(number: 3, edits).bytes
    }

    /// The footer of one of the clean store's segment files.
    public func footer(of segment: String) -> SegmentFormat.Footer {
        do {
            return try SegmentReader(store.files[segment]!).footer
        } catch {
            preconditionFailure("the clean store's \(segment) must decode: \(error)")
        }
    }
}
