import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataRecords

// The record format (docs/format/records.md) against Swift's Codable: every shape a record
// can have comes back as it went in, bit for bit where bits matter; a value of random shape
// does too; records written by an older version of a type decode into the newer one as the
// document promises; and one record's bytes are fixed here so the document can quote them.

// MARK: - Types of every shape

private struct Integers: Codable, Equatable {
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64

    static let minimums = Integers(
        int: .min, int8: .min, int16: .min, int32: .min, int64: .min, uint: .min, uint8: .min, uint16: .min, uint32: .min,
        uint64: .min)
    static let maximums = Integers(
        int: .max, int8: .max, int16: .max, int32: .max, int64: .max, uint: .max, uint8: .max, uint16: .max, uint32: .max,
        uint64: .max)
    static let small = Integers(int: -1, int8: -1, int16: 1, int32: -64, int64: 63, uint: 0, uint8: 1, uint16: 127, uint32: 128, uint64: 1)
}

private struct Floats: Codable {
    var double: Double
    var float: Float
    var doubles: [Double]
    var floats: [Float]
}

private struct Scalars: Codable, Equatable {
    var flag: Bool
    var off: Bool
    var text: String
    var data: Data
    var id: UUID
    var date: Date
    var url: URL
    var decimal: Decimal
}

private struct Inner: Codable, Equatable {
    var name: String
    var value: Int?
}

private struct Middle: Codable, Equatable {
    var inner: Inner
    var inners: [Inner]
    var maybe: Inner?
}

private struct Outer: Codable, Equatable {
    var middle: Middle
    var optionalMiddle: Middle?
    var matrix: [[Int]]
    var optionals: [Int?]
    var optionalArray: [String]?
    var nestedOptionals: [[Double?]?]
    var set: Set<Int>
}

private struct Dictionaries: Codable, Equatable {
    var byName: [String: Int]
    var byNumber: [Int: String]
    var byUUID: [UUID: Int]
    var nested: [String: [String: Int]]
    var optionalValues: [String: Int?]
    var empty: [String: Int]
}

private enum Color: String, Codable, Equatable {
    case red, green
    case blue = "BLUE"
}

private enum Level: Int, Codable, Equatable {
    case low = -1
    case high = 1_000_000
}

private indirect enum Shape: Codable, Equatable {
    case empty
    case circle(radius: Double)
    case rectangle(Double, Double)
    case labeled(String, at: Int?)
    case group([Shape])
    case framed(Shape)
}

private struct Enums: Codable, Equatable {
    var color: Color
    var colors: [Color]
    var level: Level
    var shape: Shape
    var shapes: [Shape]
    var maybeShape: Shape?
}

private struct Empty: Codable, Equatable {}

private struct HoldsEmpty: Codable, Equatable {
    var before: Int
    var empty: Empty
    var empties: [Empty]
    var maybeEmpty: Empty?
    var after: Int
}

/// A pair stored as an array of two values, through an unkeyed container.
private struct Pair: Codable, Equatable {
    var first: Int
    var second: String

    init(first: Int, second: String) {
        self.first = first
        self.second = second
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        first = try container.decode(Int.self)
        second = try container.decode(String.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(first)
        try container.encode(second)
    }
}

/// Writes nil with `encodeNil` and `encode(Optional.none)`, which store a null rather than
/// leaving the field out.
private struct ExplicitNils: Codable, Equatable {
    var a: Int?
    var b: String?

    enum CodingKeys: CodingKey { case a, b }

    init(a: Int?, b: String?) {
        self.a = a
        self.b = b
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        a = try container.decode(Int?.self, forKey: .a)
        b = try container.decodeNil(forKey: .b) ? nil : try container.decode(String.self, forKey: .b)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(a, forKey: .a)
        if let b { try container.encode(b, forKey: .b) } else { try container.encodeNil(forKey: .b) }
    }
}

// Class hierarchies: a subclass can store its superclass in a nested `super` field, under a
// key of its own, or in the same container.

private class Animal: Codable {
    var name: String
    var legs: Int

    init(name: String, legs: Int) {
        self.name = name
        self.legs = legs
    }

    var summary: String { "\(type(of: self)) \(name) \(legs)" }
}

/// Its superclass in a nested container named `super`.
private final class Dog: Animal {
    var breed: String

    enum CodingKeys: CodingKey { case breed }

    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name, legs: 4)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
    }

    override var summary: String { super.summary + " " + breed }
}

/// Its superclass in the same container as its own fields.
private final class Cat: Animal {
    var indoor: Bool

    enum CodingKeys: CodingKey { case indoor }

    init(name: String, indoor: Bool) {
        self.indoor = indoor
        super.init(name: name, legs: 4)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        indoor = try container.decode(Bool.self, forKey: .indoor)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(indoor, forKey: .indoor)
        try super.encode(to: encoder)
    }

    override var summary: String { super.summary + " indoor \(indoor)" }
}

/// Its superclass under a key of its own, and a second level of subclassing.
private class Bird: Animal {
    var wingspan: Double

    enum CodingKeys: CodingKey { case wingspan, base }

    init(name: String, wingspan: Double) {
        self.wingspan = wingspan
        super.init(name: name, legs: 2)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        wingspan = try container.decode(Double.self, forKey: .wingspan)
        try super.init(from: container.superDecoder(forKey: .base))
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(wingspan, forKey: .wingspan)
        try super.encode(to: container.superEncoder(forKey: .base))
    }

    override var summary: String { super.summary + " wingspan \(wingspan)" }
}

private final class Parrot: Bird {
    var words: [String]

    enum CodingKeys: CodingKey { case words }

    init(name: String, words: [String]) {
        self.words = words
        super.init(name: name, wingspan: 0.5)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        words = try container.decode([String].self, forKey: .words)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(words, forKey: .words)
        try super.encode(to: container.superEncoder())
    }

    override var summary: String { super.summary + " words \(words)" }
}

/// A superclass stored as an element of an unkeyed container.
private final class Tagged: Animal {
    var tags: [String]

    init(name: String, tags: [String]) {
        self.tags = tags
        super.init(name: name, legs: 0)
    }

    required init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        tags = try container.decode([String].self)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(tags)
        try super.encode(to: container.superEncoder())
    }

    override var summary: String { super.summary + " tags \(tags)" }
}

/// A base class with no stored properties of its own.
private class Base: Codable {
    init() {}
}

private final class Derived: Base {
    var value: Int

    enum CodingKeys: CodingKey { case value }

    init(value: Int) {
        self.value = value
        super.init()
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        try super.encode(to: container.superEncoder())
    }
}

// MARK: - Round trips

@Suite("Record codec")
struct RecordCodecTests {
    @Test func integersAtTheirLimits() throws {
        for value in [Integers.minimums, .maximums, .small] {
            RecordCodec.expectRoundTrip(value)
            RecordCodec.expectRoundTrip([value, value])
        }
        // Each width on its own, at the top level and in arrays (single-value and unkeyed
        // containers, not only keyed ones).
        RecordCodec.expectRoundTrip(Int8.min)
        RecordCodec.expectRoundTrip([Int8.min, 0, .max])
        RecordCodec.expectRoundTrip([Int16.min, -1, .max])
        RecordCodec.expectRoundTrip([Int32.min, .max])
        RecordCodec.expectRoundTrip(Int64.min)
        RecordCodec.expectRoundTrip([Int64.min, -1, 0, 1, .max])
        RecordCodec.expectRoundTrip([Int.min, .max])
        RecordCodec.expectRoundTrip(UInt64.max)
        RecordCodec.expectRoundTrip([UInt8.max, 0])
        RecordCodec.expectRoundTrip([UInt16.max])
        RecordCodec.expectRoundTrip([UInt32.max])
        RecordCodec.expectRoundTrip([UInt.min, .max])
        RecordCodec.expectRoundTrip([UInt64.min, 127, 128, 16_383, 16_384, .max])
        // Sizes: zigzag keeps small magnitudes of either sign to one byte.
        #expect(try RecordEncoder.encode(Int64(-64)) == [0x01, 0x02, 0x7F])
        #expect(try RecordEncoder.encode(Int64(64)) == [0x01, 0x02, 0x80, 0x01])
        #expect(try RecordEncoder.encode(Int64.min) == [0x01, 0x02] + [UInt8](repeating: 0xFF, count: 9) + [0x01])
        #expect(try RecordEncoder.encode(UInt64.max) == [0x01, 0x03] + [UInt8](repeating: 0xFF, count: 9) + [0x01])
    }

    @Test func integersConvertWhenTheValueFits() throws {
        // An Int8 written, read as every wider type; a UInt8 written, read as a signed type.
        #expect(try RecordDecoder.decode(Int64.self, from: RecordEncoder.encode(Int8.min)) == -128)
        #expect(try RecordDecoder.decode(UInt64.self, from: RecordEncoder.encode(Int8.max)) == 127)
        #expect(try RecordDecoder.decode(Int8.self, from: RecordEncoder.encode(UInt8(100))) == 100)
        // Values that do not fit are an error, never a truncation.
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(Int8.self, from: RecordEncoder.encode(128)) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(UInt.self, from: RecordEncoder.encode(-1)) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(Int64.self, from: RecordEncoder.encode(UInt64.max)) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode([UInt16].self, from: RecordEncoder.encode([1, 70_000])) }
    }

    @Test func floatingPointValuesComeBackBitForBit() throws {
        let doubles: [Double] = [
            0, -0.0, 1.5, -1.5, .infinity, -.infinity, .nan, -.nan, .signalingNaN, Double(bitPattern: 0x7FF0_0000_0000_0001),
            Double(bitPattern: 0xFFFF_FFFF_FFFF_FFFF), .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
            .leastNormalMagnitude, .pi
        ]
        let floats: [Float] = [0, -0.0, 1.5, .infinity, -.infinity, .nan, -.nan, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .pi]
        for double in doubles {
            let top = try RecordCodec.roundTrip(double)
            #expect(top.bitPattern == double.bitPattern, "\(double) at the top level")
        }
        let back = try RecordCodec.roundTrip(Floats(double: -0.0, float: -0.0, doubles: doubles, floats: floats))
        #expect(back.double.bitPattern == (-0.0 as Double).bitPattern)
        #expect(back.float.bitPattern == (-0.0 as Float).bitPattern)
        #expect(back.doubles.map(\.bitPattern) == doubles.map(\.bitPattern))
        #expect(back.floats.count == floats.count)
        for (got, want) in zip(back.floats, floats) {
            #expect(got.bitPattern == want.bitPattern || (got.isNaN && want.isNaN && got.sign == want.sign), "\(want) came back as \(got)")
        }
        for float in floats {
            let top = try RecordCodec.roundTrip(float)
            #expect(top.bitPattern == float.bitPattern || (top.isNaN && float.isNaN), "\(float) at the top level")
        }
    }

    @Test func scalarsOfEveryKind() throws {
        let strings = [
            "", "\0", "a\0b\0", "emoji 👩‍👩‍👧 🇫🇷", "e\u{301} and \u{E9}", "\u{FFFF}\u{10FFFF}", "日本語", String(repeating: "long ", count: 40_000)
        ]
        for text in strings {
            let back = try RecordCodec.roundTrip(text)
            // Bytes, not `==`: a decomposed string must not come back composed.
            #expect(Array(back.utf8) == Array(text.utf8), "\(text.prefix(40).debugDescription)")
        }
        let datas = [Data(), Data([0]), Data([0, 0xFF, 0, 1]), Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) })]
        for data in datas { RecordCodec.expectRoundTrip(data) }
        RecordCodec.expectRoundTrip(datas)
        let uuids = [UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!]
        for uuid in uuids { RecordCodec.expectRoundTrip(uuid) }
        RecordCodec.expectRoundTrip(uuids)
        let dates = [
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -1.25), Date(timeIntervalSinceReferenceDate: 1e9 + 1e-6),
            .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: .infinity)
        ]
        for date in dates {
            let back = try RecordCodec.roundTrip(date)
            #expect(back.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern)
        }
        let negativeZero = try RecordCodec.roundTrip(Date(timeIntervalSinceReferenceDate: -0.0))
        #expect(negativeZero.timeIntervalSinceReferenceDate.sign == .minus)
        RecordCodec.expectRoundTrip([true, false])
        let scalars = Scalars(
            flag: true, off: false, text: "x\0y", data: Data([1, 0, 2]), id: uuids[2], date: dates[2],
            url: URL(string: "https://example.com/a%20b?q=1#frag")!, decimal: Decimal(string: "-12345.678901234567890123")!)
        RecordCodec.expectRoundTrip(scalars)
        // A URL relative to a base keeps both.
        let relative = URL(string: "c/d?e", relativeTo: URL(string: "https://example.com/a/b/"))!
        let backURL = try RecordCodec.roundTrip(relative)
        #expect(backURL.absoluteString == relative.absoluteString)
        #expect(backURL.relativeString == relative.relativeString)
        // Data, UUID and Date use their own tags, not their Codable forms.
        #expect(try RecordEncoder.encode(uuids[2]) == [0x01, 0x07] + KeyTestEnvironment.bytes("00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"))
        #expect(try RecordEncoder.encode(Data([9])) == [0x01, 0x06, 0x01, 0x09])
        #expect(try RecordEncoder.encode(Date(timeIntervalSinceReferenceDate: 1.5)) == [0x01, 0x08, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F])
    }

    @Test func optionalsAtEveryLevel() throws {
        RecordCodec.expectRoundTrip(Int?.none)
        RecordCodec.expectRoundTrip(Int?.some(0))
        RecordCodec.expectRoundTrip(Inner?.none)
        RecordCodec.expectRoundTrip(Inner?.some(Inner(name: "n", value: nil)))
        RecordCodec.expectRoundTrip([Int?.none, 1, nil])
        RecordCodec.expectRoundTrip([String: Int?](dictionaryLiteral: ("a", nil), ("b", 2)))
        RecordCodec.expectRoundTrip(ExplicitNils(a: nil, b: nil))
        RecordCodec.expectRoundTrip(ExplicitNils(a: 1, b: "b"))
        let inner = Inner(name: "i", value: nil)
        let full = Middle(inner: Inner(name: "", value: -5), inners: [inner, Inner(name: "\0", value: 0)], maybe: inner)
        let sparse = Middle(inner: inner, inners: [], maybe: nil)
        for middle in [full, sparse] {
            for optionalMiddle in [nil, full, sparse] {
                RecordCodec.expectRoundTrip(
                    Outer(
                        middle: middle, optionalMiddle: optionalMiddle, matrix: [[], [1], [2, -3]], optionals: [nil, 4, nil],
                        optionalArray: optionalMiddle == nil ? nil : ["x"], nestedOptionals: [nil, [], [nil, 1.5, nil]], set: [3, 1, 2]))
            }
        }
        // A synthesized conformance leaves a nil field out; an explicit nil is a stored null.
        #expect(try RecordEncoder.encode(Inner(name: "", value: nil)) == KeyTestEnvironment.bytes("01 0a 08 01 04 6e 61 6d 65 05 00"))
        #expect(
            try RecordEncoder.encode(ExplicitNils(a: nil, b: nil)) == KeyTestEnvironment.bytes("01 0a 07 02 01 61 00 01 62 00"))
    }

    @Test func dictionariesWithStringIntAndOtherKeys() throws {
        RecordCodec.expectRoundTrip(
            Dictionaries(
                byName: ["": 0, "a": 1, "\0": 2, "super": 3, "é": 4, "👍": 5],
                byNumber: [Int.min: "min", -1: "", 0: "zero", Int.max: "max"],
                byUUID: [UUID(): 1, UUID(): 2],
                nested: ["outer": ["inner": 1], "none": [:]],
                optionalValues: ["nil": nil, "one": 1],
                empty: [:]))
        RecordCodec.expectRoundTrip([String: [Int]]())
        RecordCodec.expectRoundTrip([Int: [Int: String]](dictionaryLiteral: (1, [2: "3"])))
    }

    @Test func enumsWithRawValuesAndAssociatedValues() throws {
        RecordCodec.expectRoundTrip(Color.blue)
        RecordCodec.expectRoundTrip(Level.low)
        RecordCodec.expectRoundTrip(Shape.empty)
        RecordCodec.expectRoundTrip(
            Enums(
                color: .blue, colors: [.red, .green, .blue], level: .high,
                shape: .framed(.group([.circle(radius: -0.5), .rectangle(1, 2), .labeled("l", at: nil), .labeled("", at: 3), .empty])),
                shapes: [], maybeShape: .empty))
        RecordCodec.expectRoundTrip(Enums(color: .red, colors: [], level: .low, shape: .empty, shapes: [.group([])], maybeShape: nil))
        // A raw-valued enum is its raw value.
        #expect(try RecordEncoder.encode(Color.blue) == [0x01, 0x05, 0x04] + Array("BLUE".utf8))
        #expect(try RecordEncoder.encode(Level.low) == [0x01, 0x02, 0x01])
        // An unknown raw value is an error.
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(Color.self, from: RecordEncoder.encode("purple")) }
    }

    @Test func classHierarchiesWithSuperEncoders() throws {
        let animals: [Animal] = [
            Animal(name: "generic", legs: 6), Dog(name: "Rex", breed: "collie"), Cat(name: "Tom", indoor: true),
            Bird(name: "Tweety", wingspan: 0.2), Parrot(name: "Polly", words: ["hello", ""]), Tagged(name: "Tag", tags: ["a", "b"])
        ]
        for animal in animals {
            let bytes = try RecordEncoder.encode(animal)
            let back: Animal =
                switch animal {
                case is Dog: try RecordDecoder.decode(Dog.self, from: bytes)
                case is Cat: try RecordDecoder.decode(Cat.self, from: bytes)
                case is Parrot: try RecordDecoder.decode(Parrot.self, from: bytes)
                case is Bird: try RecordDecoder.decode(Bird.self, from: bytes)
                case is Tagged: try RecordDecoder.decode(Tagged.self, from: bytes)
                default: try RecordDecoder.decode(Animal.self, from: bytes)
                }
            #expect(back.summary == animal.summary, "stored as \(KeyTestEnvironment.hex(bytes))")
        }
        // The super field's name is "super", or the key given; a shared container has no
        // nested field at all.
        struct DogFields: Decodable {
            var breed: String
            var `super`: AnimalFields
        }
        struct AnimalFields: Decodable {
            var name: String
            var legs: Int
        }
        struct CatFields: Decodable {
            var indoor: Bool
            var name: String
            var legs: Int
        }
        struct BirdFields: Decodable {
            var wingspan: Double
            var base: AnimalFields
        }
        let dog = try RecordDecoder.decode(DogFields.self, from: RecordEncoder.encode(animals[1]))
        #expect(dog.breed == "collie" && dog.super.name == "Rex" && dog.super.legs == 4)
        let cat = try RecordDecoder.decode(CatFields.self, from: RecordEncoder.encode(animals[2]))
        #expect(cat.indoor && cat.name == "Tom")
        let bird = try RecordDecoder.decode(BirdFields.self, from: RecordEncoder.encode(animals[3]))
        #expect(bird.base.name == "Tweety" && bird.wingspan == 0.2)
    }

    @Test func aSuperclassWithNoFieldsRoundTrips() throws {
        let back = try RecordCodec.roundTrip(Derived(value: 42))
        #expect(back.value == 42)
    }

    @Test func emptyStructsAtTheTopLevel() throws {
        RecordCodec.expectRoundTrip(Empty())
    }

    @Test func emptyStructsNestedAndInArrays() throws {
        RecordCodec.expectRoundTrip(HoldsEmpty(before: 1, empty: Empty(), empties: [Empty(), Empty()], maybeEmpty: Empty(), after: 2))
        RecordCodec.expectRoundTrip(HoldsEmpty(before: 1, empty: Empty(), empties: [], maybeEmpty: nil, after: 2))
        RecordCodec.expectRoundTrip([Empty()])
    }

    @Test func unkeyedCustomTypesAndCollections() throws {
        RecordCodec.expectRoundTrip(Pair(first: -7, second: "p"))
        RecordCodec.expectRoundTrip([Pair(first: 1, second: ""), Pair(first: 2, second: "\0")])
        RecordCodec.expectRoundTrip([[[Int]]]([[[]], [[1, 2], []]]))
        RecordCodec.expectRoundTrip([String]())
        RecordCodec.expectRoundTrip(Set(["a", "b", "c"]))
        // Field order, repeats: the last of a repeated name counts (hand-made record:
        // {"value": 1, "name": "a", "value": 2}).
        let repeated = KeyTestEnvironment.bytes("01 0a 19 03 05 76 61 6c 75 65 02 02 04 6e 61 6d 65 05 01 61 05 76 61 6c 75 65 02 04")
        #expect(try RecordDecoder.decode(Inner.self, from: repeated) == Inner(name: "a", value: 2))
    }

    /// Values of random shape: each decodes to what was encoded, and encoding is
    /// deterministic.
    @Test func randomValuesRoundTrip() throws {
        let seed = TestSeeds.seed(0x5EED_0C0D, test: "records/codec random round trip")
        var generator = RandomValueGenerator(seed: seed)
        let rounds = TestSeeds.scaled(3_000)
        var failures = 0
        var bytesTotal = 0
        for round in 0..<rounds {
            let value = generator.value()
            do {
                let bytes = try RecordEncoder.encode(value)
                bytesTotal += bytes.count
                #expect(try RecordEncoder.encode(value) == bytes, "seed \(seed) round \(round): encoding is not deterministic")
                let back = try RecordDecoder.decode(RandomValue.self, from: bytes)
                if !back.same(as: value) {
                    Issue.record("seed \(seed) round \(round): \(value) came back as \(back); stored \(KeyTestEnvironment.hex(bytes))")
                    failures += 1
                }
                // The decoded value's encoding decodes to the same value again (dictionaries may
                // store their entries in another order, so bytes are not compared).
                let again = try RecordDecoder.decode(RandomValue.self, from: RecordEncoder.encode(back))
                if !again.same(as: value) {
                    Issue.record("seed \(seed) round \(round): \(value) came back as \(again) the second time")
                    failures += 1
                }
            } catch {
                Issue.record("seed \(seed) round \(round): \(value): \(error)")
                failures += 1
            }
            if failures >= 5 { return }
        }
        print("[records/codec random round trip] \(rounds) values, \(bytesTotal) bytes")
    }

    // MARK: - Worked example

    /// The example of docs/format/records.md, "Worked example":
    ///
    ///     struct Point: Codable { var x: Int; var name: String }
    ///     Point(x: -3, name: "ab")
    ///
    ///     01                      format version 1
    ///     0a 0e 02                keyed, body of 14 bytes, 2 fields
    ///     01 78                   field "x"
    ///     02 05                     int, zigzag(-3) = 5
    ///     04 6e 61 6d 65          field "name"
    ///     05 02 61 62               string of 2 bytes, "ab"
    @Test func workedExample() throws {
        struct Point: Codable, Equatable {
            var x: Int
            var name: String
        }
        let expected = KeyTestEnvironment.bytes("01 0a 0e 02 01 78 02 05 04 6e 61 6d 65 05 02 61 62")
        let bytes = try RecordEncoder.encode(Point(x: -3, name: "ab"))
        #expect(bytes == expected, "\(KeyTestEnvironment.hex(bytes))")
        #expect(bytes.count == 17)
        #expect(try RecordDecoder.decode(Point.self, from: expected) == Point(x: -3, name: "ab"))
    }

    /// Every tag but null in one record, so each tag's layout is pinned down:
    ///
    ///     01                                   format version 1
    ///     0a 4c 07                             keyed, body of 76 bytes, 7 fields
    ///     04 66 6c 61 67   01 01               "flag": bool true
    ///     01 6e            03 c8 01            "n": uint 200
    ///     01 64            04 00 00 00 00 00 00 f8 3f
    ///                                          "d": double 1.5 (0x3ff8000000000000, little-endian)
    ///     04 62 6c 6f 62   06 02 00 ff         "blob": bytes, 2 of them
    ///     02 69 64         07 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff
    ///                                          "id": UUID
    ///     02 61 74         08 00 00 00 00 00 00 00 00
    ///                                          "at": date, 0 seconds after 2001-01-01
    ///     04 6c 69 73 74   09 04 02 02 02 00   "list": array, body of 4 bytes, 2 values: int 1, null
    @Test func workedExampleWithEveryTag() throws {
        struct Sample: Codable, Equatable {
            var flag: Bool
            var n: UInt8
            var d: Double
            var blob: Data
            var id: UUID
            var at: Date
            var list: [Int?]
        }
        let sample = Sample(
            flag: true, n: 200, d: 1.5, blob: Data([0, 0xFF]), id: UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!,
            at: Date(timeIntervalSinceReferenceDate: 0), list: [1, nil])
        let expected = KeyTestEnvironment.bytes(
            """
            01 0a 4c 07 \
            04 66 6c 61 67 01 01 \
            01 6e 03 c8 01 \
            01 64 04 00 00 00 00 00 00 f8 3f \
            04 62 6c 6f 62 06 02 00 ff \
            02 69 64 07 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff \
            02 61 74 08 00 00 00 00 00 00 00 00 \
            04 6c 69 73 74 09 04 02 02 02 00
            """)
        let bytes = try RecordEncoder.encode(sample)
        #expect(bytes == expected, "\(KeyTestEnvironment.hex(bytes))")
        #expect(bytes.count == 79)
        #expect(try RecordDecoder.decode(Sample.self, from: expected) == sample)
    }
}

// MARK: - Schema evolution

/// The first version of a type, as an app once stored it.
private enum Version1 {
    struct Detail: Codable {
        var a: Int
    }

    struct Item: Codable, Sendable, Identifiable {
        var id: Int
        var title: String
        var legacy: String
        var score: Int
        var detail: Detail
    }

    struct Forms: Codable {
        var id: String
        var at: Double
        var blob: [UInt8]
    }
}

/// The type now: `subtitle` added (optional), `count` and `detail.b` added (required),
/// `legacy` removed, `score` changed from Int to Double.
private enum Version2 {
    struct Detail: Codable, Equatable {
        var a: Int
        var b: String
    }

    struct Item: Codable, Sendable, Identifiable, Equatable {
        var id: Int
        var title: String
        var subtitle: String?
        var count: Int
        var score: Double
        var detail: Detail
    }

    static let defaults = Item(id: -1, title: "untitled", subtitle: nil, count: 7, score: 0, detail: Detail(a: 0, b: "b default"))

    /// Native forms for what version 1 stored as a string, a double and an array of bytes.
    struct Forms: Codable, Equatable {
        var id: UUID
        var at: Date
        var blob: Data
    }
}

/// A record with fields whose contents are data, not schema: a dictionary and an enum with
/// associated values.
private struct Profile: Codable, Sendable, Identifiable, Equatable {
    enum State: Codable, Equatable {
        case idle
        case busy(Int)
    }

    var id: Int
    var settings: [String: Int]
    var state: State
    var added: Int

    static let defaults = Profile(id: 0, settings: ["theme": 1], state: .idle, added: 0)
}

extension RecordCodecTests {
    private static func simulatedStore() throws -> Store {
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        return try Store(path: "/db", options: options)
    }

    private static let oldItems = [
        Version1.Item(id: 1, title: "one", legacy: "gone", score: 3, detail: .init(a: 5)),
        Version1.Item(id: 2, title: "two", legacy: "", score: -4, detail: .init(a: 6))
    ]

    private static let evolvedItems = [
        Version2.Item(id: 1, title: "one", subtitle: nil, count: 7, score: 3, detail: .init(a: 5, b: "b default")),
        Version2.Item(id: 2, title: "two", subtitle: nil, count: 7, score: -4, detail: .init(a: 6, b: "b default"))
    ]

    @Test func olderRecordsDecodeIntoTheNewerType() throws {
        let defaults = try RecordEncoder.encode(Version2.defaults)
        for (old, new) in zip(Self.oldItems, Self.evolvedItems) {
            let back = try RecordDecoder.decode(Version2.Item.self, from: RecordEncoder.encode(old), defaults: defaults)
            #expect(back == new)
        }
        // Records of the current type are untouched by the defaults.
        let current = Version2.Item(id: 3, title: "t", subtitle: "s", count: 0, score: 0.5, detail: .init(a: 1, b: ""))
        #expect(try RecordDecoder.decode(Version2.Item.self, from: RecordEncoder.encode(current), defaults: defaults) == current)
        // Native tags read what the Codable forms of UUID, Date and Data stored.
        let uuid = UUID()
        let forms = try RecordDecoder.decode(
            Version2.Forms.self, from: RecordEncoder.encode(Version1.Forms(id: uuid.uuidString, at: -2.5, blob: [0, 1, 255])))
        #expect(forms == Version2.Forms(id: uuid, at: Date(timeIntervalSinceReferenceDate: -2.5), blob: Data([0, 1, 255])))
    }

    @Test func aMissingRequiredFieldIsKeyNotFoundNamingIt() throws {
        let bytes = try RecordEncoder.encode(Self.oldItems[0])
        do {
            _ = try RecordDecoder.decode(Version2.Item.self, from: bytes)
            Issue.record("decoded without the field")
        } catch DecodingError.keyNotFound(let key, let context) {
            #expect(key.stringValue == "count")
            #expect(context.codingPath.isEmpty)
            #expect(context.debugDescription.contains("\"count\""), "\(context.debugDescription)")
        }
        // Inside a nested struct: the path leads to it.
        struct CountOnly: Codable {
            var id: Int
            var title: String
            var count: Int
            var score: Double
            var detail: Version1.Detail
        }
        let partial = try RecordEncoder.encode(CountOnly(id: 1, title: "", count: 1, score: 1, detail: .init(a: 1)))
        do {
            _ = try RecordDecoder.decode(Version2.Item.self, from: partial)
            Issue.record("decoded without the nested field")
        } catch DecodingError.keyNotFound(let key, let context) {
            #expect(key.stringValue == "b")
            #expect(context.codingPath.map(\.stringValue) == ["detail"])
        }
    }

    @Test func olderRecordsThroughACollection() throws {
        let store = try Self.simulatedStore()
        let byTitle1 = RecordIndex<Version1.Item>("title") { [$0.title] }
        let old = RecordCollection<Version1.Item>("items", indexes: [byTitle1])
        try store.write { tx in
            for item in Self.oldItems { try old.insert(item, in: tx) }
        }
        // The same collection, declared by the newer app with a defaults record.
        let byTitle2 = RecordIndex<Version2.Item>("title") { [$0.title] }
        let items = RecordCollection<Version2.Item>("items", indexes: [byTitle2], defaults: Version2.defaults)
        try store.read { (tx: ReadTransaction) throws in
            #expect(try items.get(1, in: tx) == Self.evolvedItems[0])
            #expect(try items.scan(in: tx) == Self.evolvedItems)
            #expect(try items.find(byTitle2, equalTo: ["two"], in: tx) == [Self.evolvedItems[1]])
        }
        #expect(try store.run(items.get(2)) == Self.evolvedItems[1])
        // An update rewrites the record in the new form; its old index entry goes.
        var updated = Self.evolvedItems[0]
        updated.title = "uno"
        updated.subtitle = "sub"
        try store.run(items.update(updated))
        try store.read { (tx: ReadTransaction) throws in
            #expect(try items.find(byTitle2, equalTo: ["one"], in: tx).isEmpty)
            #expect(try items.find(byTitle2, equalTo: ["uno"], in: tx) == [updated])
        }

        // Without defaults the old records do not decode, and the error says which field.
        let strict = RecordCollection<Version2.Item>("items", indexes: [byTitle2])
        do {
            _ = try store.read { tx in try strict.get(2, in: tx) }
            Issue.record("decoded without defaults")
        } catch let error as RecordError {
            #expect(error.code == .decoding)
            #expect(error.collection == "items")
            #expect(error.message.contains("\"count\""), "\(error.message)")
        }
        // The updated record has every field and decodes without defaults.
        #expect(try store.read { tx in try strict.get(1, in: tx) } == updated)
        try store.close()
    }

    /// A defaults record fills in fields a stored record lacks; it must not add entries to a
    /// dictionary the record has, nor a second case to an enum the record has, or a record
    /// would not come back as it was written.
    @Test func defaultsDoNotChangeFieldsTheRecordHas() throws {
        let store = try Self.simulatedStore()
        let profiles = RecordCollection<Profile>("profiles", defaults: Profile.defaults)
        let written = [
            Profile(id: 1, settings: ["font": 2], state: .busy(3), added: 1),
            Profile(id: 2, settings: [:], state: .idle, added: 2),
            Profile(id: 3, settings: ["theme": 5], state: .busy(0), added: 3)
        ]
        try store.write { tx in
            for profile in written { try profiles.put(profile, in: tx) }
        }
        for profile in written {
            #expect(throws: Never.self) {
                let back = try store.read { tx in try profiles.get(profile.id, in: tx) }
                #expect(back == profile)
            }
        }
        try store.close()
    }
}

// MARK: - Depth

/// Nested arrays of any depth, through a custom `Codable` that recurses by `decode(Nest.self)`.
private indirect enum Nest: Codable, Sendable, Equatable {
    case leaf
    case list([Nest])

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var items: [Nest] = []
        while !container.isAtEnd { items.append(try container.decode(Nest.self)) }
        self = items.isEmpty ? .leaf : .list(items)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        if case .list(let items) = self {
            for item in items { try container.encode(item) }
        }
    }

    static func nested(_ depth: Int) -> Nest {
        var value = Nest.list([.leaf])
        for _ in 0..<depth { value = .list([value]) }
        return value
    }
}

extension RecordCodecTests {
    /// A record deeper than the decoder accepts must be refused when written, not stored and
    /// then found unreadable.
    @Test func aRecordThatIsStoredCanBeRead() throws {
        struct Holder: Codable, Sendable, Identifiable {
            var id: Int
            var nest: Nest
        }
        let store = try Self.simulatedStore()
        let holders = RecordCollection<Holder>("holders")
        for depth in [10, 120, 200] {
            let holder = Holder(id: depth, nest: .nested(depth))
            let stored: Bool
            do {
                try store.write { tx in try holders.put(holder, in: tx) }
                stored = true
            } catch let error as RecordError {
                #expect(error.code == .encoding, "\(error)")
                stored = false
            }
            if stored {
                #expect(throws: Never.self, "depth \(depth): put accepted the record, get cannot read it") {
                    let back = try store.read { tx in try holders.get(depth, in: tx) }
                    #expect(back?.nest == holder.nest)
                }
            }
        }
        try store.close()
    }
}
