import Foundation

/// One value located in a stored record's bytes, checked against its enclosing bounds.
///
/// The coding paths its functions take are autoclosures, built only for an error message,
/// not for every value read.
///
/// Parsing never recurses: a container's header gives its body length, so a value's end is
/// known without reading inside it. Every length is checked against the enclosing value
/// before use, so a damaged or crafted record gives a `DecodingError`, never a trap.
struct RecordValue {
    let bytes: [UInt8]
    let tag: RecordFormat.Tag
    /// Where the value's content starts: right after the tag, or after the length of a
    /// string, byte string or container.
    let payloadStart: Int
    /// One past the value's last byte.
    let end: Int

    /// The record's top-level value, after checking the version byte.
    static func root(of bytes: [UInt8]) throws -> RecordValue {
        guard let version = bytes.first else { throw corrupt("an empty record", at: []) }
        guard version == RecordFormat.version else {
            throw corrupt(
                "record format version \(version), which this version of Strata does not know (it reads version \(RecordFormat.version)); open the store with a newer Strata",
                at: [])
        }
        let value = try parse(bytes, at: 1, limit: bytes.count, path: [])
        guard value.end == bytes.count else {
            throw corrupt("\(bytes.count - value.end) bytes after the record's value", at: [])
        }
        return value
    }

    /// The value that starts at `offset` and must end by `limit`.
    static func parse(
        _ bytes: [UInt8], at offset: Int, limit: Int, path: @autoclosure () -> [any CodingKey]
    ) throws -> RecordValue {
        guard offset < limit else { throw corrupt("a value cut short at byte \(offset)", at: path()) }
        guard let tag = RecordFormat.Tag(rawValue: bytes[offset]) else {
            throw corrupt("unknown value tag 0x\(String(bytes[offset], radix: 16)) at byte \(offset)", at: path())
        }
        var cursor = offset + 1
        var payloadStart = cursor
        let end: Int
        switch tag {
        case .null:
            end = cursor
        case .bool:
            end = cursor + 1
        case .int, .uint:
            _ = try readVarint(bytes, &cursor, limit: limit, path: path())
            end = cursor
        case .double, .date:
            end = cursor + 8
        case .uuid:
            end = cursor + 16
        case .string, .bytes, .array, .keyed:
            let length = try readVarint(bytes, &cursor, limit: limit, path: path())
            guard length <= UInt64(limit - cursor) else {
                throw corrupt("a length of \(length) bytes at byte \(offset) that runs past its container", at: path())
            }
            end = cursor + Int(length)
            payloadStart = cursor
        }
        guard end <= limit else { throw corrupt("a value at byte \(offset) that runs past its container", at: path()) }
        return RecordValue(bytes: bytes, tag: tag, payloadStart: payloadStart, end: end)
    }

    static func readVarint(
        _ bytes: [UInt8], _ cursor: inout Int, limit: Int, path: @autoclosure () -> [any CodingKey]
    ) throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard cursor < limit else { throw corrupt("a number cut short at byte \(cursor)", at: path()) }
            let byte = bytes[cursor]
            cursor += 1
            guard shift < 64, shift < 63 || byte <= 1 else {
                throw corrupt("a number longer than 64 bits at byte \(cursor - 1)", at: path())
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    static func corrupt(_ message: String, at path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: "damaged record: " + message))
    }

    // MARK: Scalars

    func boolValue(_ path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        try expect(.bool, Bool.self, path())
        switch bytes[payloadStart] {
        case 0: return false
        case 1: return true
        default: throw Self.corrupt("a Boolean byte \(bytes[payloadStart]) that is neither 0 nor 1", at: path())
        }
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, _ path: @autoclosure () -> [any CodingKey]) throws -> T {
        var cursor = payloadStart
        let converted: T?
        switch tag {
        case .int:
            converted = T(exactly: unzigzag(try Self.readVarint(bytes, &cursor, limit: end, path: path())))
        case .uint:
            converted = T(exactly: try Self.readVarint(bytes, &cursor, limit: end, path: path()))
        default:
            throw mismatch(T.self, path())
        }
        guard let converted else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: path(), debugDescription: "the stored number does not fit in \(T.self)"))
        }
        return converted
    }

    func doubleValue(_ path: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch tag {
        case .double: return Double(bitPattern: littleEndian(at: payloadStart))
        // A field that changed from an integer to a floating-point type still reads.
        case .int: return Double(try integer(Int64.self, path()))
        case .uint: return Double(try integer(UInt64.self, path()))
        default: throw mismatch(Double.self, path())
        }
    }

    func stringValue(_ path: @autoclosure () -> [any CodingKey]) throws -> String {
        try expect(.string, String.self, path())
        guard let string = String(validating: bytes[payloadStart..<end], as: UTF8.self) else {
            throw Self.corrupt("a string that is not valid UTF-8", at: path())
        }
        return string
    }

    func bytesValue(_ path: @autoclosure () -> [any CodingKey]) throws -> [UInt8] {
        try expect(.bytes, Data.self, path())
        return Array(bytes[payloadStart..<end])
    }

    func uuidValue(_ path: @autoclosure () -> [any CodingKey]) throws -> UUID {
        try expect(.uuid, UUID.self, path())
        let b = bytes
        let p = payloadStart
        return UUID(
            uuid: (
                b[p], b[p + 1], b[p + 2], b[p + 3], b[p + 4], b[p + 5], b[p + 6], b[p + 7],
                b[p + 8], b[p + 9], b[p + 10], b[p + 11], b[p + 12], b[p + 13], b[p + 14], b[p + 15]
            ))
    }

    func dateValue(_ path: @autoclosure () -> [any CodingKey]) throws -> Date {
        try expect(.date, Date.self, path())
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: littleEndian(at: payloadStart)))
    }

    private func littleEndian(at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    func expect(_ expected: RecordFormat.Tag, _ type: Any.Type, _ path: @autoclosure () -> [any CodingKey]) throws {
        guard tag == expected else { throw mismatch(type, path()) }
    }

    func mismatch(_ type: Any.Type, _ path: @autoclosure () -> [any CodingKey]) -> DecodingError {
        if tag == .null {
            return .valueNotFound(type, DecodingError.Context(codingPath: path(), debugDescription: "the stored value is nil"))
        }
        return .typeMismatch(
            type, DecodingError.Context(codingPath: path(), debugDescription: "the stored value is a \(tag), not a \(type)"))
    }

    // MARK: Containers

    /// A container's element count and where its first element starts.
    func containerHeader(_ path: [any CodingKey]) throws -> (count: Int, first: Int) {
        var cursor = payloadStart
        let count = try Self.readVarint(bytes, &cursor, limit: end, path: path)
        // Every element takes at least one byte, so a larger count is damage.
        guard count <= UInt64(end - cursor) else { throw Self.corrupt("a container that claims \(count) elements", at: path) }
        return (Int(count), cursor)
    }
}
