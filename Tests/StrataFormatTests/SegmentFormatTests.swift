import StrataFormat
import Testing

/// Deterministic randomness, so a failure reproduces from its seed.
struct SegmentTestRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Catches the `FormatError` a decoding step throws.
func formatError(_ body: () throws -> Void) -> FormatError? {
    do {
        try body()
        return nil
    } catch let error as FormatError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

/// A seeded set of entries (several versions per key, some tombstones) in segment order,
/// and the reference answers the segment must give.
struct SegmentModel {
    var entries: [SegmentEntry] = []
    var versions: [[UInt8]: [SegmentEntry]] = [:]  // newest first
    var userKeys: [[UInt8]] = []
    var maxSequence: UInt64 = 0

    init(seed: UInt64, keyCount: Int) {
        var rng = SegmentTestRandom(seed: seed)
        var keySet = Set<[UInt8]>()
        while keySet.count < keyCount {
            keySet.insert(Array("key-\(Int.random(in: 0..<1_000_000, using: &rng))".utf8))
        }
        userKeys = keySet.sorted { $0.lexicographicallyPrecedes($1) }
        var counts = userKeys.map { _ in Int.random(in: 1...4, using: &rng) }
        let total = counts.reduce(0, +)
        var sequences = Array(UInt64(1)...UInt64(total))
        sequences.shuffle(using: &rng)
        maxSequence = UInt64(total)
        var next = 0
        for (i, key) in userKeys.enumerated() {
            var list = [SegmentEntry]()
            for _ in 0..<counts[i] {
                let sequence = sequences[next]
                next += 1
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    list.append(SegmentEntry(userKey: key, sequence: sequence, kind: .tombstone))
                } else {
                    // Repetitive values, so zlib has something to save.
                    let value = Array(String(repeating: "v\(sequence)-", count: Int.random(in: 0...15, using: &rng)).utf8)
                    list.append(SegmentEntry(userKey: key, sequence: sequence, kind: .value, value: value))
                }
            }
            list.sort { $0.sequence > $1.sequence }
            versions[key] = list
            entries.append(contentsOf: list)
            counts[i] = 0
        }
    }

    func build(compressionLevel: Int32?) throws -> [UInt8] {
        var builder = SegmentBuilder(compressionLevel: compressionLevel)
        for entry in entries {
            try builder.add(userKey: entry.userKey, sequence: entry.sequence, kind: entry.kind, value: entry.value)
        }
        return builder.finish()
    }

    func expected(_ key: [UInt8], at sequence: UInt64) -> SegmentLookup {
        guard let entry = versions[key]?.first(where: { $0.sequence <= sequence }) else { return .absent }
        return entry.kind == .value ? .value(entry.value) : .tombstone
    }
}

struct SegmentFormatTests {
    static let model = SegmentModel(seed: 42, keyCount: 1200)

    @Test(arguments: [false, true])
    func roundTripMatchesTheModel(compressed: Bool) throws {
        let model = Self.model
        let bytes = try model.build(compressionLevel: compressed ? 6 : nil)
        let reader = try SegmentReader(bytes)
        #expect(reader.footer.entryCount == UInt64(model.entries.count))
        #expect(reader.footer.smallestSequence == 1)
        #expect(reader.footer.largestSequence == model.maxSequence)
        #expect(reader.dataBlockHandles.count > 10)
        let zlibBlocks = reader.dataBlockHandles.filter { bytes[Int($0.offset + $0.size)] == SegmentFormat.Compression.zlib.rawValue }
        #expect(compressed ? zlibBlocks.count == reader.dataBlockHandles.count : zlibBlocks.isEmpty)

        // Forward iteration yields every entry, in order.
        #expect(try reader.entries() == model.entries)

        // get at sequences around every version, and below and above all of them.
        var rng = SegmentTestRandom(seed: 7)
        for key in model.userKeys where Int.random(in: 0..<3, using: &rng) == 0 {
            var sequences: [UInt64] = [0, model.maxSequence, SegmentFormat.maxSequence, UInt64.max]
            for version in model.versions[key]! {
                sequences.append(version.sequence)
                sequences.append(version.sequence - 1)
            }
            for sequence in sequences {
                #expect(try reader.get(key, atSequence: sequence) == model.expected(key, at: sequence))
            }
        }
        for i in 0..<300 {
            let absent = Array("nokey-\(i)".utf8)
            #expect(try reader.get(absent, atSequence: model.maxSequence) == .absent)
        }
    }

    /// A segment written a stretch at a time while it is built (a flush's or merge's way) is
    /// byte for byte the file built whole: each block's handle names its offset in the file,
    /// not in the stretch the builder held. Drained aligned (as flushes and merges do, to
    /// 2 MiB), every stretch starts and ends at a multiple of the alignment and the bytes past
    /// the last multiple wait for the next drain; alignment 1 hands out everything held.
    @Test(arguments: [
        (false, 1, 1), (false, 5_000, 1), (true, 1, 1), (true, 5_000, 1), (false, 4_096, 4_096), (false, 10_000, 10_000),
        (true, 4_096, 4_096)
    ])
    func aSegmentDrainedWhileBuiltIsTheSameFile(compressed: Bool, drainBytes: Int, alignment: Int) throws {
        let model = Self.model
        let level: Int32? = compressed ? 6 : nil
        let whole = try model.build(compressionLevel: level)
        var builder = SegmentBuilder(compressionLevel: level)
        var file: [UInt8] = []
        var drains = 0
        for entry in model.entries {
            try builder.add(userKey: entry.userKey, sequence: entry.sequence, kind: entry.kind, value: entry.value)
            guard builder.bufferedByteCount >= drainBytes else { continue }
            let held = builder.drainedByteCount + builder.bufferedByteCount
            builder.drain(alignedTo: alignment) { bytes, offset in
                #expect(offset == file.count, "a stretch handed out at \(offset), after \(file.count) bytes")
                #expect(offset % alignment == 0 && bytes.count % alignment == 0, "a stretch of \(bytes.count) bytes at \(offset)")
                file.append(contentsOf: bytes)
            }
            #expect(builder.drainedByteCount == file.count && builder.drainedByteCount == held / alignment * alignment)
            #expect(builder.bufferedByteCount == held - file.count && builder.bufferedByteCount < alignment)
            drains += 1
        }
        #expect(drains > 3, "the model's segment was drained only \(drains) times")
        #expect(builder.estimatedSize >= file.count)
        let rest = builder.finish()
        file.append(contentsOf: rest)
        #expect(file == whole)
        #expect(try SegmentReader(file).entries() == model.entries)
    }

    @Test func seekFindsTheFirstEntryAtOrAfterTheTarget() throws {
        let model = Self.model
        let reader = try SegmentReader(try model.build(compressionLevel: nil))
        var rng = SegmentTestRandom(seed: 99)
        for _ in 0..<400 {
            let key: [UInt8] =
                Int.random(in: 0..<2, using: &rng) == 0
                ? model.userKeys.randomElement(using: &rng)!
                : Array("key-\(Int.random(in: 0..<1_000_000, using: &rng))".utf8)
            let sequence = UInt64.random(in: 0...(model.maxSequence + 1), using: &rng)
            let expected = model.entries.first { entry in
                entry.userKey == key ? entry.sequence <= sequence : !entry.userKey.lexicographicallyPrecedes(key)
            }
            var cursor = try reader.seek(userKey: key, sequence: sequence)
            let first = try cursor.next()
            #expect(first == expected)
            if let first, let index = model.entries.firstIndex(of: first), index + 1 < model.entries.count {
                #expect(try cursor.next() == model.entries[index + 1])
            }
        }
        var past = try reader.seek(userKey: [0xFF])
        #expect(try past.next() == nil)
        var start = try reader.seek(userKey: [])
        #expect(try start.next() == model.entries.first)
    }

    /// The block builder writes entries in place into a buffer it keeps between blocks; its
    /// bytes must be the spec's (docs/format/segment.md, "Blocks"), which this test encodes
    /// the plain way, field by field. Keys of 0 to 300 bytes share prefixes of any length,
    /// values run from empty to 70,000 bytes (past every size the buffer had), and the same
    /// builder makes three blocks in a row.
    @Test func aBlockBuiltInPlaceHasTheSpecsBytes() throws {
        let seed: UInt64 = 0xB10C
        var random = SegmentTestRandom(seed: seed)
        var builder = SegmentBlockBuilder()
        for round in 0..<3 {
            var expected = [UInt8]()
            var restarts = [UInt32]()
            var previous = [UInt8]()
            var sinceRestart = 0
            var key = [UInt8]()
            for index in 0..<(40 + round * 30) {
                // Ascending keys: keep a prefix of the last one, then bytes that sort after it.
                key = Array(key.prefix(Int(random.next() % UInt64(key.count + 1))))
                key.append(UInt8(truncatingIfNeeded: 0x80 + index))
                key += (0..<Int(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let valueLength = index == 20 ? 70_000 : Int(random.next() % 5000) * Int(random.next() % 2)
                let value = (0..<valueLength).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                var shared = 0
                let bytesSinceRestart = expected.count - Int(restarts.last ?? 0)
                if index == 0 || sinceRestart == SegmentFormat.restartInterval || bytesSinceRestart + key.count + value.count > SegmentFormat.restartBytes {
                    restarts.append(UInt32(expected.count))
                    sinceRestart = 0
                } else {
                    while shared < min(previous.count, key.count) && previous[shared] == key[shared] { shared += 1 }
                }
                Varint.append(UInt64(shared), to: &expected)
                Varint.append(UInt64(key.count - shared), to: &expected)
                Varint.append(UInt64(value.count), to: &expected)
                expected += key[shared...]
                expected += value
                previous = key
                sinceRestart += 1
                builder.add(key: key, value: value)
                #expect(builder.lastKey == key, "seed \(seed), round \(round), entry \(index)")
            }
            for restart in restarts { expected.appendLittleEndian(restart) }
            expected.appendLittleEndian(UInt32(restarts.count))
            #expect(builder.estimatedSize == expected.count, "seed \(seed), round \(round)")
            #expect(builder.finish() == expected, "seed \(seed), round \(round)")
            #expect(builder.isEmpty && builder.lastKey.isEmpty, "seed \(seed), round \(round)")
        }
    }

    @Test func blockRestartsAndSeek() throws {
        // Every 16th entry, as files written before 2026-11-26 restart (the writer's default
        // is now 8; readers follow whatever spacing a block has).
        var builder = SegmentBlockBuilder(restartInterval: 16)
        var keys = [[UInt8]]()
        for i in 0..<100 {
            let key = SegmentFormat.internalKey(userKey: Array("user-\(1000 + i)".utf8), sequence: UInt64(i + 1), kind: .value)
            keys.append(key)
            builder.add(key: key, value: [UInt8(i)])
        }
        let contents = builder.finish()
        #expect(builder.isEmpty)
        let block = try SegmentBlockReader(contents, blockOffset: 1000)
        #expect(block.restartCount == 7)  // entries 0, 16, ..., 96
        #expect(try block.entries().map(\.key) == keys)
        for i in [0, 1, 15, 16, 17, 50, 95, 96, 99] {
            var cursor = try block.seek(keys[i])
            #expect(try cursor.next()?.value == [UInt8(i)])
        }
        var end = try block.seek(SegmentFormat.internalKey(userKey: Array("user-2".utf8), sequence: 0, kind: .tombstone))
        #expect(try end.next() == nil)

        let empty = SegmentBlockBuilder()
        var emptyBuilder = empty
        let emptyContents = emptyBuilder.finish()
        #expect(emptyContents == [0, 0, 0, 0, 1, 0, 0, 0])
        #expect(try SegmentBlockReader(emptyContents).entries().isEmpty)

        // A restart count that does not fit is reported at the count.
        var damaged = contents
        damaged[damaged.count - 1] = 0xFF
        #expect(formatError { _ = try SegmentBlockReader(damaged, blockOffset: 1000) }?.offset == 1000 + contents.count - 4)

        // A restart that points inside an entry is found by a scan.
        var shifted = contents
        shifted[contents.count - 4 - 4 * 7 + 4] &+= 1
        let shiftedBlock = try SegmentBlockReader(shifted, blockOffset: 1000)
        #expect(formatError { _ = try shiftedBlock.entries() }?.kind == .malformed)
    }

    @Test func emptySegmentRoundTrips() throws {
        var builder = SegmentBuilder()
        let reader = try SegmentReader(builder.finish())
        #expect(reader.footer.entryCount == 0)
        #expect(reader.dataBlockHandles.isEmpty)
        #expect(try reader.entries().isEmpty)
        #expect(try reader.get(Array("a".utf8), atSequence: 10) == .absent)
    }

    @Test func outOfOrderAddIsRefused() throws {
        var builder = SegmentBuilder()
        try builder.put(Array("b".utf8), Array("1".utf8), sequence: 5)
        // Smaller user key.
        #expect(throws: SegmentBuilderError.self) { try builder.put(Array("a".utf8), [], sequence: 9) }
        // Same user key, higher sequence.
        #expect(throws: SegmentBuilderError.self) { try builder.delete(Array("b".utf8), sequence: 6) }
        // Same user key and sequence.
        do {
            try builder.delete(Array("b".utf8), sequence: 5)
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.kind == .outOfOrder)
        }
        #expect(throws: SegmentBuilderError.self) { try builder.put(Array("c".utf8), [], sequence: SegmentFormat.maxSequence + 1) }
        try builder.delete(Array("b".utf8), sequence: 4)
        try builder.put(Array("c".utf8), [], sequence: 1)
        let entries = try SegmentReader(builder.finish()).entries()
        #expect(entries.map(\.sequence) == [5, 4, 1])
    }

    /// Small blocks so there are many of each kind to damage.
    static func smallSegment() throws -> [UInt8] {
        var builder = SegmentBuilder(blockSize: 256)
        for i in 0..<200 {
            try builder.put(Array("key-\(1000 + i)".utf8), Array("value-\(i)".utf8), sequence: UInt64(i + 1))
        }
        return builder.finish()
    }

    @Test func flippedByteInEachKindOfBlockIsReportedAtTheBlock() throws {
        let bytes = try Self.smallSegment()
        let reader = try SegmentReader(bytes)
        let footerStart = bytes.count - SegmentFormat.footerSize

        // Data block: found by the scan and by a get that reads the block.
        let handle = reader.dataBlockHandles[3]
        for position in [Int(handle.offset), Int(handle.offset + handle.size / 2), Int(handle.offset + handle.size), Int(handle.offset + handle.size) + 4] {
            var damaged = bytes
            damaged[position] ^= 0x40
            let damagedReader = try SegmentReader(damaged)
            let scanError = formatError { _ = try damagedReader.entries() }
            #expect(scanError?.kind == .checksumMismatch)
            #expect(scanError?.offset == Int(handle.offset))
            let firstKeyOfBlock = try reader.dataBlock(3).entries()[0].key.dropLast(8)
            let getError = formatError { _ = try damagedReader.get(Array(firstKeyOfBlock), atSequence: 1000) }
            #expect(getError?.kind == .checksumMismatch)
            #expect(getError?.offset == Int(handle.offset))
        }

        // Filter and index blocks: found when the reader is made.
        for blockHandle in [reader.footer.filterHandle, reader.footer.indexHandle] {
            var damaged = bytes
            damaged[Int(blockHandle.offset + blockHandle.size / 2)] ^= 0x01
            let error = formatError { _ = try SegmentReader(damaged) }
            #expect(error?.kind == .checksumMismatch)
            #expect(error?.offset == Int(blockHandle.offset))
        }

        // Footer: its own CRC.
        var damaged = bytes
        damaged[footerStart + 50] ^= 0x01
        let error = formatError { _ = try SegmentReader(damaged) }
        #expect(error?.kind == .checksumMismatch)
        #expect(error?.offset == footerStart + 72)
    }

    @Test func wrongMagicNewerVersionAndTruncation() throws {
        let bytes = try Self.smallSegment()
        let reader = try SegmentReader(bytes)
        let footerStart = bytes.count - SegmentFormat.footerSize

        var wrongMagic = bytes
        wrongMagic[footerStart] = UInt8(ascii: "X")
        #expect(formatError { _ = try SegmentReader(wrongMagic) }?.kind == .badMagic)

        var newer = reader.footer
        newer.majorVersion = 2
        newer.minorVersion = 3
        let newerBytes = Array(bytes[0..<footerStart]) + newer.encoded()
        let error = formatError { _ = try SegmentReader(newerBytes) }
        #expect(error?.kind == .unsupportedVersion(major: 2, minor: 3))
        #expect(error?.offset == footerStart + 8)

        // A newer minor version only adds what old readers may ignore.
        var newerMinor = reader.footer
        newerMinor.minorVersion = 7
        #expect(try SegmentReader(Array(bytes[0..<footerStart]) + newerMinor.encoded()).entries().count == 200)

        #expect(formatError { _ = try SegmentReader(Array(bytes.suffix(40))) }?.kind == .truncated)
        // Cutting the front off leaves the handles pointing at the wrong bytes.
        #expect(formatError { _ = try SegmentReader(Array(bytes.dropFirst(100))) } != nil)
    }

    static func hex(_ text: String) -> [UInt8] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { UInt8($0, radix: 16)! }
    }

    /// The worked example in docs/format/segment.md.
    @Test func workedExampleMatchesTheDocument() throws {
        var builder = SegmentBuilder()
        try builder.put(Array("a".utf8), Array("x".utf8), sequence: 2)
        try builder.delete(Array("a".utf8), sequence: 1)
        try builder.put(Array("b".utf8), Array("yz".utf8), sequence: 3)
        let bytes = builder.finish()
        let expected = Self.hex(Self.workedExample)
        #expect(bytes == expected, "\(bytes.map { String($0, radix: 16) }.joined(separator: " "))")
        let reader = try SegmentReader(bytes)
        #expect(try reader.get(Array("a".utf8), atSequence: 2) == .value(Array("x".utf8)))
        #expect(try reader.get(Array("a".utf8), atSequence: 1) == .tombstone)
        #expect(try reader.get(Array("b".utf8), atSequence: 2) == .absent)
    }

    static let workedExample = """
        00 09 01 61 01 02 00 00 00 00 00 00 78
        01 08 00 00 01 00 00 00 00 00 00
        00 09 02 62 01 03 00 00 00 00 00 00 79 7a
        00 00 00 00
        01 00 00 00
        00 ee a8 50 0b
        06 00 00 40 02 00 00 00 00 00 00 00 00 00 00 00
        20 01 00 00 00 30 00 00 00 00 00 00 00 10 00 00
        00 00 00 00 00 00 00 00 00 00 c8 01 00 00 00 00
        00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 00
        07
        00 6d de 51 cf
        00 09 02 63 ff ff ff ff ff ff ff ff 00 2e
        00 00 00 00
        01 00 00 00
        00 75 0a 8d d9
        53 54 52 41 54 41 53 47
        01 00 00 00
        00 00 00 00
        79 00 00 00 00 00 00 00
        16 00 00 00 00 00 00 00
        33 00 00 00 00 00 00 00
        41 00 00 00 00 00 00 00
        03 00 00 00 00 00 00 00
        01 00 00 00 00 00 00 00
        03 00 00 00 00 00 00 00
        d5 20 29 63
        """
}
