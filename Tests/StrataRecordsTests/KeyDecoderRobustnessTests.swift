import Foundation
import StrataRecords
import StrataTestSupport
import Testing

// Decoding bytes that are not a key must throw `KeyDecodingError`, never trap: keys are read
// back from stores that may be damaged or written by other code. A byte string that does
// decode must be exactly the encoding of what it decodes to (keys.md, "Validity rules").

struct KeyDecoderRobustnessTests {
    /// Decodes `input`; returns nil when it decoded to a key that re-encodes to `input`, and
    /// a description of the problem otherwise.
    private func check(_ input: [UInt8]) -> String? {
        do {
            let key = try KeyTuple(decoding: input)
            let again = KeyTuple(key.elements).bytes
            return again == input ? nil : "decodes to \(key), which encodes as \(KeyTestEnvironment.hex(again))"
        } catch {
            // Typed throws: `error` is a KeyDecodingError.
            return (0...input.count).contains(error.offset) ? nil : "error offset \(error.offset) outside the input: \(error)"
        }
    }

    /// Bytes that mean something to the decoder, to make random inputs get further than the
    /// first byte.
    private static let interestingBytes: [UInt8] = [
        0x00, 0x01, 0x02, 0x05, 0x0C, 0x13, 0x14, 0x15, 0x1C, 0x1D, 0x1E, 0x25, 0x26, 0x27, 0x28, 0x29, 0x30,
        0x61, 0x7F, 0x80, 0xC3, 0xA9, 0xCC, 0x81, 0xCF, 0xD6, 0xD7, 0xD8, 0xD9, 0xE2, 0xE3, 0xEA, 0xEB, 0xF3, 0xFA, 0xFD, 0xFE, 0xFF
    ]

    private func randomInput(_ generator: inout KeyGenerator) -> [UInt8] {
        let count = Int.random(in: 0...40, using: &generator.random)
        if generator.chance(2) { return generator.random.bytes(count: count) }
        return (0..<count).map { _ in
            generator.chance(4) ? UInt8.random(in: 0...255, using: &generator.random) : generator.pick(Self.interestingBytes)
        }
    }

    /// A valid key with one to three random changes.
    private func mutatedKey(_ generator: inout KeyGenerator) -> [UInt8] {
        var bytes = KeyTuple(generator.key(maxCount: 4)).bytes
        for _ in 0..<Int.random(in: 1...3, using: &generator.random) {
            let index = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator.random)
            switch Int.random(in: 0..<7, using: &generator.random) {
            case 0 where !bytes.isEmpty: bytes[index] ^= 1 << UInt8.random(in: 0...7, using: &generator.random)
            case 1 where !bytes.isEmpty: bytes[index] = generator.pick(Self.interestingBytes)
            case 2: bytes.insert(generator.pick(Self.interestingBytes), at: index)
            case 3 where !bytes.isEmpty: bytes.remove(at: index)
            case 4: bytes.removeLast(bytes.count - index)
            case 5: bytes += randomInput(&generator).prefix(4)
            default:
                // Repeat a slice: shuffles structure without inventing bytes.
                let end = min(bytes.count, index + Int.random(in: 1...6, using: &generator.random))
                bytes.insert(contentsOf: bytes[index..<end], at: index)
            }
        }
        return bytes
    }

    @Test func randomAndMutatedInputsNeverTrap() {
        let seed = KeyTestEnvironment.seed(0x5EED_0101, test: "keys/decoder fuzz")
        var generator = KeyGenerator(seed: seed)
        var decoded = 0
        var failures = 0
        let rounds = KeyTestEnvironment.scaled(30_000)
        for round in 0..<rounds {
            let input = round % 2 == 0 ? randomInput(&generator) : mutatedKey(&generator)
            if let problem = check(input) {
                Issue.record("seed \(seed) round \(round): \(KeyTestEnvironment.hex(input)) \(problem)")
                failures += 1
                if failures >= 5 { return }
            }
            if (try? KeyTuple(decoding: input)) != nil { decoded += 1 }
        }
        // Some inputs should get through, or the mutations are too destructive to test much.
        #expect(decoded > rounds / 20, "only \(decoded) of \(rounds) inputs decoded")
    }

    struct Rejected: CustomTestStringConvertible, Sendable {
        let hex: String
        let offset: Int
        let why: String
        var testDescription: String { "\(why): \(hex)" }
    }

    /// Inputs each validity rule of keys.md refuses, with the offset the error must give.
    static let rejected: [Rejected] = [
        Rejected(hex: "00", offset: 0, why: "0x00 at the top level"),
        Rejected(hex: "ff", offset: 0, why: "0xff is no type code"),
        Rejected(hex: "14 03", offset: 1, why: "unknown type code"),
        Rejected(hex: "15", offset: 1, why: "integer cut short"),
        Rejected(hex: "15 00", offset: 0, why: "positive integer with a leading zero"),
        Rejected(hex: "13 ff", offset: 0, why: "negative integer with a leading ff"),
        Rejected(hex: "1c 80 00 00 00 00 00 00 00", offset: 0, why: "above Int64.max"),
        Rejected(hex: "0c 7f ff ff ff ff ff ff fe", offset: 0, why: "below Int64.min"),
        Rejected(hex: "1e 00", offset: 0, why: "unsigned integer with a leading zero"),
        Rejected(hex: "25 ff ff", offset: 3, why: "unsigned integer cut short"),
        Rejected(hex: "28 80 00", offset: 3, why: "double cut short"),
        Rejected(hex: "29 7f ff ff ff ff ff ff ff", offset: 0, why: "date written as -0.0"),
        Rejected(hex: "29 ff f8 00 00 00 00 00 01", offset: 0, why: "date with a non-canonical NaN"),
        Rejected(hex: "30 00 11 22", offset: 4, why: "UUID cut short"),
        Rejected(hex: "02 61", offset: 2, why: "unterminated string"),
        Rejected(hex: "02 61 00 ff", offset: 4, why: "string ending in an escaped zero"),
        Rejected(hex: "02 c3 00", offset: 0, why: "truncated UTF-8 sequence"),
        Rejected(hex: "02 c0 80 00", offset: 0, why: "overlong UTF-8"),
        Rejected(hex: "02 ed a0 80 00", offset: 0, why: "UTF-8 surrogate"),
        Rejected(hex: "02 f4 90 80 80 00", offset: 0, why: "UTF-8 above U+10FFFF"),
        Rejected(hex: "02 ff 00", offset: 0, why: "0xff in UTF-8"),
        Rejected(hex: "02 65 cc 81 00", offset: 0, why: "string not in NFC"),
        Rejected(hex: "01 61", offset: 2, why: "unterminated byte string"),
        Rejected(hex: "05", offset: 1, why: "unterminated tuple"),
        Rejected(hex: "05 02 61 00", offset: 4, why: "tuple ends after an element"),
        Rejected(hex: "fd 9e ff", offset: 3, why: "descending string without its guard"),
        Rejected(hex: "fd 9e ff fe", offset: 3, why: "descending string with a wrong guard"),
        Rejected(hex: "fa", offset: 1, why: "unterminated descending tuple"),
        Rejected(hex: "fa fd", offset: 2, why: "string cut short inside a descending tuple"),
        Rejected(hex: "fa 00", offset: 1, why: "0xff inside a descending tuple"),
        Rejected(hex: "ea", offset: 1, why: "descending integer cut short")
    ]

    @Test(arguments: rejected)
    func invalidInputIsRejected(_ example: Rejected) {
        let input = KeyTestEnvironment.bytes(example.hex)
        #expect(throws: KeyDecodingError.self) { try KeyTuple(decoding: input) }
        do {
            let key = try KeyTuple(decoding: input)
            Issue.record("decoded to \(key)")
        } catch {
            #expect(error.offset == example.offset, "\(error)")
        }
    }

    @Test func deepNestingIsRejectedNotACrash() {
        for opener: UInt8 in [0x05, 0xFA] {
            // Far deeper than the limit: a recursive decoder without one would overflow the stack.
            let input = [UInt8](repeating: opener, count: 100_000)
            #expect(throws: KeyDecodingError.self) { try KeyTuple(decoding: input) }
        }
        // 65 levels, properly closed: one too many.
        let tooDeep = [UInt8](repeating: 0x05, count: 65) + [0x14] + [UInt8](repeating: 0x00, count: 65)
        #expect(throws: KeyDecodingError.self) { try KeyTuple(decoding: tooDeep) }
        let deepest = [UInt8](repeating: 0x05, count: 64) + [0x14] + [UInt8](repeating: 0x00, count: 64)
        #expect(throws: Never.self) { try KeyTuple(decoding: deepest) }
    }

    @Test func everyShortInputDecodesOrThrows() {
        // Every input of up to two bytes, exhaustively.
        var problems: [String] = []
        for first in 0...255 {
            if let problem = check([UInt8(first)]) { problems.append("\(first): \(problem)") }
            for second in 0...255 {
                if let problem = check([UInt8(first), UInt8(second)]) { problems.append("\(first) \(second): \(problem)") }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}
