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

    /// The ways `crc32` computes a CRC, narrowest first: zlib's tables, then the fold in
    /// 128-bit registers, in 256-bit ones (VPCLMULQDQ with AVX2) and in 512-bit ones
    /// (VPCLMULQDQ with AVX-512). `crc32` takes the widest this processor has.
    @_spi(Testing) public enum Path: Int32, CaseIterable, Sendable {
        case portable = 0
        case fold128
        case fold256
        case fold512
    }

    /// Whether this processor can take `path`.
    @_spi(Testing) public static func isAvailable(_ path: Path) -> Bool {
        strata_crc32_has_path(path.rawValue) != 0
    }

    /// `crc32` taking at most `path`, so a test can check each path this processor has
    /// against zlib's value.
    @_spi(Testing) public static func crc32(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0, upTo path: Path) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return seed }
        return strata_crc32_using(path.rawValue, seed, base, bytes.count)
    }
}
