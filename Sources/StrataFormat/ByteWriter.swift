// Little-endian appends to a growing byte array. Every fixed-width integer in every Strata
// file is little-endian.

extension Array where Element == UInt8 {
    @inlinable
    public mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    @inlinable
    public mutating func appendLittleEndian(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) {
            append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    @inlinable
    public mutating func appendLittleEndian(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) {
            append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    @inlinable
    public mutating func appendVarint(_ value: UInt64) {
        Varint.append(value, to: &self)
    }

    /// Overwrites four bytes at `index` with `value`, little-endian (used to patch a length
    /// or checksum once the bytes it covers are known).
    @inlinable
    public mutating func storeLittleEndian(_ value: UInt32, at index: Int) {
        self[index] = UInt8(truncatingIfNeeded: value)
        self[index + 1] = UInt8(truncatingIfNeeded: value >> 8)
        self[index + 2] = UInt8(truncatingIfNeeded: value >> 16)
        self[index + 3] = UInt8(truncatingIfNeeded: value >> 24)
    }
}
