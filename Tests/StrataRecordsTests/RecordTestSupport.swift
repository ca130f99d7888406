import Foundation
import StrataTestSupport
import Testing

@testable import StrataRecords

// Helpers shared by the record codec and collection tests: round trips through the record
// format, bit-exact comparison of values that hold doubles and dates, and a recursive value
// type whose random instances cover every tag and every kind of container.

enum RecordCodec {
    static func roundTrip<T: Codable>(_ value: T, as type: T.Type = T.self) throws -> T {
        try RecordDecoder.decode(T.self, from: try RecordEncoder.encode(value))
    }

    /// Records an issue, with the stored bytes, unless `value` comes back equal.
    static func expectRoundTrip<T: Codable & Equatable>(
        _ value: T, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let bytes = try RecordEncoder.encode(value)
            let back = try RecordDecoder.decode(T.self, from: bytes)
            #expect(back == value, "\(T.self) stored as \(KeyTestEnvironment.hex(bytes))", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(T.self) \(value): \(error)", sourceLocation: sourceLocation)
        }
    }
}

/// A coding key for any name, for containers whose fields are data.
struct RecordTestKey: CodingKey, Hashable {
    let stringValue: String
    let intValue: Int?

    init(_ name: String) {
        stringValue = name
        intValue = nil
    }

    init?(stringValue: String) { self.init(stringValue) }

    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// A value of any shape the record format can hold, nested to any depth. Its synthesized
/// `Codable` stores each case as a keyed container holding a nested one, so decoding goes
/// through every container kind and every scalar type.
indirect enum RandomValue: Codable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case int8(Int8)
    case uint(UInt64)
    case uint16(UInt16)
    case double(Double)
    case float(Float)
    case string(String)
    case data(Data)
    case uuid(UUID)
    case date(Date)
    case optional(RandomValue?)
    case array([RandomValue])
    case object([String: RandomValue])
    case table([Int: RandomValue])
    case pair(first: RandomValue, second: RandomValue)

    /// Equality that tells NaNs, -0.0 and 0.0 apart by their bits, as the format promises to.
    func same(as other: RandomValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.int8(let a), .int8(let b)): return a == b
        case (.uint(let a), .uint(let b)): return a == b
        case (.uint16(let a), .uint16(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        // A Float travels as a Double; NaN payloads may be quietened on the way back.
        case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN && a.sign == b.sign)
        case (.string(let a), .string(let b)): return Array(a.utf8) == Array(b.utf8)
        case (.data(let a), .data(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.optional(let a), .optional(let b)):
            switch (a, b) {
            case (nil, nil): return true
            case (let a?, let b?): return a.same(as: b)
            default: return false
            }
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.same(as: $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { value.same(as: $0) } ?? false }
        case (.table(let a), .table(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { value.same(as: $0) } ?? false }
        case (.pair(let a1, let a2), .pair(let b1, let b2)):
            return a1.same(as: b1) && a2.same(as: b2)
        default:
            return false
        }
    }

    var description: String {
        switch self {
        case .double(let value): return "double(\(value), bits 0x\(String(value.bitPattern, radix: 16)))"
        case .date(let value): return "date(\(value.timeIntervalSinceReferenceDate))"
        case .string(let value): return "string(\(value.debugDescription))"
        case .optional(let value): return "optional(\(value.map(\.description) ?? "nil"))"
        case .array(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .object(let fields): return "{" + fields.map { "\($0.key.debugDescription): \($0.value)" }.joined(separator: ", ") + "}"
        case .table(let fields): return "{" + fields.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .pair(let first, let second): return "pair(\(first), \(second))"
        default:
            var text = ""
            dump(self, to: &text, maxDepth: 1)
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// How deep containers nest in the value's stored form (each case adds two levels: the
    /// case's container and its payload's).
    var depth: Int {
        switch self {
        case .optional(let value?): return 2 + value.depth
        case .array(let items): return 3 + (items.map(\.depth).max() ?? 0)
        case .object(let fields): return 3 + (fields.values.map(\.depth).max() ?? 0)
        case .table(let fields): return 3 + (fields.values.map(\.depth).max() ?? 0)
        case .pair(let first, let second): return 2 + max(first.depth, second.depth)
        default: return 2
        }
    }
}

/// Random `RandomValue`s that favour edge values: extreme integers, NaNs, zeros in strings.
struct RandomValueGenerator {
    var keys: KeyGenerator

    init(seed: UInt64) {
        keys = KeyGenerator(seed: seed)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &keys.random)
    }

    mutating func value(depth: Int = 0) -> RandomValue {
        let leafKinds = 12
        let kind = depth >= 4 ? int(0...(leafKinds - 1)) : int(0...(leafKinds + 4))
        switch kind {
        case 0: return .null
        case 1: return .bool(keys.chance(2))
        case 2: return .int(keys.int())
        case 3: return .int8(keys.pick([.min, -1, 0, 1, .max, Int8(truncatingIfNeeded: keys.random.next())]))
        case 4: return .uint(keys.uint())
        case 5: return .uint16(keys.pick([0, 1, 127, 128, .max, UInt16(truncatingIfNeeded: keys.random.next())]))
        case 6: return .double(keys.double())
        case 7: return .float(Float(keys.double()))
        case 8: return .string(keys.string())
        case 9: return .data(Data(keys.byteString() + (keys.chance(8) ? keys.random.bytes(count: int(0...300)) : [])))
        case 10: return .uuid(keys.uuid())
        case 11: return .date(keys.date())
        case 12: return .optional(keys.chance(2) ? nil : value(depth: depth + 1))
        case 13: return .array((0..<int(0...4)).map { _ in value(depth: depth + 1) })
        case 14:
            var fields: [String: RandomValue] = [:]
            for _ in 0..<int(0...4) { fields[keys.string()] = value(depth: depth + 1) }
            return .object(fields)
        case 15:
            var fields: [Int: RandomValue] = [:]
            for _ in 0..<int(0...3) { fields[Int(keys.int())] = value(depth: depth + 1) }
            return .table(fields)
        default:
            return .pair(first: value(depth: depth + 1), second: value(depth: depth + 1))
        }
    }
}
