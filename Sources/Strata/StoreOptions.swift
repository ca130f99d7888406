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

    /// Where diagnostics go (recovery reports, I/O failures). Default: a logger labelled
    /// "strata".
    public var logger: Logger = Logger(label: "strata")

    /// The file system every byte goes through. Tests substitute a simulated one.
    public var fileSystem: any FileSystem = POSIXFileSystem()

    /// Test hooks: named points in the write path where a test can pause or fail the writer.
    @_spi(Testing) public var failpoints: Failpoints? = nil

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
