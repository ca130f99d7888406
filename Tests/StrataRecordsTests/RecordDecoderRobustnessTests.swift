import Foundation
import StrataTestSupport
import Testing

@testable import StrataRecords

// Stored records are read back from stores that may be damaged or written by other code, so
// decoding any bytes as any type must either succeed or throw a `DecodingError`: never trap,
// never overflow the stack, never allocate what a length field claims before checking it.

/// A record of several field kinds, as an app would store.
private struct Message: Codable {
    struct Attachment: Codable {
        var name: String
        var data: Data
        var size: UInt32?
    }

    var id: UUID
    var subject: String
    var received: Date
    var flags: [Bool]
    var score: Double
    var priority: Int8
    var headers: [String: String]
    var attachments: [Attachment]
    var thread: [Int: Int]?
}

/// Arrays nested to any depth, decoded by recursing through `decode(ArrayNest.self)`.
private indirect enum ArrayNest: Decodable {
    case leaf
    case list([ArrayNest])

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var items: [ArrayNest] = []
        while !container.isAtEnd { items.append(try container.decode(ArrayNest.self)) }
        self = items.isEmpty ? .leaf : .list(items)
    }
}

/// Keyed containers nested to any depth, through the synthesized coding of an enum's
/// associated value.
private indirect enum Chain: Codable {
    case end
    case link(Chain)
}

/// The same through a single-value container: the payload decodes at the same coding path as
/// its parent, so depth is not visible from the path's length alone.
private indirect enum Wrapped: Decodable {
    case leaf(Int)
    case wrapped([Wrapped])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int.self) {
            self = .leaf(value)
        } else {
            self = .wrapped(try container.decode([Wrapped].self))
        }
    }
}

@Suite("Record decoder robustness")
struct RecordDecoderRobustnessTests {
    /// Decodes `bytes` as each of several types. Returns how many decoded; an error other
    /// than `DecodingError` is recorded as an issue.
    private static func decodeAsEverything(_ bytes: [UInt8], context: @autoclosure () -> String) -> Int {
        var decoded = 0
        func attempt<T: Decodable>(_: T.Type) {
            do {
                _ = try RecordDecoder.decode(T.self, from: bytes)
                decoded += 1
            } catch is DecodingError {
            } catch {
                Issue.record("\(context()): decoding as \(T.self) threw \(Swift.type(of: error)), not a DecodingError: \(error)")
            }
        }
        attempt(RandomValue.self)
        attempt(Message.self)
        attempt([String: Int].self)
        attempt([Int: [Double?]].self)
        attempt([Int].self)
        attempt([Data].self)
        attempt(String.self)
        attempt(Int8.self)
        attempt(UInt64.self)
        attempt(Double.self)
        attempt(Bool.self)
        attempt(UUID.self)
        attempt(Date.self)
        attempt(Data.self)
        attempt(Int?.self)
        attempt(Chain.self)
        attempt(ArrayNest.self)
        attempt(Wrapped.self)
        // With a defaults record, so that the fallback's lookups see damaged bytes too.
        do {
            _ = try RecordDecoder.decode(Message.self, from: bytes, defaults: bytes)
            decoded += 1
        } catch is DecodingError {
        } catch {
            Issue.record("\(context()): decoding with itself as defaults threw \(error)")
        }
        return decoded
    }

    /// Bytes that mean something to the parser: tags, varint continuations, small lengths.
    private static let interestingBytes: [UInt8] = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x7F, 0x80, 0x81, 0xFF, 0x10, 0x20, 0x61
    ]

    private static func randomInput(_ random: inout SeededRandom) -> [UInt8] {
        let count = Int.random(in: 0...48, using: &random)
        var bytes: [UInt8]
        if Bool.random(using: &random) {
            bytes = random.bytes(count: count)
        } else {
            bytes = (0..<count).map { _ in
                Int.random(in: 0..<4, using: &random) == 0
                    ? UInt8.random(in: 0...255, using: &random) : interestingBytes.randomElement(using: &random)!
            }
        }
        // Mostly with the right version byte, or the parser never gets past it.
        if !bytes.isEmpty, Int.random(in: 0..<8, using: &random) != 0 { bytes[0] = RecordFormat.version }
        return bytes
    }

    /// Valid encodings of values of several types, to mutate.
    private static func validEncoding(_ generator: inout RandomValueGenerator) throws -> [UInt8] {
        switch Int.random(in: 0..<4, using: &generator.keys.random) {
        case 0:
            let message = Message(
                id: generator.keys.uuid(), subject: generator.keys.string(), received: generator.keys.date(),
                flags: (0..<generator.int(0...3)).map { _ in generator.keys.chance(2) }, score: generator.keys.double(),
                priority: Int8(truncatingIfNeeded: generator.keys.int()),
                headers: generator.keys.chance(2) ? [:] : [generator.keys.string(): generator.keys.string(), "to": "x"],
                attachments: (0..<generator.int(0...2)).map { _ in
                    Message.Attachment(name: generator.keys.string(), data: Data(generator.keys.byteString()), size: generator.keys.chance(2) ? nil : 7)
                },
                thread: generator.keys.chance(2) ? nil : [1: 2, -3: 4])
            return try RecordEncoder.encode(message)
        case 1:
            var chain = Chain.end
            for _ in 0..<generator.int(0...6) { chain = .link(chain) }
            return try RecordEncoder.encode(chain)
        default:
            return try RecordEncoder.encode(generator.value())
        }
    }

    private static func mutate(_ bytes: inout [UInt8], _ random: inout SeededRandom) {
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let index = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0 where !bytes.isEmpty: bytes[index] ^= 1 << UInt8.random(in: 0...7, using: &random)
            case 1 where !bytes.isEmpty: bytes[index] = interestingBytes.randomElement(using: &random)!
            case 2: bytes.insert(interestingBytes.randomElement(using: &random)!, at: index)
            case 3 where !bytes.isEmpty: bytes.remove(at: index)
            case 4: bytes.removeLast(bytes.count - index)
            case 5: bytes.insert(contentsOf: random.bytes(count: Int.random(in: 1...4, using: &random)), at: index)
            case 6 where !bytes.isEmpty:
                // A length or count made large: a varint of up to ten bytes in place of one byte.
                bytes.replaceSubrange(index...index, with: [0xFF, 0xFF, 0xFF, 0xFF].prefix(Int.random(in: 1...4, using: &random)) + [0x0F])
            default:
                // Repeat a slice: shuffles structure without inventing bytes.
                let end = min(bytes.count, index + Int.random(in: 1...8, using: &random))
                bytes.insert(contentsOf: bytes[index..<end], at: index)
            }
        }
    }

    @Test func randomBytesDecodeOrThrow() {
        let seed = TestSeeds.seed(0x5EED_0D01, test: "records/decoder random bytes")
        var random = SeededRandom(seed: seed)
        let rounds = TestSeeds.scaled(4_000)
        var decoded = 0
        for round in 0..<rounds {
            let input = Self.randomInput(&random)
            decoded += Self.decodeAsEverything(input, context: "seed \(seed) round \(round) input \(KeyTestEnvironment.hex(input))")
        }
        print("[records/decoder random bytes] \(rounds) inputs, \(decoded) decodings succeeded")
    }

    @Test func mutatedRecordsDecodeOrThrow() throws {
        let seed = TestSeeds.seed(0x5EED_0D02, test: "records/decoder mutations")
        var generator = RandomValueGenerator(seed: seed)
        var random = SeededRandom(seed: seed, stream: 1)
        let rounds = TestSeeds.scaled(4_000)
        var decoded = 0
        for round in 0..<rounds {
            var input = try Self.validEncoding(&generator)
            Self.mutate(&input, &random)
            decoded += Self.decodeAsEverything(input, context: "seed \(seed) round \(round) input \(KeyTestEnvironment.hex(input))")
        }
        // Some mutated records should still decode as something, or the mutations only ever
        // test the first check.
        #expect(decoded > rounds / 100, "only \(decoded) decodings of \(rounds) mutated records succeeded")
        print("[records/decoder mutations] \(rounds) inputs, \(decoded) decodings succeeded")
    }

    /// Every truncation of a valid record fails (each cuts a container or a value short),
    /// and every prefix is handled.
    @Test func everyTruncationThrows() throws {
        let seed = TestSeeds.seed(0x5EED_0D03, test: "records/decoder truncations")
        var generator = RandomValueGenerator(seed: seed)
        for round in 0..<TestSeeds.scaled(100) {
            let bytes = try RecordEncoder.encode(generator.value())
            for length in 0..<bytes.count {
                let prefix = Array(bytes[..<length])
                #expect(throws: DecodingError.self, "seed \(seed) round \(round): \(KeyTestEnvironment.hex(prefix))") {
                    try RecordDecoder.decode(RandomValue.self, from: prefix)
                }
            }
        }
    }

    // MARK: Hand-made hostile inputs

    struct Hostile: CustomTestStringConvertible, Sendable {
        let hex: String
        let why: String
        var testDescription: String { "\(why): \(hex)" }
    }

    static let hostile: [Hostile] = [
        Hostile(hex: "", why: "empty"),
        Hostile(hex: "02 02 02", why: "unknown format version"),
        Hostile(hex: "00 02 02", why: "format version 0"),
        Hostile(hex: "01", why: "version only"),
        Hostile(hex: "01 0b", why: "unknown tag"),
        Hostile(hex: "01 ff", why: "unknown tag 0xff"),
        Hostile(hex: "01 02 02 00", why: "trailing byte after the value"),
        Hostile(hex: "01 02 80", why: "varint cut short"),
        Hostile(hex: "01 02 ff ff ff ff ff ff ff ff ff 02", why: "varint of 10 bytes over 64 bits"),
        Hostile(hex: "01 02 ff ff ff ff ff ff ff ff ff ff 01", why: "varint of 11 bytes"),
        Hostile(hex: "01 02 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80 80 00", why: "long run of continuation bytes"),
        Hostile(hex: "01 05 ff ff ff ff ff ff ff ff 7f 61", why: "string of 2^63 bytes"),
        Hostile(hex: "01 05 ff ff ff ff ff ff ff ff ff 01 61", why: "string of 2^64 - 1 bytes"),
        Hostile(hex: "01 05 05 61", why: "string longer than the record"),
        Hostile(hex: "01 05 02 c3 28", why: "invalid UTF-8"),
        Hostile(hex: "01 06 ff ff ff ff 0f 00", why: "bytes of 4 GiB"),
        Hostile(hex: "01 09 ff ff ff ff ff ff ff ff 7f 00", why: "array body of 2^63 bytes"),
        Hostile(hex: "01 09 03 ff ff 03", why: "array count larger than the body"),
        Hostile(hex: "01 09 06 ff ff ff ff ff 0f", why: "array count of 2^40 in a six-byte body"),
        Hostile(hex: "01 09 02 05 00", why: "array count above its elements"),
        Hostile(hex: "01 09 03 01 00 00", why: "array with a byte after its elements"),
        Hostile(hex: "01 09 03 01 09 05", why: "inner array running past the outer one"),
        Hostile(hex: "01 0a 05 7f 01 61 02 00", why: "keyed count larger than its fields"),
        Hostile(hex: "01 0a 04 01 09 61 00", why: "field name running past the container"),
        Hostile(hex: "01 0a 03 01 01 61", why: "field without a value"),
        Hostile(hex: "01 0a 04 01 01 61 00 00", why: "keyed body longer than its fields"),
        Hostile(hex: "01 0a 05 01 02 ff fe 00", why: "field name that is not UTF-8"),
        Hostile(hex: "01 01 02", why: "Boolean byte 2"),
        Hostile(hex: "01 01", why: "Boolean cut short"),
        Hostile(hex: "01 04 00 00 00", why: "double cut short"),
        Hostile(hex: "01 07 00 11 22", why: "UUID cut short"),
        Hostile(hex: "01 08 00", why: "date cut short")
    ]

    @Test(arguments: hostile)
    func hostileInputThrows(_ example: Hostile) {
        let input = KeyTestEnvironment.bytes(example.hex)
        _ = Self.decodeAsEverything(input, context: example.why)
        // None of them is a valid record of these types.
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(Message.self, from: input) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(RandomValue.self, from: input) }
    }

    /// `depth` arrays, each holding the next, the innermost empty: `09 len 01 09 len 01 ... 09 01 00`.
    private static func nestedArrays(_ depth: Int) -> [UInt8] {
        // Body lengths from the inside out; each array's body is its count byte and the next array.
        var sizes: [Int] = []
        var inner = 3  // 09 01 00
        for _ in 1..<depth {
            sizes.append(inner)
            var header: [UInt8] = []
            header.appendVarint(UInt64(1 + inner))
            inner += 1 + header.count + 1
        }
        var bytes: [UInt8] = [RecordFormat.version]
        bytes.reserveCapacity(inner + 1)
        for size in sizes.reversed() {
            bytes.append(RecordFormat.Tag.array.rawValue)
            bytes.appendVarint(UInt64(1 + size))
            bytes.append(1)
        }
        bytes += [RecordFormat.Tag.array.rawValue, 1, 0]
        return bytes
    }

    /// `depth` links of `Chain` as its synthesized coding stores them:
    /// `{"link": {"_0": {"link": ... {"end": {}}}}}`.
    private static func nestedChain(_ depth: Int) -> [UInt8] {
        func keyed(_ name: String, _ inner: [UInt8]) -> [UInt8] {
            var body: [UInt8] = [1]
            body.appendVarint(UInt64(name.utf8.count))
            body += Array(name.utf8) + inner
            var bytes: [UInt8] = [RecordFormat.Tag.keyed.rawValue]
            bytes.appendVarint(UInt64(body.count))
            return bytes + body
        }
        // The last link holds `.end`, an empty keyed container under "end".
        var value = keyed("end", [RecordFormat.Tag.keyed.rawValue, 1, 0])
        for _ in 0..<depth { value = keyed("link", keyed("_0", value)) }
        return [RecordFormat.version] + value
    }

    @Test func deepNestingThrowsInsteadOfOverflowingTheStack() throws {
        let arrays = Self.nestedArrays(10_000)
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(ArrayNest.self, from: arrays) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(Wrapped.self, from: arrays) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(RandomValue.self, from: arrays) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode([[Int]].self, from: arrays) }
        // Built with quadratic copying, so fewer levels; still far past the limit.
        let chain = Self.nestedChain(2_000)
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(Chain.self, from: chain) }
        #expect(throws: DecodingError.self) { try RecordDecoder.decode(Chain.self, from: chain, defaults: chain) }
        // Moderate depths decode: the limit is not set too low for real records.
        if case .list = try RecordDecoder.decode(ArrayNest.self, from: Self.nestedArrays(100)) {
        } else {
            Issue.record("100 nested arrays did not decode as a list")
        }
        #expect(throws: Never.self) { try RecordDecoder.decode(Chain.self, from: Self.nestedChain(50)) }
        #expect(throws: Never.self) { try RecordDecoder.decode(Wrapped.self, from: Self.nestedArrays(100)) }
        // The hand-built bytes are what the encoder writes.
        var chain3 = Chain.end
        for _ in 0..<3 { chain3 = .link(chain3) }
        #expect(try RecordEncoder.encode(chain3) == Self.nestedChain(3))
    }
}
