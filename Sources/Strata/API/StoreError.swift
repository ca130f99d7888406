@_spi(Engine) import StrataFormat
import StrataIO

/// The error every `Store` operation throws for problems of the store itself. Errors thrown
/// by your own transaction closures reach you unchanged.
///
/// Switch on ``code`` to decide what to do; show ``message`` to a person.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is. New codes may be added in later versions, so a `switch`
    /// over codes needs a `default:` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case corruption, io, diskFull, closed, locked, suspended, readOnly, conflict,
                invalidArgument, formatVersion, notAStore, overflow, historyUnavailable
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A file's bytes are damaged: a checksum, a length or an order does not hold.
        /// ``StoreError/file`` and ``StoreError/offset`` say where.
        public static let corruption = Code(.corruption)
        /// The operating system failed a file operation.
        public static let io = Code(.io)
        /// The disk (or quota) is full. Nothing was committed; free space and reopen.
        public static let diskFull = Code(.diskFull)
        /// The store was closed.
        public static let closed = Code(.closed)
        /// Another `Store`, in this process or another, has the store open. A store opened
        /// read-only (``StoreOptions/readOnly``) takes no lock; it gets this code only when a
        /// writer kept removing files while it opened.
        public static let locked = Code(.locked)
        /// The store is suspended; retry after `resume()`.
        public static let suspended = Code(.suspended)
        /// The store refuses writes; reads still work. Either it was opened read-only
        /// (``StoreOptions/readOnly``), or an earlier write failed in a way that leaves the
        /// log's state unknown, and it refuses writes until it is closed and reopened.
        public static let readOnly = Code(.readOnly)
        /// An optimistic check found the data changed (`require(unchanged:)`): read it again,
        /// with a new reference, and redo the change. Making the same call again fails the
        /// same way, so it is not retryable.
        public static let conflict = Code(.conflict)
        /// A change feed's consumer fell further behind than its buffer holds; the feed
        /// ended. Start a new one and read the range again.
        public static let overflow = Code(.overflow)
        /// A change feed cannot deliver some changes one by one, so it ended rather than skip
        /// them: another process committed them while the store was suspended and wrote them
        /// into segment files, which keep only each key's latest value. The message names the
        /// versions. Start a new feed and read the range again.
        public static let historyUnavailable = Code(.historyUnavailable)
        /// A call's argument is not allowed: an empty or oversized key, an oversized value,
        /// a transaction used outside its closure, a nested synchronous write, bytes read as
        /// a `String` that are not UTF-8.
        public static let invalidArgument = Code(.invalidArgument)
        /// A file was written by a newer Strata format than this build reads.
        public static let formatVersion = Code(.formatVersion)
        /// The path holds something that is not a Strata store.
        public static let notAStore = Code(.notAStore)

        public var description: String { value.rawValue }
    }

    public var code: Code
    /// What happened and what to do about it, in a sentence or two.
    public var message: String
    /// The file concerned, when there is one.
    public var file: String?
    /// The byte offset in ``file`` where the problem is, when known.
    public var offset: Int64?
    /// The operating-system error behind an `.io` or `.diskFull` error.
    public var underlying: IOError?

    public init(_ code: Code, _ message: String, file: String? = nil, offset: Int64? = nil, underlying: IOError? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.offset = offset
        self.underlying = underlying
    }

    /// True for errors that may go away if the same call is made again later.
    public var isRetryable: Bool { code == .suspended }

    public var description: String {
        var text = "\(code): \(message)"
        if let file {
            text += " [\(file)"
            if let offset { text += " at byte \(offset)" }
            text += "]"
        }
        return text
    }
}

extension StoreError {
    /// Wraps a file-system failure, naming what the store was doing.
    init(_ error: IOError, while doing: String) {
        if error.code == .noSpace {
            self.init(
                .diskFull,
                "the disk is full while \(doing): \(error.message). Nothing of the failed operation was committed; free space, then close and reopen the store",
                file: error.path, underlying: error)
        } else {
            self.init(.io, "I/O failure while \(doing): \(error.message)", file: error.path, underlying: error)
        }
    }

    /// Wraps a decode failure in a named file.
    /// A format error in a file of the store. A wrong magic number means `.notAStore` for the
    /// identity file (the directory holds something else), but `.corruption` for the files
    /// the store wrote itself (a WAL segment, manifest or segment file whose first bytes
    /// decayed), so that damage anywhere reads as damage.
    init(_ error: FormatError, file: String?, baseOffset: Int64 = 0, isIdentityFile: Bool = false) {
        let file = file ?? error.file
        switch error.kind {
        case .unsupportedVersion:
            self.init(.formatVersion, "\(error.message); open it with a newer version of Strata", file: file, offset: baseOffset + Int64(error.offset))
        case .badMagic where isIdentityFile:
            self.init(.notAStore, "\(file ?? "the file") is not a Strata file: \(error.message)", file: file, offset: baseOffset + Int64(error.offset))
        case .badMagic:
            self.init(
                .corruption,
                "\(error.message): the store's own file is damaged (or was replaced by another file); run strata-fsck on the store (with --salvage it keeps what can still be read), or restore it from a backup",
                file: file, offset: baseOffset + Int64(error.offset))
        default:
            self.init(
                .corruption,
                "\(error.message). The file is damaged; run strata-fsck on the store (with --salvage it keeps what can still be read), or restore it from a backup",
                file: file,
                offset: baseOffset + Int64(error.offset))
        }
    }

    /// Any failure of the store's own machinery as a `StoreError`: file-system errors are
    /// wrapped with what the store was doing, store errors pass through.
    static func wrapping(_ error: any Error, while doing: String) -> StoreError {
        switch error {
        case let error as StoreError: return error
        case let error as IOError: return StoreError(error, while: doing)
        case let error as FormatError: return StoreError(error, file: error.file)
        default: return StoreError(.io, "failure while \(doing): \(error)")
        }
    }

    static func closed() -> StoreError {
        StoreError(.closed, "the store is closed; open a new Store to use it again")
    }

    /// What a store opened read-only answers to `call`, a call that would write.
    static func openedReadOnly(_ path: String, refusing call: String) -> StoreError {
        StoreError(
            .readOnly,
            "the store at \(path) was opened read-only (StoreOptions.readOnly), so \(call) is refused; open it without readOnly to change it")
    }

    static func suspended() -> StoreError {
        StoreError(.suspended, "the store is suspended, and did not run this call; call resume() and retry")
    }

    /// A commit refused because the last one took sequence 2^64 - 1: no store Strata wrote
    /// gets there (a million commits a second would take 584,000 years), so its files say
    /// something untrue.
    static func sequencesExhausted() -> StoreError {
        StoreError(
            .corruption,
            "the store's last commit has sequence 2^64 - 1, which leaves no number for another; its manifest or log was not written by Strata. Read its data out (it stays readable) into a new store"
        )
    }
}

/// Maps any error from inside the engine to what callers see: file-system and format errors
/// become `StoreError`; everything else (a `StoreError`, or the caller's own error) passes
/// through unchanged.
func mapEngineError(_ error: any Error, while doing: String) -> any Error {
    switch error {
    case let error as IOError: return StoreError(error, while: doing)
    case let error as FormatError: return StoreError(error, file: error.file)
    default: return error
    }
}
