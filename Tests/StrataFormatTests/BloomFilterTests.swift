import StrataFormat
import Testing

struct BloomFilterTests {
    @Test func noFalseNegativesAndFewFalsePositives() throws {
        var builder = BloomFilter.Builder(bitsPerKey: 10)
        let keyCount = 10_000
        for i in 0..<keyCount { builder.add(Array("member-\(i)".utf8)) }
        let filter = try BloomFilter(decoding: builder.finish().encoded())
        #expect(filter.probes == 7)
        // Whole 64-byte lines: 100,000 bits round up to 196 lines.
        #expect(filter.bits.count == (keyCount * 10 + 511) / 512 * 64)
        for i in 0..<keyCount { #expect(filter.mayContain(Array("member-\(i)".utf8))) }
        var falsePositives = 0
        let probes = 20_000
        for i in 0..<probes where filter.mayContain(Array("stranger-\(i)".utf8)) { falsePositives += 1 }
        let rate = Double(falsePositives) / Double(probes)
        #expect(rate < 0.02, "false-positive rate \(rate)")
    }

    @Test func everyProbeOfAKeyFallsInOneLine() throws {
        // The point of the blocked layout: a filter holding one key has its bits in one
        // 64-byte line.
        var single = BloomFilter.Builder(bitsPerKey: 10)
        single.add(Array("lonely".utf8))
        let one = single.finish()
        let touchedLines = Set(one.bits.indices.filter { one.bits[$0] != 0 }.map { $0 / 64 })
        #expect(touchedLines.count == 1)
    }

    @Test func aFilterThatIsNotWholeLinesIsRefused() {
        #expect(throws: FormatError.self) { try BloomFilter(decoding: [UInt8](repeating: 0, count: 9) + [7]) }
    }

    @Test func smallFiltersGetTheMinimumSize() throws {
        var builder = BloomFilter.Builder()
        builder.add(Array("only".utf8))
        let encoded = builder.finish().encoded()
        #expect(encoded.count == BloomFilter.minimumBits / 8 + 1)
        #expect(encoded.last == 7)
        let filter = try BloomFilter(decoding: encoded)
        #expect(filter.mayContain(Array("only".utf8)))
        #expect(!BloomFilter.Builder().finish().mayContain(Array("anything".utf8)))
    }

    @Test func badProbeCountIsMalformed() {
        #expect(throws: FormatError.self) { _ = try BloomFilter(decoding: [0, 0, 0, 0, 0, 0, 0, 0, 31]) }
        #expect(throws: FormatError.self) { _ = try BloomFilter(decoding: [0, 0, 0, 0, 0, 0, 0, 0, 0]) }
        #expect(throws: FormatError.self) { _ = try BloomFilter(decoding: [7]) }
    }

    @Test func hashIsPinned() {
        // Fixed by the format (docs/format/segment.md): changing the hash would make filters
        // written earlier give false negatives.
        #expect(BloomFilter.hash(Array("a".utf8)) == 0x82a2_a958_a9be_ce5b)
        #expect(BloomFilter.hash(Array("b".utf8)) == 0x6e67_3288_764a_d2d0)
    }
}
