// CRC32 (the zlib/IEEE polynomial) over every record, header and block Strata writes.
// Why this CRC, and why a folded one beside zlib's: docs/decisions/2026-11-21-checksum.md.
import CStrata

public enum Checksum {
    /// The CRC32 of `bytes`, continuing from `seed` (pass a previous result to checksum
    /// several ranges as if they were one). The value is zlib's `crc32()`; processors with
    /// a carry-less multiply compute it about four times faster.
    @inlinable
    public static func crc32(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return seed }
        return strata_crc32(seed, base, bytes.count)
    }

    @inlinable
    public static func crc32(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, seed: seed) }
    }

    @inlinable
    public static func crc32(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, seed: seed) }
    }

    /// Whether `crc32` takes the carry-less-multiply path on this processor.
    public static var isAccelerated: Bool { strata_crc32_is_accelerated() != 0 }

    /// zlib's CRC32 alone, to test the accelerated path against.
    public static func portableCRC32(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return seed }
        return strata_crc32_portable(seed, base, bytes.count)
    }
}
