import Foundation
import StrataRecords
import Testing

/// The values at the edges of each type, in the order keys.md gives them: their encodings
/// must sort in exactly that order, and each must round-trip.
struct KeyEdgeCaseTests {
    /// Asserts that the keys' encodings ascend strictly in the order given, that `<` on the
    /// elements agrees, and that each decodes back to itself.
    private func expectAscending(_ elements: [KeyElement], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let keys = elements.map { KeyTuple([$0]) }
        for (lower, upper) in zip(keys, keys.dropFirst()) {
            #expect(
                lower.bytes.lexicographicallyPrecedes(upper.bytes),
                "\(lower) = \(KeyTestEnvironment.hex(lower.bytes)) should sort before \(upper) = \(KeyTestEnvironment.hex(upper.bytes))",
                sourceLocation: sourceLocation
            )
            #expect(lower.elements[0] < upper.elements[0], "KeyElement order: \(lower) < \(upper)", sourceLocation: sourceLocation)
        }
        for key in keys {
            #expect(try KeyTuple(decoding: key.bytes).elements == key.elements, sourceLocation: sourceLocation)
        }
    }

    @Test func signedIntegers() throws {
        try expectAscending(
            [Int64.min, .min + 1, -(1 << 32), -65_536, -256, -255, -1, 0, 1, 255, 256, 1 << 32, .max - 1, .max].map { .int($0) }
        )
    }

    @Test func unsignedIntegers() throws {
        try expectAscending([0, 1, 255, 256, UInt64(Int64.max), UInt64(Int64.max) + 1, .max - 1, .max].map { .uint($0) })
        // No clamping: the top of the range keeps every bit.
        #expect(try KeyTuple(decoding: KeyTuple(UInt64.max).bytes).elements == [.uint(.max)])
    }

    @Test func doubles() throws {
        try expectAscending(
            [
                Double(bitPattern: 0xFFFF_FFFF_FFFF_FFFF), -.nan, -.signalingNaN, -.infinity, -.greatestFiniteMagnitude, -1,
                -.leastNonzeroMagnitude, -0.0, 0.0, .leastNonzeroMagnitude, 1, .greatestFiniteMagnitude, .infinity, .signalingNaN, .nan,
                Double(bitPattern: 0x7FFF_FFFF_FFFF_FFFF)
            ].map { .double($0) }
        )
        // Every NaN keeps its bits through a round trip.
        let nan = Double(bitPattern: 0x7FF4_0000_DEAD_BEEF)
        guard case .double(let decoded) = try KeyTuple(decoding: KeyTuple(nan).bytes).elements[0] else {
            Issue.record("a double decoded as another type")
            return
        }
        #expect(decoded.bitPattern == nan.bitPattern)
    }

    @Test func dates() throws {
        try expectAscending(
            [-Double.infinity, -1e9, -1.5, 0, .leastNonzeroMagnitude, 1.5, 1e9, .infinity, .nan].map {
                .date(Date(timeIntervalSinceReferenceDate: $0))
            }
        )
        // Dates Foundation calls equal make one key.
        #expect(KeyTuple(Date(timeIntervalSinceReferenceDate: -0.0)) == KeyTuple(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(KeyTuple(Date(timeIntervalSinceReferenceDate: -.nan)) == KeyTuple(Date(timeIntervalSinceReferenceDate: .nan)))
        let now = Date()
        #expect(try KeyTuple(decoding: KeyTuple(now).bytes).elements == [.date(now)])
    }

    @Test func strings() throws {
        try expectAscending(["", "\0", "\0\0", "\0a", "a", "a\0", "a\0\0", "a\0b", "aa", "b", "\u{7F}", "\u{E9}", "\u{FFFF}", "😀"].map { .string($0) })
    }

    @Test func byteStrings() throws {
        try expectAscending([[], [0], [0, 0], [0, 1], [0, 0xFF], [1], [1, 0], [0xFF], [0xFF, 0], [0xFF, 0xFF]].map { .bytes($0) })
    }

    /// Composed and decomposed text that Swift considers equal, including the Hangul case
    /// where Foundation's normalisation on Linux and Swift's disagree.
    @Test(arguments: [
        ("\u{E9}", "e\u{301}"),
        ("\u{C5}", "\u{212B}"),
        ("\u{C5}", "A\u{30A}"),
        ("\u{1E0C}\u{307}", "\u{1E0A}\u{323}"),
        ("\u{1E0C}\u{307}", "D\u{307}\u{323}"),
        ("\u{AC00}", "\u{1100}\u{1161}"),
        ("\u{AC01}", "\u{1100}\u{1161}\u{11A8}"),
        ("\u{C3F2}", "\u{C3D8}\u{11C1}"),
        ("\u{8C48}", "\u{F900}")
    ])
    func equalStringsEncodeEqually(_ composed: String, _ other: String) throws {
        #expect(composed == other)
        let key = KeyTuple(composed)
        #expect(key == KeyTuple(other))
        #expect(try KeyTuple(decoding: key.bytes).elements == [.string(other)])
    }

    /// A string that Swift considers different from its look-alike stays different.
    @Test func distinctStringsEncodeDistinctly() {
        #expect(KeyTuple("\u{FB01}") != KeyTuple("fi"))  // a compatibility ligature: NFC keeps it
        #expect(KeyTuple("e\u{301}") != KeyTuple("e"))
        #expect(KeyTuple("\u{0}") != KeyTuple(""))
    }

    @Test func tuples() throws {
        #expect(KeyTuple([]).bytes.isEmpty)
        #expect(try KeyTuple(decoding: []).elements.isEmpty)
        #expect(KeyTuple([.tuple([])]).bytes == [0x05, 0x00])
        #expect(KeyTuple([.tuple([.tuple([])])]).bytes == [0x05, 0x05, 0x00, 0x00])
        try expectAscending(
            [
                .tuple([]), .tuple([.string("a")]), .tuple([.string("a"), .tuple([])]), .tuple([.string("a"), .int(1)]),
                .tuple([.string("a\0")]), .tuple([.string("a\0"), .int(0)]), .tuple([.string("b")]), .tuple([.tuple([])]),
                .tuple([.tuple([]), .int(0)]), .tuple([.tuple([.int(0)])])
            ]
        )
    }

    @Test func descendingReversesEveryType() throws {
        try expectAscending(
            [
                .int(1), .descending(.uuid(UUID())), .descending(.int(5)), .descending(.int(-5)), .descending(.string("b")),
                .descending(.string("a\0\0")), .descending(.string("a\0")), .descending(.string("a")), .descending(.string("")),
                .descending(.bytes([1])), .descending(.bytes([0])), .descending(.bytes([]))
            ]
        )
        // A descending string followed by more elements, or ending a key, still sorts after
        // its zero-continued extensions.
        for suffix in [[], [KeyElement.int(0)], [.descending(.int(0))], [.tuple([])], [.bytes([0])]] {
            let shorter = KeyTuple([.descending(.string("a"))] + suffix)
            let longer = KeyTuple([.descending(.string("a\0"))] + suffix)
            #expect(longer < shorter, "suffix \(suffix)")
        }
    }

    @Test func descendingInsideDescendingTuples() throws {
        try expectAscending(
            [
                .descending(.tuple([.descending(.string("a"))])), .descending(.tuple([.descending(.string("a\0"))])),
                .descending(.tuple([.descending(.string("b"))])), .descending(.tuple([.string("b")])),
                .descending(.tuple([.string("a"), .int(1)])), .descending(.tuple([.string("a")])), .descending(.tuple([]))
            ]
        )
    }

    @Test func descendingTwiceIsAscending() throws {
        let element = KeyElement.tuple([.string("a"), .descending(.int(3))])
        let twice = KeyElement.descending(.descending(element))
        #expect(KeyTuple([twice]).bytes == KeyTuple([element]).bytes)
        #expect(twice == element)
        #expect(twice.hashValue == element.hashValue)
        #expect(try KeyTuple(decoding: KeyTuple([twice]).bytes).elements == [element])
    }

    @Test func smallerIntegerTypesWiden() {
        #expect(KeyTuple(Int32(-5)) == KeyTuple(Int64(-5)))
        #expect(KeyTuple(Int8.min) == KeyTuple(Int64(Int8.min)))
        #expect(KeyTuple(Int16(300)) == KeyTuple(300))
        #expect(KeyTuple(Int.min) == KeyTuple(Int64.min))
        #expect(KeyTuple(UInt32.max) == KeyTuple(UInt64(UInt32.max)))
        #expect(KeyTuple(UInt8(7), UInt16(7), UInt(7)).elements == [.uint(7), .uint(7), .uint(7)])
        #expect(KeyTuple("x"[...], [UInt8]([1]), true, 1.5).elements == [.string("x"), .bytes([1]), .bool(true), .double(1.5)])
        #expect(KeyTuple(5.descending).elements == [.descending(.int(5))])
    }

    /// Types compare by type code: the order keys.md lists.
    @Test func typesCompareByTypeCode() throws {
        try expectAscending(
            [
                .bytes([0xFF]), .string(""), .tuple([]), .int(.max), .uint(0), .bool(false), .bool(true), .double(-.infinity),
                .date(Date(timeIntervalSinceReferenceDate: -1e9)), .uuid(UUID()), .descending(.uuid(UUID())),
                .descending(.date(Date())), .descending(.double(0)), .descending(.bool(true)), .descending(.bool(false)),
                .descending(.uint(0)), .descending(.int(.max)), .descending(.tuple([])), .descending(.string("")),
                .descending(.bytes([]))
            ]
        )
    }

    @Test func nestingUpToTheLimitRoundTrips() throws {
        var element = KeyElement.int(1)
        for _ in 0..<64 { element = .tuple([element]) }
        let key = KeyTuple([element, .descending(element)])
        #expect(try KeyTuple(decoding: key.bytes).elements == key.elements)
    }
}
