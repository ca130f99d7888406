import StrataIO

/// Why the verifier could not check a store at all. Damage inside a store is never thrown:
/// it is a ``VerifierFinding`` in the report.
public struct VerifierError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. A struct over a private enum, so new codes do not break callers
    /// that switch on it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case notFound, notADirectory, notAStore, locked, unsupportedVersion, io
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Nothing exists at the path.
        public static let notFound = Code(.notFound)
        /// The path is a file; a store is a directory.
        public static let notADirectory = Code(.notADirectory)
        /// The directory has no `STRATA` identity file.
        public static let notAStore = Code(.notAStore)
        /// A running store holds the directory's lock.
        public static let locked = Code(.locked)
        /// The store was written by a newer major format version than this build reads.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The file system failed (listing the directory, taking the lock, ...).
        public static let io = Code(.io)

        public var description: String { "\(value)" }
    }

    public var code: Code
    /// A sentence saying what happened and what to do.
    public var message: String
    /// The path the error is about.
    public var path: String
    /// The file system error behind it, if any.
    public var underlying: IOError?

    public init(_ code: Code, _ message: String, path: String, underlying: IOError? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlying = underlying
    }

    public var description: String { message }
}
