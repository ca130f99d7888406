import Foundation
import StrataRecords
import Testing

/// Keeps the worked examples of docs/format/keys.md exact: each key there encodes to the
/// bytes printed next to it, and those bytes decode back to the key.
struct KeyWorkedExampleTests {
    struct Example: CustomTestStringConvertible, Sendable {
        let elements: [KeyElement]
        let hex: String
        var testDescription: String { "\(KeyTuple(elements)) = \(hex)" }
    }

    static let uuid = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!

    static let examples: [Example] = [
        Example(elements: [.string("users"), .int(42)], hex: "02 75 73 65 72 73 00 15 2a"),
        Example(elements: [.int(0)], hex: "14"),
        Example(elements: [.int(255)], hex: "15 ff"),
        Example(elements: [.int(256)], hex: "16 01 00"),
        Example(elements: [.int(-1)], hex: "13 fe"),
        Example(elements: [.int(-255)], hex: "13 00"),
        Example(elements: [.int(-256)], hex: "12 fe ff"),
        Example(elements: [.int(.max)], hex: "1c 7f ff ff ff ff ff ff ff"),
        Example(elements: [.int(.min)], hex: "0c 7f ff ff ff ff ff ff ff"),
        Example(elements: [.uint(0)], hex: "1d"),
        Example(elements: [.uint(42)], hex: "1e 2a"),
        Example(elements: [.uint(.max)], hex: "25 ff ff ff ff ff ff ff ff"),
        Example(elements: [.bool(false), .bool(true)], hex: "26 27"),
        Example(elements: [.double(1.0)], hex: "28 bf f0 00 00 00 00 00 00"),
        Example(elements: [.double(-1.0)], hex: "28 40 0f ff ff ff ff ff ff"),
        Example(elements: [.double(0.0)], hex: "28 80 00 00 00 00 00 00 00"),
        Example(elements: [.double(-0.0)], hex: "28 7f ff ff ff ff ff ff ff"),
        Example(elements: [.double(.infinity)], hex: "28 ff f0 00 00 00 00 00 00"),
        Example(elements: [.double(Double(bitPattern: 0x7FF8_0000_0000_0000))], hex: "28 ff f8 00 00 00 00 00 00"),
        Example(elements: [.double(Double(bitPattern: 0xFFF8_0000_0000_0000))], hex: "28 00 07 ff ff ff ff ff ff"),
        Example(elements: [.date(Date(timeIntervalSinceReferenceDate: 0))], hex: "29 80 00 00 00 00 00 00 00"),
        Example(elements: [.date(Date(timeIntervalSinceReferenceDate: 1.5))], hex: "29 bf f8 00 00 00 00 00 00"),
        Example(elements: [.uuid(uuid)], hex: "30 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"),
        Example(elements: [.string("")], hex: "02 00"),
        Example(elements: [.string("a\0b")], hex: "02 61 00 ff 62 00"),
        Example(elements: [.string("\u{E9}")], hex: "02 c3 a9 00"),
        Example(elements: [.string("e\u{301}")], hex: "02 c3 a9 00"),
        Example(elements: [.bytes([])], hex: "01 00"),
        Example(elements: [.bytes([0x00, 0xFF])], hex: "01 00 ff ff 00"),
        Example(elements: [.string("a"), .tuple([.string("b"), .int(1)]), .tuple([])], hex: "02 61 00 05 02 62 00 15 01 00 05 00"),
        Example(elements: [.descending(.int(1))], hex: "ea fe"),
        Example(elements: [.descending(.bool(true))], hex: "d8"),
        Example(elements: [.descending(.string("a"))], hex: "fd 9e ff ff"),
        Example(elements: [.descending(.string("ab"))], hex: "fd 9e 9d ff ff"),
        Example(elements: [.descending(.string("a\0"))], hex: "fd 9e ff 00 ff ff"),
        Example(elements: [.descending(.tuple([.string("a"), .int(1)]))], hex: "fa fd 9e ff ea fe ff"),
        Example(elements: [.descending(.tuple([.descending(.string("a"))]))], hex: "fa 02 61 00 00 ff")
    ]

    @Test(arguments: examples)
    func exampleMatchesTheDocument(_ example: Example) throws {
        let expected = KeyTestEnvironment.bytes(example.hex)
        let key = KeyTuple(example.elements)
        #expect(key.bytes == expected, "encoded \(KeyTestEnvironment.hex(key.bytes))")
        let decoded = try KeyTuple(decoding: expected)
        #expect(decoded.elements == example.elements)
        #expect(decoded == key)
    }

    /// "Double" in the document is `Double.nan` and `-Double.nan` on this platform too.
    @Test func documentedNaNsAreTheStandardOnes() {
        #expect(Double.nan.bitPattern == 0x7FF8_0000_0000_0000)
        #expect((-Double.nan).bitPattern == 0xFFF8_0000_0000_0000)
    }

    @Test func descendingStringSortsBeforeItsPrefix() {
        let longer = KeyTuple([.descending(.string("a\0"))])
        let shorter = KeyTuple([.descending(.string("a"))])
        #expect(longer < shorter)
    }

    @Test func prefixRangeExample() {
        let range = KeyTuple("a").prefixRange
        #expect(range.from == KeyTestEnvironment.bytes("02 61 00"))
        #expect(range.to == KeyTestEnvironment.bytes("02 61 00 ff"))
        let inside = KeyTuple("a", 1).bytes
        #expect(inside == KeyTestEnvironment.bytes("02 61 00 15 01"))
        #expect(!inside.lexicographicallyPrecedes(range.from) && inside.lexicographicallyPrecedes(range.to))
        let outside = KeyTuple("a\0").bytes
        #expect(outside == KeyTestEnvironment.bytes("02 61 00 ff 00"))
        #expect(!outside.lexicographicallyPrecedes(range.to))
    }
}
