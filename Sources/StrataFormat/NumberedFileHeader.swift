// The 32-byte header that WAL segments and manifests share; only the magic differs
// (docs/format/wal.md, docs/format/manifest.md):
//
//   magic[8] | major u16 | minor u16 | flags u32 | number u64 | reserved u32
//   | crc32 u32 (over the 28 bytes before it)

struct NumberedFileHeader {
    static let size = 32

    /// How a kind of file names itself in errors, and what it expects.
    struct Kind {
        let magic: [UInt8]
        /// "WAL segment": the file, in "is N bytes".
        let file: String
        /// "WAL": the format, in "the WAL magic" and "WAL format version".
        let format: String
        let majorVersion: UInt16
        let minorVersion: UInt16
    }

    static func encode(_ kind: Kind, number: UInt64, major: UInt16, minor: UInt16) -> [UInt8] {
        var out = kind.magic
        out.reserveCapacity(size)
        out.appendLittleEndian(major)
        out.appendLittleEndian(minor)
        out.appendLittleEndian(UInt32(0))  // flags
        out.appendLittleEndian(number)
        out.appendLittleEndian(UInt32(0))  // reserved
        out.appendLittleEndian(Checksum.crc32(out))
        assert(out.count == size)
        return out
    }

    /// Checks, in order: length, magic, checksum, version, so that a file of another kind is
    /// reported as such rather than as damaged.
    static func decode(_ bytes: UnsafeRawBufferPointer, _ kind: Kind) throws(FormatError) -> (number: UInt64, major: UInt16, minor: UInt16) {
        guard bytes.count >= size else {
            throw FormatError(.truncated, "\(kind.file) is \(bytes.count) bytes, shorter than its \(size)-byte header", offset: 0)
        }
        guard bytes.prefix(8).elementsEqual(kind.magic) else {
            throw FormatError(.badMagic, "file does not start with the \(kind.format) magic \"\(String(decoding: kind.magic, as: UTF8.self))\"", offset: 0)
        }
        var reader = ByteReader(bytes, position: 8)
        let major = try reader.readUInt16()
        let minor = try reader.readUInt16()
        _ = try reader.readUInt32()
        let number = try reader.readUInt64()
        _ = try reader.readUInt32()
        let stored = try reader.readUInt32()
        guard stored == Checksum.crc32(UnsafeRawBufferPointer(rebasing: bytes[0..<28])) else {
            throw FormatError(.checksumMismatch, "\(kind.file) header checksum mismatch", offset: 28)
        }
        guard major <= kind.majorVersion else {
            throw FormatError(
                .unsupportedVersion(major: major, minor: minor),
                "\(kind.format) format version \(major).\(minor) is newer than the \(kind.majorVersion).\(kind.minorVersion) this build reads", offset: 8)
        }
        return (number, major, minor)
    }
}
