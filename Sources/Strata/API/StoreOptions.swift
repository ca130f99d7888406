import Logging
import StrataIO

/// How a ``Store`` is opened. Every field has a default that suits an app or a server.
public struct StoreOptions: Sendable {
    /// Durability of writes that do not name one. Default `.synced`.
    public var durability: Durability = .synced

    /// Create the store directory when it does not exist. Default true.
    public var createIfMissing: Bool = true

    /// A WAL segment file is preallocated to this size, and the log moves to a new segment
    /// once it passes it. Default 64 MiB; at least 64 KiB.
    public var walSegmentBytes: Int = 64 << 20

    /// The active memtable is sealed and flushed to a segment file in the background once it
    /// holds this many bytes. Default 16 MiB; at least 64 KiB.
    public var memtableBytes: Int = 16 << 20

    /// The most bytes the active and sealed memtables may hold together. A write that would
    /// pass it waits for a flush to finish (back-pressure, counted in ``StoreStats``).
    /// Default 4 × `memtableBytes`; raised to at least 2 × `memtableBytes`.
    public var memtableHardLimitBytes: Int? = nil

    /// Flush and compaction cut output segment files at about this size. Default 8 MiB.
    public var segmentFileBytes: Int = 8 << 20

    /// Bytes of decoded data blocks kept in memory for reads. Default 32 MiB; 0 turns the
    /// cache off.
    public var blockCacheBytes: Int = 32 << 20

    /// Segment files at this level and deeper have their blocks zlib-compressed (blocks that
    /// shrink by less than 12.5% are stored as they are). Default nil: no compression, which
    /// suits incompressible values; see docs/decisions for the measurements.
    public var compressionFromLevel: Int? = nil

    /// Level 0 is compacted into level 1 once it holds this many files. Default 4.
    public var level0CompactionTrigger: Int = 4

    /// Writes wait while level 0 holds this many files, until compaction catches up: every
    /// read consults every level-0 file, so letting them pile up under a bulk load would
    /// slow reads without bound. Counted with the memtable waits in ``StoreStats``.
    /// Default 12; raised to at least `level0CompactionTrigger + 1`.
    public var level0StopWritesTrigger: Int = 12

    /// The target size of level 1; each deeper level may hold 10 times more. Default 64 MiB.
    public var level1Bytes: Int = 64 << 20

    /// Where diagnostics go (recovery reports, I/O failures). Default: a logger labelled
    /// "strata".
    public var logger: Logger = Logger(label: "strata")

    /// The file system every byte goes through. Tests substitute a simulated one.
    public var fileSystem: any FileSystem = POSIXFileSystem()

    /// Test hooks: named points in the write path where a test can pause or fail the writer.
    @_spi(Testing) public var failpoints: Failpoints? = nil

    /// Test hook: run flushes and compactions on the writer queue, right when they become
    /// due, instead of in the background, so that the sequence of file-system operations is
    /// the same on every run (crash tests enumerate it).
    @_spi(Testing) public var runsBackgroundWorkInline: Bool = false

    public init() {}
}

/// Size limits on what a transaction may hold. Keys and values over these are refused with
/// `StoreError.Code.invalidArgument` before anything is written.
public enum StoreLimits {
    /// The longest key, in bytes. Keys must also be at least 1 byte.
    public static let maxKeyBytes = 16 * 1024
    /// The longest value, in bytes.
    public static let maxValueBytes = 16 << 20
    /// The most key and value bytes one write transaction may put.
    public static let maxTransactionBytes = 256 << 20
}
