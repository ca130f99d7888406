// Writes the key encoding specified byte for byte in docs/format/keys.md. Keys encoded here
// end up in users' stores, so the bytes for a given value must never change: a new type gets
// a new type code, and the document and this file change together
// (Tests/StrataRecordsTests/KeyWorkedExampleTests.swift checks the document's examples).

import Foundation

/// The first byte of each element's encoding. Ascending codes are all below 0x80; a
/// descending element starts with the bitwise inverse of its code, so the two never meet.
enum KeyTypeCode {
    /// Ends a nested tuple. Never the first byte of an element.
    static let end: UInt8 = 0x00
    static let bytes: UInt8 = 0x01
    static let string: UInt8 = 0x02
    static let tuple: UInt8 = 0x05
    /// Signed integers use 0x0C...0x1C: zero is 0x14, and 0x14 ± n says the value has n bytes.
    static let intZero: UInt8 = 0x14
    /// Unsigned integers use 0x1D...0x25: 0x1D + n says the value has n bytes.
    static let uintZero: UInt8 = 0x1D
    static let falseValue: UInt8 = 0x26
    static let trueValue: UInt8 = 0x27
    static let double: UInt8 = 0x28
    static let date: UInt8 = 0x29
    static let uuid: UInt8 = 0x30
    /// After a zero byte inside a string or byte string: the zero is data, not the end.
    static let escape: UInt8 = 0xFF
    /// The byte after a descending string or byte string (see docs/format/keys.md,
    /// "Descending elements", for why it is needed).
    static let descendingGuard: UInt8 = 0xFF
}

/// Nested tuples may go this deep and no deeper, so that decoding untrusted bytes (a key of
/// thousands of 0x05 bytes) cannot exhaust the stack.
let maximumKeyNesting = 64

/// Appends the encodings of elements to a byte buffer.
struct KeyEncoder {
    private(set) var bytes: [UInt8] = []
    /// XORed into every byte written: 0xFF while writing inside a descending element.
    private var mask: UInt8 = 0
    /// How many tuples enclose the element being written.
    private var depth = 0

    mutating func append(_ element: KeyElement) {
        let (element, descending) = element.unwrapped
        if descending { mask ^= 0xFF }
        switch element {
        case .int(let value): appendInt(value)
        case .uint(let value):
            let count = Self.byteCount(value)
            put(KeyTypeCode.uintZero + UInt8(count))
            putBigEndian(value, count: count)
        case .bool(let value): put(value ? KeyTypeCode.trueValue : KeyTypeCode.falseValue)
        case .double(let value):
            put(KeyTypeCode.double)
            putBigEndian(Self.orderedBits(value), count: 8)
        case .date(let value):
            put(KeyTypeCode.date)
            putBigEndian(Self.orderedBits(KeyElement.canonicalTime(value)), count: 8)
        case .string(let value):
            put(KeyTypeCode.string)
            // The standard library's NFC, the normalisation `String`'s own `==` and `<` use, so
            // strings Swift calls equal get equal bytes. Foundation's
            // `precomposedStringWithCanonicalMapping` is not used: on Linux it leaves a Hangul
            // LV syllable followed by a trailing jamo uncomposed, which Swift's `==` composes.
            value._withNFCCodeUnits { putEscaped($0) }
            put(KeyTypeCode.end)
        case .bytes(let value):
            put(KeyTypeCode.bytes)
            for byte in value { putEscaped(byte) }
            put(KeyTypeCode.end)
        case .uuid(let value):
            put(KeyTypeCode.uuid)
            withUnsafeBytes(of: value.uuid) { for byte in $0 { put(byte) } }
        case .tuple(let elements):
            precondition(depth < maximumKeyNesting, "KeyTuple: tuples nest at most \(maximumKeyNesting) deep")
            put(KeyTypeCode.tuple)
            depth += 1
            for inner in elements { append(inner) }
            depth -= 1
            put(KeyTypeCode.end)
        case .descending:
            preconditionFailure("KeyEncoder: unwrapped element is descending")
        }
        if descending {
            mask ^= 0xFF
            switch element {
            case .string, .bytes: put(KeyTypeCode.descendingGuard)
            default: break
            }
        }
    }

    private mutating func appendInt(_ value: Int64) {
        if value >= 0 {
            let count = Self.byteCount(UInt64(value))
            put(KeyTypeCode.intZero + UInt8(count))
            putBigEndian(UInt64(value), count: count)
        } else {
            // A negative number stores the ones' complement of its magnitude in as many bytes
            // as the magnitude needs: a larger magnitude gets a smaller code or, with the same
            // length, smaller bytes, so it sorts first.
            let magnitude = value.magnitude
            let count = Self.byteCount(magnitude)
            put(KeyTypeCode.intZero - UInt8(count))
            putBigEndian(~magnitude, count: count)
        }
    }

    private mutating func put(_ byte: UInt8) {
        bytes.append(byte ^ mask)
    }

    /// A byte of a string or byte string: a zero is followed by the escape byte, so the
    /// terminator (a zero followed by anything else) stays recognisable.
    private mutating func putEscaped(_ byte: UInt8) {
        put(byte)
        if byte == 0 { put(KeyTypeCode.escape) }
    }

    /// The low `count` bytes of `value`, most significant first.
    private mutating func putBigEndian(_ value: UInt64, count: Int) {
        var shift = 8 * (count - 1)
        while shift >= 0 {
            put(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }

    /// Bytes needed for `value` without leading zero bytes: 0 for zero, up to 8.
    static func byteCount(_ value: UInt64) -> Int {
        (64 - value.leadingZeroBitCount + 7) / 8
    }

    /// A double's bits rearranged so that unsigned comparison gives IEEE 754 total order:
    /// a positive value (sign bit clear) gets its sign bit set, lifting it above every
    /// negative one; a negative value has every bit inverted, so a larger magnitude sorts
    /// lower.
    static func orderedBits(_ value: Double) -> UInt64 {
        let bits = value.bitPattern
        let signBit: UInt64 = 1 << 63
        return bits & signBit != 0 ? ~bits : bits | signBit
    }

    /// The inverse of `orderedBits`.
    static func double(fromOrderedBits bits: UInt64) -> Double {
        let signBit: UInt64 = 1 << 63
        return Double(bitPattern: bits & signBit != 0 ? bits & ~signBit : ~bits)
    }
}
