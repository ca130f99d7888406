/// A structure read from disk did not decode. The engine turns these into
/// `StoreError` values that name the file; this type only knows the offset inside the
/// bytes it was given.
public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The bytes end before the structure does.
        case truncated
        /// A stored checksum does not match the bytes it covers.
        case checksumMismatch
        /// The bytes do not start with the magic number of the expected file kind.
        case badMagic
        /// The file was written by a newer major format version than this build reads.
        case unsupportedVersion(major: UInt16, minor: UInt16)
        /// A field holds a value the format does not allow.
        case malformed
    }

    public var kind: Kind
    public var message: String
    /// Byte offset, relative to the start of the decoded buffer, where the problem starts.
    public var offset: Int
    /// The file the bytes came from, when the decoder knows it (a segment's data blocks).
    public var file: String?

    public init(_ kind: Kind, _ message: String, offset: Int, file: String? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.file = file
    }

    public var description: String { "\(message) (at byte \(offset))" }
}
