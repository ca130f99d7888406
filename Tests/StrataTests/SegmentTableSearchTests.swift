// The index search of an open segment file: which data block may hold a key.

@_spi(Engine) import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import Strata

struct SegmentTableSearchTests {
    static func key(_ i: Int) -> [UInt8] {
        let digits = String(i)
        return Array((String(repeating: "0", count: 16 - digits.count) + digits).utf8)
    }

    /// Writes a segment of `count` 16-digit keys with 100-byte values and opens it.
    static func withTable(count: Int, _ body: (SegmentTable) throws -> Void) async throws {
        try await withTable(keys: (0..<count).map(key), body)
    }

    /// Writes a segment of `keys` (ascending) with 100-byte values and opens it.
    static func withTable(keys: [[UInt8]], _ body: (SegmentTable) throws -> Void) async throws {
        let count = keys.count
        try await withTemporaryDirectory(label: "segment-search") { directory in
            var builder = SegmentBuilder()
            for (i, key) in keys.enumerated() {
                try builder.add(userKey: key, sequence: UInt64(i + 1), kind: .value, value: Array(repeating: UInt8(i % 251), count: 100))
            }
            let bytes = builder.finish()
            let fileSystem = POSIXFileSystem()
            let number: UInt64 = 7
            let handle = try fileSystem.openFile(fileSystem.path(directory.path(""), ManifestFormat.segmentFileName(number)), create: true)
            try handle.write(bytes, at: 0)
            try handle.sync()
            try handle.close()
            let meta = SegmentMeta(
                level: 1, fileNumber: number, fileSize: UInt64(bytes.count), entryCount: UInt64(count),
                smallestSequence: 1, largestSequence: UInt64(count), smallestKey: keys[0], largestKey: keys[count - 1])
            let table = try SegmentTable.open(meta, directory: directory.path(""), fileSystem: fileSystem, cache: BlockCache(capacity: 1 << 20))
            try body(table)
        }
    }

    /// The last separator is a short key past the file's last ("1" after "0000…"). Counted
    /// in the shared prefix, it left none, so every search walked the whole index; it must
    /// not count.
    @Test func separatorsShareTheKeysPrefixDespiteTheShortLastOne() async throws {
        try await Self.withTable(count: 5_000) { table in
            #expect(table.blockCount > 100)
            #expect(table.tail.index.last.map { $0.separator.count } ?? 0 < 16, "the last separator is the short successor")
            #expect(table.commonPrefix.count >= 12, "separators of keys 0..<5000 share twelve zeros, got \(table.commonPrefix.count)")
        }
    }

    /// The narrowed search gives the same block as a plain one over every separator, for
    /// every key of the file, keys between and around them, and any sequence.
    @Test func blockIndexAgreesWithALinearSearch() async throws {
        let keys = (0..<5_000).map(Self.key)
        var probes: [[UInt8]] = keys
        probes += [[], Array("0".utf8), Self.key(5_000), Self.key(99_999_999), Array("1".utf8), Array("2".utf8), [0xFF]]
        probes += keys.map { $0 + [0x00] }
        try await Self.checkBlockIndex(keys: keys, probes: probes)
    }

    /// Keys in three groups that differ only past the eight bytes each separator's word
    /// holds: long runs of separators share one word, and such a run crosses many stretches
    /// of the sampled fences (one sample per 16), so both ends of a run must be found there.
    @Test func blockIndexAgreesWithALinearSearchWhenFenceWordsRepeat() async throws {
        let keys = (0..<3).flatMap { group in
            (0..<2_000).map { i in [UInt8(ascii: "a") + UInt8(group)] + Array("-shared-".utf8) + Self.key(i) }
        }
        var probes = keys + keys.map { $0 + [0x00] }
        probes += [[], Array("a".utf8), Array("b-shared-".utf8), Array("b-shared-~".utf8), Array("d".utf8), [0xFF]]
        try await Self.checkBlockIndex(keys: keys, probes: probes)
    }

    /// Groups of keys that share the bytes past the common prefix for one to six blocks' worth:
    /// the separators' words repeat in runs of about one to six, across the few steps the
    /// search takes forward to find where a run ends and the second search it falls back on.
    @Test func blockIndexAgreesWithALinearSearchWhenShortRunsOfFenceWordsRepeat() async throws {
        let keys = (0..<90).flatMap { group in
            let digits = String(group)
            let word = String(repeating: "0", count: 8 - digits.count) + digits
            return (0..<(30 * (1 + group % 6))).map { i in Array("k\(word)-".utf8) + Self.key(i) }
        }
        var probes = keys + keys.map { $0 + [0x00] }
        probes += [[], Array("k".utf8), Array("k00000042".utf8), Array("k00000042~".utf8), Array("l".utf8)]
        try await Self.checkBlockIndex(keys: keys, probes: probes)
    }

    static func checkBlockIndex(keys: [[UInt8]], probes: [[UInt8]]) async throws {
        try await withTable(keys: keys) { table in
            #expect(table.blockCount > 100)
            let separators = table.tail.index.map(\.separator)
            func expected(_ userKey: [UInt8], _ sequence: UInt64) -> Int {
                let target = SegmentFormat.trailer(sequence: min(sequence, SegmentFormat.maxSequence), kind: .value) | 0xFF
                return separators.firstIndex { separator in
                    let user = separator.dropLast(8)
                    let trailer = separator.suffix(8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).littleEndian }
                    return user.withUnsafeBytes { u in userKey.withUnsafeBytes { k in compareInternal(u, trailer, k, target) >= 0 } }
                } ?? separators.count
            }
            var wrong: [String] = []
            for probe in probes {
                for sequence in [UInt64(0), 1, 2_500, SegmentFormat.maxSequence] {
                    let got = probe.withUnsafeBytes { table.blockIndex(atOrAfter: $0, sequence: sequence) }
                    if got != expected(probe, sequence) { wrong.append("\(String(decoding: probe, as: UTF8.self)) @\(sequence): \(got)") }
                }
            }
            let count = wrong.count
            #expect(count == 0, "\(wrong.prefix(5))")
            let buffer = KeyBuffer()
            for i in stride(from: 0, to: keys.count, by: 7) {
                let found = try keys[i].withUnsafeBytes { try table.get($0, hash: nil, at: SegmentFormat.maxSequence, keyBuffer: buffer) }
                #expect(found == .value(Array(repeating: UInt8(i % 251), count: 100)), "key \(i)")
            }
        }
    }
}
