// Recovery's replay buffer (Recovery/ReplayBuffer.swift) inserts what the log holds in table
// order: key ascending, newest first. It sorts mostly by the 8 bytes after the prefix every
// key shares, so these keys are built to meet each case of that: long shared prefixes, keys
// that are prefixes of others, zero bytes where a shorter key is padded, and keys alike well
// past those 8 bytes. Replay a failure with STRATA_SEED=<seed>.
import StrataTestSupport
import Testing

@testable import Strata

@Suite("ReplayBuffer")
struct ReplayBufferTests {
    /// A key of `prefix` followed by 0 to 12 bytes from a tiny alphabet that includes 0x00
    /// and 0xFF, so keys repeat, pad, and tie on their first 8 bytes after the prefix.
    static func key(prefix: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0xFF]
        let length = Int(random.next() % 13)
        return prefix + (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
    }

    /// The order recovery must insert in, by the plain definition: keys compared byte by
    /// byte, the newer version first, and log order between equals (the sort is stable).
    static func expectedOrder(_ log: [(key: [UInt8], sequence: UInt64)]) -> [(key: [UInt8], sequence: UInt64)] {
        log.enumerated().sorted { a, b in
            if a.element.key != b.element.key { return a.element.key.lexicographicallyPrecedes(b.element.key) }
            if a.element.sequence != b.element.sequence { return a.element.sequence > b.element.sequence }
            return a.offset < b.offset
        }.map(\.element)
    }

    @Test("replayed operations are inserted in table order, whatever the keys share", arguments: [0, 1, 9, 20])
    func tableOrder(prefixLength: Int) {
        let seed = TestSeeds.seed(0x5EED_0000 + UInt64(prefixLength), test: "ReplayBuffer.tableOrder(\(prefixLength))")
        var random = SeededRandom(seed: seed)
        for round in 0..<TestSeeds.scaled(40) {
            let prefix = (0..<prefixLength).map { _ in UInt8(ascii: "0") + UInt8(random.next() % 2) }
            var buffer = ReplayBuffer()
            var log: [(key: [UInt8], sequence: UInt64)] = []
            var sequence: UInt64 = 1 + UInt64(random.next() % 1000)
            var keysOfSequence = Set<[UInt8]>()
            for _ in 0..<(2 + Int(random.next() % 200)) {
                // Several operations share a sequence, as a transaction's do (each key once
                // in a transaction: the memtable refuses a (key, sequence) twice).
                if random.next() % 3 == 0 {
                    sequence += 1
                    keysOfSequence = []
                }
                // Most keys share the round's prefix; a few cut it short, so that the prefix
                // every key shares is shorter than the one most share.
                var key = Self.key(prefix: prefix, &random)
                if random.next() % 16 == 0 { key = Array(key.prefix(Int(random.next() % UInt64(key.count + 1)))) }
                if !keysOfSequence.insert(key).inserted {
                    sequence += 1
                    keysOfSequence = [key]
                }
                let value: [UInt8]? = random.next() % 4 == 0 ? nil : [UInt8(truncatingIfNeeded: sequence)]
                key.withUnsafeBytes { k in
                    if let value {
                        value.withUnsafeBytes { buffer.add(key: k, sequence: sequence, value: $0) }
                    } else {
                        buffer.add(key: k, sequence: sequence, value: nil)
                    }
                }
                log.append((key, sequence))
            }
            let expected = Self.expectedOrder(log)
            let actual = buffer.insertionOrder
            #expect(
                actual.map(\.key) == expected.map(\.key) && actual.map(\.sequence) == expected.map(\.sequence),
                "round \(round), seed \(seed): the replay's order differs from table order")

            // And the memtable built from it holds the newest version of every key.
            let table = MemTable(runLength: nil)
            buffer.apply(to: table)
            var newest: [[UInt8]: UInt64] = [:]
            for entry in log { newest[entry.key] = max(newest[entry.key] ?? 0, entry.sequence) }
            for (key, sequence) in newest {
                let found = key.withUnsafeBytes { k in table.findVisible(k, hash: hashKey(k), at: .max)?.sequence }
                #expect(found == sequence, "round \(round), seed \(seed): key \(key) should be at sequence \(sequence)")
            }
        }
    }
}
