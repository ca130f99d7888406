// Unsigned LEB128 varints: 7 bits a byte, low bits first, high bit set on every byte but the
// last. At most 10 bytes for a UInt64. Used for lengths and counts inside records.

public enum Varint {
    public static let maxBytes = 10

    @inlinable
    public static func encodedSize(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 {
            v >>= 7
            n += 1
        }
        return n
    }

    @inlinable
    public static func append(_ value: UInt64, to buffer: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        buffer.append(UInt8(truncatingIfNeeded: v))
    }

    /// Stores `value` at `start` (room for `maxBytes` needed) and returns the bytes it took.
    @inlinable
    public static func store(_ value: UInt64, at start: UnsafeMutableRawPointer) -> Int {
        var v = value
        var n = 0
        while v >= 0x80 {
            start.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: n, as: UInt8.self)
            v >>= 7
            n += 1
        }
        start.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: n, as: UInt8.self)
        return n + 1
    }
}
