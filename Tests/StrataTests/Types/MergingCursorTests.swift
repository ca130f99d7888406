@_spi(Engine) import StrataFormat
import StrataTestSupport
import Testing

@testable import Strata

/// `MergingCursor` on its own, over sources made of plain entry lists.
@Suite struct MergingCursorTests {
    /// A source over (key, sequence, value or nil for a tombstone), in scan order.
    private final class ListSource: MergeSource {
        private let entries: [(key: [UInt8], sequence: UInt64, value: [UInt8]?)]
        private var index = -1
        private let keyBuffers = (KeyBuffer(), KeyBuffer())  // used in turn (MergeSource invariant 2)
        private var flip = false
        private let valueBuffer = KeyBuffer()

        init(_ entries: [(String, UInt64, String?)]) {
            self.entries = entries.map { (Array($0.0.utf8), $0.1, $0.2.map { Array($0.utf8) }) }
        }

        override func advance() throws -> Bool {
            index += 1
            guard index < entries.count else { return false }
            flip.toggle()
            let keyBuffer = flip ? keyBuffers.1 : keyBuffers.0
            entries[index].key.withUnsafeBytes { keyBuffer.set($0) }
            (entries[index].value ?? []).withUnsafeBytes { valueBuffer.set($0) }
            key = keyBuffer.bytes
            value = valueBuffer.bytes
            sequence = entries[index].sequence
            isTombstone = entries[index].value == nil
            return true
        }
    }

    private static func walk(_ sources: [[(String, UInt64, String?)]], reverse: Bool = false) throws -> [String] {
        let cursor = MergingCursor(sources: sources.map { ListSource($0) }, reverse: reverse)
        var seen: [String] = []
        while try cursor.next() {
            seen.append(String(decoding: cursor.key, as: UTF8.self) + "=" + String(decoding: cursor.value, as: UTF8.self))
        }
        return seen
    }

    @Test func theNewestVersionOfEachKeyWins() throws {
        let newer: [(String, UInt64, String?)] = [("b", 9, "b9"), ("d", 8, "d8")]
        let older: [(String, UInt64, String?)] = [("a", 1, "a1"), ("b", 2, "b2"), ("c", 3, "c3"), ("d", 4, "d4")]
        #expect(try Self.walk([newer, older]) == ["a=a1", "b=b9", "c=c3", "d=d8"])
        #expect(try Self.walk([older, newer]) == ["a=a1", "b=b9", "c=c3", "d=d8"], "the sequence decides, not the source order")
    }

    @Test func aTombstoneHidesOlderVersions() throws {
        let newer: [(String, UInt64, String?)] = [("b", 9, nil)]
        let older: [(String, UInt64, String?)] = [("a", 1, "a1"), ("b", 2, "b2"), ("c", 3, "c3")]
        #expect(try Self.walk([newer, older]) == ["a=a1", "c=c3"])
    }

    @Test func reverseWalksKeysDescending() throws {
        let newer: [(String, UInt64, String?)] = [("c", 9, "c9"), ("a", 8, nil)]
        let older: [(String, UInt64, String?)] = [("c", 3, "c3"), ("b", 2, "b2"), ("a", 1, "a1")]
        #expect(try Self.walk([newer, older], reverse: true) == ["c=c9", "b=b2"])
    }

    @Test func noSourcesAndEmptySourcesGiveNothing() throws {
        #expect(try Self.walk([]) == [])
        #expect(try Self.walk([[], []]) == [])
    }

    /// Up to six sources of keys of varied length that overlap heavily, with tombstones,
    /// against a model: the merge compares each entry with the last key passed where that
    /// key lies in its source, which has moved on once since (MergeSource invariant 2); the
    /// list sources reuse each key buffer every second step, so a merge that read a key
    /// later than that would see another key's bytes there and keep or drop the wrong entry.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func manyOverlappingSourcesMatchAModel(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var sequence: UInt64 = 0
        var newest: [String: (sequence: UInt64, value: String?)] = [:]
        var sources: [[(String, UInt64, String?)]] = []
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            var entries: [String: (UInt64, String?)] = [:]
            for _ in 0..<Int.random(in: 0...60, using: &random) {
                let key = String(repeating: "k", count: Int.random(in: 1...3, using: &random)) + String(Int.random(in: 0..<40, using: &random))
                sequence += 1
                let value = Int.random(in: 0..<5, using: &random) == 0 ? nil : "v\(sequence)"
                entries[key] = (sequence, value)
                if (newest[key]?.sequence ?? 0) < sequence { newest[key] = (sequence, value) }
            }
            sources.append(entries.map { ($0.key, $0.value.0, $0.value.1) })
        }
        for reverse in [false, true] {
            let ordered = sources.map { source in
                let ascending = source.sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
                return reverse ? ascending.reversed() : ascending
            }
            var expected = newest.compactMap { key, entry in entry.value.map { (key, $0) } }
                .sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
                .map { "\($0.0)=\($0.1)" }
            if reverse { expected.reverse() }
            #expect(try Self.walk(ordered, reverse: reverse) == expected, "seed \(seed), reverse \(reverse)")
        }
    }
}
