// CRC32 (the zlib/IEEE polynomial) over every record, header and block Strata writes.
// Why zlib's CRC32 rather than CRC32C: see docs/decisions/2026-11-21-checksum.md.
import CZlib

public enum Checksum {
    /// The CRC32 of `bytes`, continuing from `seed` (pass a previous result to checksum
    /// several ranges as if they were one).
    @inlinable
    public static func crc32(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard var base = bytes.baseAddress, bytes.count > 0 else { return seed }
        var crc = uLong(seed)
        var remaining = bytes.count
        // zlib takes a 32-bit length; walk very large buffers in pieces.
        while remaining > 0 {
            let piece = min(remaining, 1 << 30)
            crc = CZlib.crc32(crc, base.assumingMemoryBound(to: Bytef.self), uInt(piece))
            base += piece
            remaining -= piece
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    @inlinable
    public static func crc32(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, seed: seed) }
    }

    @inlinable
    public static func crc32(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, seed: seed) }
    }
}
