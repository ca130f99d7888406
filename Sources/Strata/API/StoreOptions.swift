import Logging
import StrataIO

/// How a ``Store`` is opened. Every field has a default that suits an app or a server.
public struct StoreOptions: Sendable {
    /// Durability of writes that do not name one. Default `.synced`.
    public var durability: Durability = .synced

    /// Create the store directory when it does not exist. Default true. Ignored when
    /// ``readOnly`` is set: a store opened read-only is never created.
    public var createIfMissing: Bool = true

    /// Open the store for reading only, for a reader that must not or cannot change it: a
    /// widget or an app extension reading what the app wrote, a backup tool, a store on
    /// read-only media. Default false.
    ///
    /// A store opened read-only never creates, writes, renames, truncates or deletes a file in
    /// its directory, and takes no lock, so it opens where the directory or the whole volume
    /// is read-only. The options that only shape writing (`durability`, `walSegmentBytes`,
    /// the memtable, segment and compaction sizes) do not apply to it.
    ///
    /// - opening replays the log into memory as usual, so every acknowledged commit is seen,
    ///   including those not yet flushed to a segment file; a torn write at the end of the
    ///   log is skipped, not cut off (``RecoveryReport/truncatedTail`` reports it), and files
    ///   an interrupted flush or compaction left are left alone;
    /// - reads, snapshots, scans, references, ``Store/stats()`` and
    ///   ``Store/checkpoint(to:)`` work; observations and change feeds work but never fire;
    /// - every call that would write fails with ``StoreError/Code/readOnly``: `write`,
    ///   `asyncWrite`, `run` of a `ReadWrite` operation, `sync()`, `compact()`, and
    ///   `suspend()` (there is nothing to suspend: the store holds no lock and writes
    ///   nothing, so it may stay open while the app is frozen). `enterBackground()` and
    ///   `resume()` change only the reported ``Store/lifecycle``;
    /// - a missing path, or a directory without a store, fails with
    ///   ``StoreError/Code/notAStore`` whatever ``createIfMissing`` says.
    ///
    /// Another process (or another `Store` in this one) may have the store open for writing
    /// meanwhile. The read-only store then reads the store as it was when it opened, and never
    /// sees later commits: close it and open it again for newer data. The writer may
    /// compact and delete files the reader still reads; they stay readable for the reader,
    /// since a file removed while open lives on until it is closed. If the writer removes a
    /// file between the moment the open lists the directory and the moment it opens the file,
    /// the open reads the directory again; it fails with ``StoreError/Code/locked`` only if
    /// that keeps happening.
    public var readOnly: Bool = false

    /// Open a damaged store by giving up what cannot be read, instead of failing with
    /// ``StoreError/Code/corruption``: for apps that prefer a degraded store to none, and
    /// for `strata-fsck --salvage`. Default false.
    ///
    /// A salvaging open keeps everything it can prove intact and reports the rest in
    /// ``RecoveryReport/salvage`` (and logs it as a warning):
    /// - a lost, unreadable or inconsistent manifest is rebuilt from the segment files: every readable one
    ///   is merged into new files, keeping every version it holds;
    /// - a damaged region of the WAL is skipped and replay resumes at the next intact record,
    ///   so the commits on both sides of it are kept; the sequences lost are listed;
    /// - a segment file that cannot be read whole is moved into the store's `aside/`
    ///   directory and left out, its key range reported; older versions of those keys, if a
    ///   deeper file holds them, become visible again.
    ///
    /// What was replayed is then written to a segment file and the damaged WAL segments are
    /// moved into `aside/`, so the next ordinary open succeeds. On an undamaged store it
    /// opens as usual and ``SalvageReport/isEmpty`` is true. Not allowed with ``readOnly``.
    public var salvage: Bool = false

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
    /// read consults every level-0 file, so this bounds how much a bulk load can slow reads.
    /// Counted with the memtable waits in ``StoreStats``. Default 24: room for a burst of a
    /// few hundred MB to land before writes wait (a load of large values ran about twice as
    /// fast as with 12), at the price of reads up to a fifth slower until compaction has
    /// caught up after it. Lower it for a store that must read at full speed right after
    /// heavy writes. Raised to at least `level0CompactionTrigger + 1`.
    public var level0StopWritesTrigger: Int = 24

    /// The target size of level 1; each deeper level may hold 10 times more. Default 64 MiB;
    /// raised to at least 64 KiB.
    public var level1Bytes: Int = 64 << 20

    static let minimumLevel1Bytes = 64 << 10

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

    /// Test hook: the size past which the next manifest edit starts a new manifest (a fresh
    /// snapshot) instead of appending; nil for the engine's own limit (4 MiB). A small value
    /// makes a short workload roll its manifest.
    @_spi(Testing) public var manifestRollBytes: Int? = nil

    /// Test hook: the nodes a memtable run takes before an insert out of key order starts
    /// another (MemTable); nil for the engine's own (8,192). A small value makes a short
    /// workload build memtables of many runs.
    @_spi(Testing) public var memtableRunLength: Int? = nil

    /// Test hook: the stretch of finished blocks a flush or compaction writes to its output
    /// file at a time, at offsets that are multiples of it (SegmentOutput); nil for the
    /// engine's own (2 MiB). A small value makes a short workload write its segment files a
    /// stretch at a time.
    @_spi(Testing) public var segmentWriteBytes: Int? = nil

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
    /// The longest store path, in bytes of UTF-8: the system's path limit (4,096 bytes with
    /// its terminating zero) less room for the longest name of a file inside the store.
    /// ``Store/init(path:options:)`` refuses a longer path with
    /// `StoreError.Code.invalidArgument`.
    public static let maxPathBytes = 4095 - 64
    /// The longest name of one directory in a store path, in bytes of UTF-8 (the system's
    /// limit); ``Store/init(path:options:)`` refuses a longer one with
    /// `StoreError.Code.invalidArgument`.
    public static let maxNameBytes = 255
}
