// What the `keys` and `records` fuzz targets do with one input (docs/fuzzing.md), and the
// test that replays every kept input through the same code. `scripts/fuzz` compiles this
// file into the fuzz binaries with STRATA_FUZZ defined (with only the key and record codecs
// of StrataRecords, which do not need the store), so the fuzzer and the test can never run
// different decode paths; the test half is left out there.
import Foundation

@testable import StrataRecords

#if !STRATA_FUZZ
    import StrataTestSupport
    import Testing
#endif

/// One function per fuzz target. Any thrown error is fine; a trap, or a value that does not
/// survive a round trip through the encoder, is a finding.
enum RecordFuzzing {
    static let targets = ["keys", "records"]

    static func body(for target: String) -> ([UInt8]) -> Void {
        switch target {
        case "keys": keys
        case "records": records
        default: preconditionFailure("no record fuzz target \(target)")
        }
    }

    // MARK: Keys

    /// The input as a key: it decodes to elements that encode back to exactly the input, or
    /// fails with an offset inside it (docs/format/keys.md, "Validity rules"). Then the input
    /// cut in two, where the first byte says where: when both halves are keys, their bytes
    /// must sort as their elements do.
    static func keys(_ bytes: [UInt8]) {
        guard let key = decodeKey(bytes), let first = bytes.first else { return }
        _ = key.description
        let cut = 1 + Int(first) % bytes.count
        guard let a = decodeKey(Array(bytes[1..<cut])), let b = decodeKey(Array(bytes[cut...])) else { return }
        let byBytes = a.bytes == b.bytes ? 0 : (a.bytes.lexicographicallyPrecedes(b.bytes) ? -1 : 1)
        let byElements = KeyElement.compare(.tuple(a.elements), .tuple(b.elements))
        precondition(byBytes == byElements, "keys \(a) and \(b) sort one way by bytes and another by elements")
    }

    static func decodeKey(_ bytes: [UInt8]) -> KeyTuple? {
        do {
            let key = try KeyTuple(decoding: bytes)
            precondition(KeyTuple(key.elements).bytes == bytes, "a decoded key does not encode back to its bytes")
            return key
        } catch {
            precondition((0...bytes.count).contains(error.offset), "a key decoding error points outside the input")
            return nil
        }
    }

    // MARK: Records

    /// The input as a stored record of several types (every kind of value, optionals,
    /// dictionaries with string and integer keys, an enum with associated values, recursive
    /// types, a class that encodes its superclass apart), and as the defaults record that
    /// fills in missing fields. A value that decodes must encode, and decode again equal.
    static func records(_ bytes: [UInt8]) {
        roundTrip(FuzzScalars.self, bytes)
        roundTrip(FuzzTree.self, bytes)
        roundTrip(FuzzShape.self, bytes)
        roundTrip(FuzzDerived.self, bytes)
        roundTrip([String: [Int64]].self, bytes)
        roundTrip([FuzzDouble?].self, bytes)
        roundTrip(Int16.self, bytes)
        if let value = try? RecordDecoder.decode(FuzzScalars.self, from: bytes, defaults: sampleScalars) { check(value) }
        if let value = try? RecordDecoder.decode(FuzzScalars.self, from: emptyRecord, defaults: bytes) { check(value) }
        if let value = try? RecordDecoder.decode(FuzzTree.self, from: emptyRecord, defaults: bytes) { check(value) }
    }

    static func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ bytes: [UInt8]) {
        if let value = try? RecordDecoder.decode(T.self, from: bytes) { check(value) }
    }

    static func check<T: Codable & Equatable>(_ value: T) {
        let encoded: [UInt8]
        let again: T
        do {
            encoded = try RecordEncoder.encode(value)
            again = try RecordDecoder.decode(T.self, from: encoded)
        } catch {
            preconditionFailure("a decoded \(T.self) does not round-trip: \(error)")
        }
        precondition(again == value, "a decoded \(T.self) decodes differently after encoding")
    }

    static let emptyRecord: [UInt8] = try! RecordEncoder.encode(FuzzEmpty())
    static let sampleScalars: [UInt8] = try! RecordEncoder.encode(FuzzScalars.sample)
}

// MARK: The types records decode into

struct FuzzEmpty: Codable, Equatable {}

/// A `Double` compared by bit pattern, so a NaN read from a record equals itself.
struct FuzzDouble: Codable, Equatable {
    var value: Double

    init(_ value: Double) { self.value = value }

    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Double.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    static func == (a: FuzzDouble, b: FuzzDouble) -> Bool { a.value.bitPattern == b.value.bitPattern }
}

/// A `Date` compared by the bit pattern of its time, for the same reason.
struct FuzzDate: Codable, Equatable {
    var value: Date

    init(_ value: Date) { self.value = value }

    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Date.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    static func == (a: FuzzDate, b: FuzzDate) -> Bool {
        a.value.timeIntervalSinceReferenceDate.bitPattern == b.value.timeIntervalSinceReferenceDate.bitPattern
    }
}

enum FuzzKind: String, Codable, Equatable {
    case small, large
}

struct FuzzScalars: Codable, Equatable, Sendable {
    var flag: Bool
    var tiny: Int8
    var count: Int
    var big: UInt64
    var half: UInt16
    var ratio: FuzzDouble
    var name: String
    var blob: Data
    var id: UUID
    var when: FuzzDate
    var note: String?
    var tags: [String]
    var scores: [String: Int32]
    var byNumber: [Int: String]
    var kind: FuzzKind

    static let sample = FuzzScalars(
        flag: true, tiny: -8, count: -1_000_000, big: .max, half: 512, ratio: FuzzDouble(-0.25), name: "caf\u{E9}",
        blob: Data([0, 1, 0xFF]), id: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
        when: FuzzDate(Date(timeIntervalSinceReferenceDate: 1_000)), note: nil, tags: ["a", ""], scores: ["x": 1],
        byNumber: [7: "seven"], kind: .large)
}

/// Recursive through an array.
struct FuzzTree: Codable, Equatable, Sendable {
    var label: String
    var weight: Int?
    var children: [FuzzTree]

    static let sample = FuzzTree(
        label: "root", weight: 1,
        children: [FuzzTree(label: "leaf", weight: nil, children: []), FuzzTree(label: "inner", weight: -3, children: [FuzzTree(label: "x", children: [])])])

    init(label: String, weight: Int? = nil, children: [FuzzTree]) {
        self.label = label
        self.weight = weight
        self.children = children
    }
}

/// Recursive through enum payloads, with the synthesized coding of associated values.
indirect enum FuzzShape: Codable, Equatable, Sendable {
    case point
    case circle(radius: FuzzDouble)
    case rect(width: Int, height: UInt16)
    case group([FuzzShape])
    case labelled(String, FuzzShape)

    /// Built on each use, not kept in a global: a global indirect enum holds its box through a
    /// pointer with the case number in its spare bits, which LeakSanitizer cannot follow, so
    /// `scripts/asan` would report the box as leaked at exit.
    static var sample: FuzzShape {
        .group([.point, .circle(radius: FuzzDouble(2)), .labelled("box", .rect(width: 3, height: 4)), .group([])])
    }
}

/// A class whose subclass encodes the superclass through `superEncoder()`.
class FuzzBase: Codable {
    var id: Int

    init(id: Int) { self.id = id }
}

final class FuzzDerived: FuzzBase, Equatable {
    var extra: [UInt8]
    var parent: FuzzDerived?

    init(id: Int, extra: [UInt8], parent: FuzzDerived?) {
        self.extra = extra
        self.parent = parent
        super.init(id: id)
    }

    private enum CodingKeys: String, CodingKey {
        case extra, parent
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        extra = try container.decode([UInt8].self, forKey: .extra)
        parent = try container.decodeIfPresent(FuzzDerived.self, forKey: .parent)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(extra, forKey: .extra)
        try container.encodeIfPresent(parent, forKey: .parent)
        try super.encode(to: container.superEncoder())
    }

    static func == (a: FuzzDerived, b: FuzzDerived) -> Bool {
        a.id == b.id && a.extra == b.extra && a.parent == b.parent
    }

    static var sample: FuzzDerived { FuzzDerived(id: 2, extra: [9, 8], parent: FuzzDerived(id: 1, extra: [], parent: nil)) }
}

#if !STRATA_FUZZ
    /// Every input kept for the `keys` and `records` fuzz targets, seeds and crashes alike,
    /// goes back through the target's function here, so a crash the fuzzer found and that
    /// was fixed stays fixed without libFuzzer. `scripts/fuzz replay TARGET` finds which input
    /// traps.
    @Suite struct FuzzRegressionTests {
        static func inputs(_ target: String) throws -> [URL] {
            let directory = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent()  // StrataRecordsTests
                .deletingLastPathComponent()  // Tests
                .deletingLastPathComponent()  // repository root
                .appendingPathComponent("Fixtures/fuzz/\(target)")
            guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
            return try walker.compactMap { $0 as? URL }.filter { try $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true }
        }

        @Test(arguments: RecordFuzzing.targets)
        func everyKeptInputDecodesWithoutTrapping(target: String) throws {
            let inputs = try Self.inputs(target)
            #expect(!inputs.isEmpty, "Fixtures/fuzz/\(target) holds no inputs")
            let body = RecordFuzzing.body(for: target)
            for input in inputs { body(try fileBytes(atPath: input.path)) }
        }

        @Test func theSampleValuesRoundTrip() {
            RecordFuzzing.check(FuzzScalars.sample)
            RecordFuzzing.check(FuzzTree.sample)
            RecordFuzzing.check(FuzzShape.sample)
            RecordFuzzing.check(FuzzDerived.sample)
        }
    }
#endif
