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
}
