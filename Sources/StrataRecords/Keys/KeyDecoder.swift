import Foundation

// Reads the key encoding of docs/format/keys.md. It accepts exactly the bytes the encoder
// (KeyEncoder.swift) can write: anything else, including a value written in a longer form
// than needed, is a `KeyDecodingError`, so a decoded key always encodes back to the same
// bytes and no two byte strings stand for one key. Every read is bounds-checked and every
// calculation is overflow-free: no input traps.

/// Why a byte string is not a key, and where.
public struct KeyDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The offset, in the bytes being decoded, of the byte found wrong (or the length of the
    /// input, when it ends too soon).
    public let offset: Int
    /// What is wrong, in words.
    public let message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String {
        "not a valid key at byte \(offset): \(message)"
    }
}

/// Decodes a whole key, one element at a time.
struct KeyDecoder {
    private let bytes: [UInt8]
    private var position = 0
    /// XORed into every byte read: 0xFF inside a descending element.
    private var mask: UInt8 = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Every element of the key; the input must end exactly after the last one.
    mutating func decodeKey() throws(KeyDecodingError) -> [KeyElement] {
        var elements: [KeyElement] = []
        while position < bytes.count {
            elements.append(try element(depth: 0))
        }
        return elements
    }

    /// One element starting at `position`. `depth` counts the tuples around it.
    private mutating func element(depth: Int) throws(KeyDecodingError) -> KeyElement {
        let start = position
        var code = try next("a type code")
        let descending = code >= 0x80
        if descending {
            code = ~code
            mask ^= 0xFF
        }
        let value: KeyElement
        switch code {
        case KeyTypeCode.bytes:
            value = .bytes(try escapedBytes(start: start, what: "byte string"))
        case KeyTypeCode.string:
            value = .string(try string(start: start))
        case KeyTypeCode.tuple:
            value = .tuple(try tuple(start: start, depth: depth + 1))
        case KeyTypeCode.intZero - 8...KeyTypeCode.intZero + 8:
            value = .int(try int(code: code, start: start))
        case KeyTypeCode.uintZero...KeyTypeCode.uintZero + 8:
            value = .uint(try uint(code: code, start: start))
        case KeyTypeCode.falseValue:
            value = .bool(false)
        case KeyTypeCode.trueValue:
            value = .bool(true)
        case KeyTypeCode.double:
            value = .double(KeyEncoder.double(fromOrderedBits: try bigEndian(count: 8)))
        case KeyTypeCode.date:
            value = .date(try date(start: start))
        case KeyTypeCode.uuid:
            value = .uuid(try uuid())
        default:
            let byte = bytes[start]
            throw KeyDecodingError(offset: start, message: "0x\(hex(byte)) is not a type code")
        }
        guard descending else { return value }
        mask ^= 0xFF
        if code == KeyTypeCode.string || code == KeyTypeCode.bytes {
            let guardOffset = position
            guard try next("the byte after a descending string") == KeyTypeCode.descendingGuard else {
                throw KeyDecodingError(offset: guardOffset, message: "a descending string or byte string must be followed by 0xff")
            }
        }
        return .descending(value)
    }

    /// The next byte, unmasked; `what` names what was expected when the input has ended.
    private mutating func next(_ what: String) throws(KeyDecodingError) -> UInt8 {
        guard position < bytes.count else {
            throw KeyDecodingError(offset: position, message: "the key ends where \(what) should follow")
        }
        defer { position += 1 }
        return bytes[position] ^ mask
    }

    /// `count` bytes as a big-endian number.
    private mutating func bigEndian(count: Int) throws(KeyDecodingError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<count {
            value = value << 8 | UInt64(try next("\(count) value bytes"))
        }
        return value
    }

    private mutating func int(code: UInt8, start: Int) throws(KeyDecodingError) -> Int64 {
        if code == KeyTypeCode.intZero { return 0 }
        let count = Int(code > KeyTypeCode.intZero ? code - KeyTypeCode.intZero : KeyTypeCode.intZero - code)
        let payload = try bigEndian(count: count)
        // The encoder writes no more bytes than the magnitude needs.
        let magnitude = code > KeyTypeCode.intZero ? payload : ~payload & (UInt64.max >> UInt64(64 - 8 * count))
        guard KeyEncoder.byteCount(magnitude) == count else {
            throw KeyDecodingError(offset: start, message: "integer written in \(count) bytes where fewer suffice")
        }
        if code > KeyTypeCode.intZero {
            guard let value = Int64(exactly: magnitude) else {
                throw KeyDecodingError(offset: start, message: "integer \(magnitude) is above Int64.max")
            }
            return value
        }
        guard magnitude <= Int64.min.magnitude else {
            throw KeyDecodingError(offset: start, message: "integer -\(magnitude) is below Int64.min")
        }
        return magnitude == Int64.min.magnitude ? .min : -Int64(magnitude)
    }

    private mutating func uint(code: UInt8, start: Int) throws(KeyDecodingError) -> UInt64 {
        let count = Int(code - KeyTypeCode.uintZero)
        let value = try bigEndian(count: count)
        guard KeyEncoder.byteCount(value) == count else {
            throw KeyDecodingError(offset: start, message: "unsigned integer written in \(count) bytes where fewer suffice")
        }
        return value
    }

    private mutating func date(start: Int) throws(KeyDecodingError) -> Date {
        let date = Date(timeIntervalSinceReferenceDate: KeyEncoder.double(fromOrderedBits: try bigEndian(count: 8)))
        // The encoder writes one form for the dates `Date` cannot tell apart.
        guard KeyElement.canonicalTime(date).bitPattern == date.timeIntervalSinceReferenceDate.bitPattern else {
            throw KeyDecodingError(offset: start, message: "date written as -0.0 or as a NaN other than the canonical one")
        }
        return date
    }

    private mutating func uuid() throws(KeyDecodingError) -> UUID {
        var raw: [UInt8] = []
        raw.reserveCapacity(16)
        for _ in 0..<16 { raw.append(try next("16 UUID bytes")) }
        return UUID(
            uuid: (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
            )
        )
    }

    /// The contents of a string or byte string: bytes up to a zero not followed by the escape
    /// byte; a zero followed by the escape byte is a zero of the contents.
    private mutating func escapedBytes(start: Int, what: String) throws(KeyDecodingError) -> [UInt8] {
        var contents: [UInt8] = []
        while true {
            let byte = try next("the end of the \(what) that starts at byte \(start)")
            if byte != 0 {
                contents.append(byte)
            } else if position < bytes.count, bytes[position] ^ mask == KeyTypeCode.escape {
                contents.append(0)
                position += 1
            } else {
                return contents
            }
        }
    }

    private mutating func string(start: Int) throws(KeyDecodingError) -> String {
        let utf8 = try escapedBytes(start: start, what: "string")
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw KeyDecodingError(offset: start, message: "string is not valid UTF-8")
        }
        // ASCII is always in NFC; anything else must be what the encoder would have written.
        if utf8.contains(where: { $0 >= 0x80 }), string._nfcCodeUnits != utf8 {
            throw KeyDecodingError(offset: start, message: "string is not in Unicode normalization form C")
        }
        return string
    }

    private mutating func tuple(start: Int, depth: Int) throws(KeyDecodingError) -> [KeyElement] {
        guard depth <= maximumKeyNesting else {
            throw KeyDecodingError(offset: start, message: "tuples nested more than \(maximumKeyNesting) deep")
        }
        var elements: [KeyElement] = []
        while true {
            guard position < bytes.count else {
                throw KeyDecodingError(offset: position, message: "the key ends inside the tuple that starts at byte \(start)")
            }
            if bytes[position] ^ mask == KeyTypeCode.end {
                position += 1
                return elements
            }
            elements.append(try element(depth: depth))
        }
    }

    private func hex(_ byte: UInt8) -> String {
        (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }
}
