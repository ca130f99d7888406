/// A cursor over borrowed bytes that decodes the little-endian integers and varints Strata's
/// formats use. Every read checks bounds and throws `FormatError.truncated` rather than trap,
/// because the bytes come from disk and may be damaged.
///
/// The reader borrows `bytes`: the caller keeps the memory alive and unchanged while the
/// reader, or any buffer it returned, is in use (always inside one `withUnsafeBytes` call).
public struct ByteReader {
    public let bytes: UnsafeRawBufferPointer
    /// Offset of the next unread byte.
    public var position: Int
    /// Added to `position` in error offsets, so they are relative to the file.
    public let baseOffset: Int

    public init(_ bytes: UnsafeRawBufferPointer, position: Int = 0, baseOffset: Int = 0) {
        self.bytes = bytes
        self.position = position
        self.baseOffset = baseOffset
    }

    public var remaining: Int { bytes.count - position }
    public var isAtEnd: Bool { position >= bytes.count }

    @inlinable
    mutating func require(_ count: Int, _ what: String) throws(FormatError) {
        if count < 0 || count > bytes.count - position {
            throw FormatError(.truncated, "\(what) runs past the end of the data", offset: baseOffset + position)
        }
    }

    public mutating func readUInt8(_ what: String = "byte") throws(FormatError) -> UInt8 {
        try require(1, what)
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func readUInt16(_ what: String = "16-bit field") throws(FormatError) -> UInt16 {
        try require(2, what)
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    public mutating func readUInt32(_ what: String = "32-bit field") throws(FormatError) -> UInt32 {
        try require(4, what)
        defer { position += 4 }
        return bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian
    }

    public mutating func readUInt64(_ what: String = "64-bit field") throws(FormatError) -> UInt64 {
        try require(8, what)
        defer { position += 8 }
        return bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self).littleEndian
    }

    public mutating func readVarint(_ what: String = "varint") throws(FormatError) -> UInt64 {
        let start = position
        switch decodeVarint(bytes, &position, bytes.count, maxBytes: 10) {
        case .value(let value):
            return value
        case .truncated:
            throw FormatError(.truncated, "\(what) runs past the end of the data", offset: baseOffset + start)
        case .overflow:
            throw FormatError(.malformed, "\(what) overflows 64 bits", offset: baseOffset + start)
        case .tooLong:
            throw FormatError(.malformed, "\(what) is longer than 10 bytes", offset: baseOffset + start)
        }
    }

    /// Reads a varint that must fit in `limit`; used for lengths, so a damaged length cannot
    /// ask for gigabytes.
    public mutating func readLength(_ what: String, limit: Int) throws(FormatError) -> Int {
        let start = position
        let value = try readVarint(what)
        guard value <= UInt64(limit) else {
            throw FormatError(.malformed, "\(what) \(value) is over the limit of \(limit)", offset: baseOffset + start)
        }
        return Int(value)
    }

    /// The next `count` bytes, borrowed (valid as long as the underlying buffer is).
    public mutating func readBytes(_ count: Int, _ what: String) throws(FormatError) -> UnsafeRawBufferPointer {
        try require(count, what)
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
    }
}
