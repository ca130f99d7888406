import Foundation

/// The record value format's constants; the layout is specified in docs/format/records.md.
///
/// Stored records outlive the code that wrote them, so a tag's meaning never changes: a new
/// kind of value gets a new tag, and a change to the layout a new format version.
enum RecordFormat {
    /// The first byte of every stored record.
    static let version: UInt8 = 1

    enum Tag: UInt8 {
        case null = 0x00
        case bool = 0x01  // one byte follows: 0 or 1
        case int = 0x02  // zigzag varint
        case uint = 0x03  // varint
        case double = 0x04  // 8 bytes, IEEE 754 bit pattern, little-endian
        case string = 0x05  // varint length, UTF-8
        case bytes = 0x06  // varint length, bytes (Foundation's Data)
        case uuid = 0x07  // 16 bytes (UUID.uuid)
        case date = 0x08  // 8 bytes: timeIntervalSinceReferenceDate as a double
        case array = 0x09  // varint body length, varint count, values
        case keyed = 0x0A  // varint body length, varint count, (varint key length, key UTF-8, value)*
    }

    /// How deep containers may nest in a stored record: deeper input is refused, never
    /// recursed into, so a damaged or crafted value cannot exhaust the stack.
    static let maxDepth = 128
}

extension Array where Element == UInt8 {
    /// Appends `value` as an unsigned LEB128 varint.
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    mutating func appendLittleEndian(_ value: UInt64) {
        var value = value
        for _ in 0..<8 {
            append(UInt8(truncatingIfNeeded: value))
            value >>= 8
        }
    }
}

/// How many bytes `value` takes as a varint.
func varintSize(_ value: UInt64) -> Int {
    var size = 1
    var value = value >> 7
    while value != 0 {
        size += 1
        value >>= 7
    }
    return size
}

func zigzag(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
}

func unzigzag(_ value: UInt64) -> Int64 {
    Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
}
