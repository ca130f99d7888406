// The error every `FileSystem` operation throws. errno values are mapped to codes here and
// nowhere else, so the engine can tell a full disk from a permission problem.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

public struct IOError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in terms the engine acts on. A struct over a private enum so new
    /// codes can be added without breaking callers that switch on it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case notFound, alreadyExists, permissionDenied, noSpace, wouldBlock, notADirectory,
                isADirectory, readOnlyFileSystem, tooManyOpenFiles, interrupted, closed, crashed, other
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        public static let notFound = Code(.notFound)
        public static let alreadyExists = Code(.alreadyExists)
        public static let permissionDenied = Code(.permissionDenied)
        /// The disk (or quota) is full.
        public static let noSpace = Code(.noSpace)
        /// A lock is held by someone else.
        public static let wouldBlock = Code(.wouldBlock)
        public static let notADirectory = Code(.notADirectory)
        public static let isADirectory = Code(.isADirectory)
        public static let readOnlyFileSystem = Code(.readOnlyFileSystem)
        public static let tooManyOpenFiles = Code(.tooManyOpenFiles)
        public static let interrupted = Code(.interrupted)
        /// The handle was already closed.
        public static let closed = Code(.closed)
        /// A simulated file system has "lost power": nothing more can be done with it.
        public static let crashed = Code(.crashed)
        public static let other = Code(.other)

        public var description: String { "\(value)" }
    }

    public var code: Code
    /// The operation, as a word: "open", "write", "fdatasync", ...
    public var operation: String
    public var path: String
    /// The errno value, when the operating system gave one.
    public var errno: Int32?
    public var message: String

    public init(code: Code, operation: String, path: String, errno: Int32? = nil, message: String) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = errno
        self.message = message
    }

    /// Builds the error for a failed system call from its errno.
    public init(errno value: Int32, operation: String, path: String) {
        let code: Code
        switch value {
        case ENOENT: code = .notFound
        case EEXIST: code = .alreadyExists
        case EACCES, EPERM: code = .permissionDenied
        case ENOSPC, EDQUOT: code = .noSpace
        case EWOULDBLOCK: code = .wouldBlock
        case ENOTDIR: code = .notADirectory
        case EISDIR: code = .isADirectory
        case EROFS: code = .readOnlyFileSystem
        case EMFILE, ENFILE: code = .tooManyOpenFiles
        case EINTR: code = .interrupted
        case EBADF: code = .closed
        default: code = .other
        }
        let text = String(cString: strerror(value))
        self.init(code: code, operation: operation, path: path, errno: value, message: "\(operation) \(path): \(text)")
    }

    public var description: String { message }
}
