// The `STRATA` file that marks a directory as a Strata store (docs/format/store.md).
//
//   identity := magic[8] "STRATADB" | major u16 | minor u16 | reserved u32 | crc32 u32
//               crc32 covers the 16 bytes before it                          (20 bytes)

public enum StoreIdentityFormat {
    public static let fileName = "STRATA"
    public static let magic: [UInt8] = Array("STRATADB".utf8)
    public static let majorVersion: UInt16 = 1
    public static let minorVersion: UInt16 = 0
    public static let size = 20

    public static func encode() -> [UInt8] {
        var out = magic
        out.appendLittleEndian(majorVersion)
        out.appendLittleEndian(minorVersion)
        out.appendLittleEndian(UInt32(0))
        out.appendLittleEndian(Checksum.crc32(out))
        return out
    }

    /// Validates an identity file: magic first (another kind of file), then checksum, then
    /// version (a newer Strata).
    public static func validate(_ bytes: [UInt8]) throws(FormatError) -> (major: UInt16, minor: UInt16) {
        guard bytes.count >= 8, Array(bytes[0..<8]) == magic else {
            throw FormatError(.badMagic, "file does not start with the Strata magic \"STRATADB\"", offset: 0)
        }
        guard bytes.count == size else {
            throw FormatError(.truncated, "identity file is \(bytes.count) bytes, expected \(size)", offset: 0)
        }
        let stored = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self).littleEndian }
        guard stored == Checksum.crc32(bytes[0..<16]) else {
            throw FormatError(.checksumMismatch, "identity file checksum mismatch", offset: 16)
        }
        let major = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        let minor = UInt16(bytes[10]) | UInt16(bytes[11]) << 8
        guard major <= majorVersion else {
            throw FormatError(
                .unsupportedVersion(major: major, minor: minor),
                "store format version \(major).\(minor) is newer than the \(majorVersion).\(minorVersion) this build reads", offset: 8)
        }
        return (major, minor)
    }
}
