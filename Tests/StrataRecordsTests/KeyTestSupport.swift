import Foundation
import StrataRecords
import StrataTestSupport

// The shared seed conventions (StrataTestSupport's TestSeeds), and a generator of random keys that
// favours edge values and small alphabets, so that random keys often share prefixes and
// the interesting comparisons (equal up to the last element, a string continuing with a
// zero) actually happen.

enum KeyTestEnvironment {
    static var longTests: Bool { TestSeeds.longTests }
    static func scaled(_ count: Int) -> Int { TestSeeds.scaled(count) }
    static func seed(_ defaultSeed: UInt64, test: String) -> UInt64 { TestSeeds.seed(defaultSeed, test: test) }

    /// Bytes as spaced hex, for failure messages.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "<empty>" : bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }

    /// Spaced hex, as in docs/format/keys.md, to bytes.
    static func bytes(_ hex: String) -> [UInt8] {
        hex.split(separator: " ").map { UInt8($0, radix: 16)! }
    }

    /// -1, 0 or 1 as `a` sorts before, with or after `b`, bytewise.
    static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
    }
}

/// The type and direction of each element of a key, without values: two keys generated from
/// one shape have the same shape.
indirect enum KeyShape {
    case int
    case uint
    case bool
    case double
    case string
    case bytes
    case uuid
    case date
    case tuple([KeyShape])
    case descending(KeyShape)
}

/// Random keys and elements from a seeded generator.
struct KeyGenerator {
    var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    mutating func chance(_ oneIn: Int) -> Bool {
        Int.random(in: 0..<oneIn, using: &random) == 0
    }

    mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int.random(in: 0..<choices.count, using: &random)]
    }

    // MARK: Shapes

    mutating func shape(depth: Int = 0) -> KeyShape {
        let scalar: [KeyShape] = [.int, .uint, .bool, .double, .string, .bytes, .uuid, .date]
        switch Int.random(in: 0..<12, using: &random) {
        case 0 where depth < 3:
            return .tuple(shapes(count: Int.random(in: 0...3, using: &random), depth: depth + 1))
        case 1, 2:
            // Now and then a descending of a descending, which must act as ascending.
            return .descending(chance(8) ? .descending(shape(depth: depth)) : shape(depth: depth))
        default:
            return pick(scalar)
        }
    }

    mutating func shapes(count: Int, depth: Int = 0) -> [KeyShape] {
        (0..<count).map { _ in shape(depth: depth) }
    }

    // MARK: Values

    mutating func value(of shape: KeyShape) -> KeyElement {
        switch shape {
        case .int: .int(int())
        case .uint: .uint(uint())
        case .bool: .bool(chance(2))
        case .double: .double(double())
        case .string: .string(string())
        case .bytes: .bytes(byteString())
        case .uuid: .uuid(uuid())
        case .date: .date(date())
        case .tuple(let shapes): .tuple(shapes.map { value(of: $0) })
        case .descending(let inner): .descending(value(of: inner))
        }
    }

    mutating func values(of shapes: [KeyShape]) -> [KeyElement] {
        shapes.map { value(of: $0) }
    }

    /// A key of 0 to `maxCount` elements of random shapes.
    mutating func key(maxCount: Int = 4) -> [KeyElement] {
        values(of: shapes(count: Int.random(in: 0...maxCount, using: &random)))
    }

    static let edgeInts: [Int64] = [
        .min, .min + 1, -(1 << 56) - 1, -(1 << 56), -65_537, -65_536, -65_535, -257, -256, -255, -2, -1,
        0, 1, 2, 127, 128, 255, 256, 65_535, 65_536, 1 << 56, .max - 1, .max
    ]

    mutating func int() -> Int64 {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return pick(Self.edgeInts)
        case 1: return Int64.random(in: -3...3, using: &random)
        default:
            // Every magnitude length equally often.
            let value = Int64(bitPattern: random.next() >> UInt64(Int.random(in: 0..<64, using: &random)))
            return chance(2) ? value : ~value
        }
    }

    static let edgeUInts: [UInt64] = [0, 1, 2, 255, 256, 65_535, 65_536, UInt64(Int64.max), UInt64(Int64.max) + 1, .max - 1, .max]

    mutating func uint() -> UInt64 {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return pick(Self.edgeUInts)
        case 1: return UInt64.random(in: 0...3, using: &random)
        default: return random.next() >> UInt64(Int.random(in: 0..<64, using: &random))
        }
    }

    static let edgeDoubles: [Double] = [
        -.nan, -.signalingNaN, Double(bitPattern: 0xFFFF_FFFF_FFFF_FFFF), Double(bitPattern: 0xFFF0_0000_0000_0001),
        -.infinity, -.greatestFiniteMagnitude, -1e300, -2, -1, -.leastNormalMagnitude, -.leastNonzeroMagnitude, -0.0,
        0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, 1, 2, 1e300, .greatestFiniteMagnitude, .infinity,
        .signalingNaN, .nan, Double(bitPattern: 0x7FF0_0000_0000_0001), Double(bitPattern: 0x7FFF_FFFF_FFFF_FFFF)
    ]

    mutating func double() -> Double {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return pick(Self.edgeDoubles)
        case 1: return Double(Int.random(in: -2...2, using: &random)) / 2
        case 2: return Double.random(in: -1e6...1e6, using: &random)
        default: return Double(bitPattern: random.next())
        }
    }

    /// Pieces to build strings from: equal text written in different ways (composed and
    /// decomposed, combining marks in either order, singletons, Hangul jamo), zeros, and
    /// characters from every UTF-8 length.
    static let stringPieces: [String] = [
        "a", "b", "a", "\0", "\0", "z", "\u{7F}", "\u{80}", "ÿ",
        "\u{E9}", "e\u{301}", "\u{301}", "\u{327}", "e\u{327}\u{301}", "e\u{301}\u{327}",
        "\u{1E0A}\u{323}", "\u{1E0C}\u{307}", "D\u{323}\u{307}",
        "\u{212B}", "\u{C5}", "A\u{30A}", "\u{344}", "\u{F900}",
        "\u{1100}\u{1161}", "\u{AC00}", "\u{1100}\u{1161}\u{11A8}", "\u{AC01}", "\u{C3D8}\u{11C1}", "\u{C3F2}", "\u{11A8}",
        "日", "\u{FFFD}", "\u{FFFF}", "😀", "\u{1F1EB}\u{1F1F7}", "\u{10FFFF}"
    ]

    mutating func string() -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            text += chance(3) ? pick(["a", "b", "\0"]) : pick(Self.stringPieces)
        }
        return text
    }

    mutating func byteString() -> [UInt8] {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in
            chance(2) ? pick([0x00, 0x00, 0x01, 0x61, 0xFE, 0xFF]) : UInt8.random(in: 0...255, using: &random)
        }
    }

    static let fixedUUIDs: [UUID] = [
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!,
        UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEF00")!,
        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
    ]

    mutating func uuid() -> UUID {
        if chance(2) { return pick(Self.fixedUUIDs) }
        let raw = random.bytes(count: 16)
        return UUID(
            uuid: (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
            )
        )
    }

    mutating func date() -> Date {
        let time: Double =
            switch Int.random(in: 0..<4, using: &random) {
            case 0: pick([-0.0, 0, 1.5, -1.5, -1e9, 1e9, .infinity, -.infinity, .nan, -.nan, .leastNonzeroMagnitude])
            case 1: Double(Int.random(in: -2...2, using: &random))
            default: Double.random(in: -4e9...4e9, using: &random)
            }
        return Date(timeIntervalSinceReferenceDate: time)
    }
}
