import StrataFormat
import Testing

// The manifest's format (docs/format/manifest.md): file names, header, version edits.

private func decodeEdit(_ bytes: [UInt8], baseOffset: Int = 0) throws -> VersionEdit {
    try bytes.withUnsafeBytes { try VersionEdit.decode($0, baseOffset: baseOffset) }
}

/// The error decoding `bytes` as a version edit throws, or nil when it decodes.
private func editError(_ bytes: [UInt8], baseOffset: Int = 0) -> FormatError? {
    formatError { _ = try decodeEdit(bytes, baseOffset: baseOffset) }
}

/// The error decoding `bytes` as a manifest header throws, or nil when it decodes.
private func headerError(_ bytes: [UInt8]) -> FormatError? {
    formatError { _ = try bytes.withUnsafeBytes { try ManifestFormat.Header.decode($0) } }
}

/// SplitMix64, so the random round trips are the same on every run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private func roundTrip(_ edit: VersionEdit) throws -> VersionEdit {
    try decodeEdit(edit.encoded())
}

private func meta(
    level: Int = 0, file: UInt64 = 4, size: UInt64 = 4096, entries: UInt64 = 10,
    sequences: ClosedRange<UInt64> = 1...10, smallest: [UInt8] = Array("a".utf8),
    largest: [UInt8] = Array("z".utf8)
) -> SegmentMeta {
    SegmentMeta(
        level: level, fileNumber: file, fileSize: size, entryCount: entries, smallestSequence: sequences.lowerBound,
        largestSequence: sequences.upperBound, smallestKey: smallest, largestKey: largest)
}

/// An addSegment field built by hand, so that decode can be given what the encoder would not write.
private func addField(
    level: UInt64 = 0, file: UInt64 = 4, size: UInt64 = 100, entries: UInt64 = 1,
    smallestSequence: UInt64 = 1, largestSequence: UInt64 = 1,
    smallest: [UInt8] = Array("a".utf8), largest: [UInt8] = Array("b".utf8)
) -> [UInt8] {
    var out: [UInt8] = []
    for value in [4, level, file, size, entries, smallestSequence, largestSequence] { out.appendVarint(value) }
    out.appendVarint(UInt64(smallest.count))
    out += smallest
    out.appendVarint(UInt64(largest.count))
    out += largest
    return out
}

@Suite struct ManifestFileNameTests {
    @Test func namesAreZeroPaddedToTenDigits() {
        #expect(ManifestFormat.fileName(7) == "manifest-0000000007.log")
        #expect(ManifestFormat.temporaryName(7) == "manifest-0000000007.tmp")
        #expect(ManifestFormat.segmentFileName(12) == "seg-0000000012.sst")
        #expect(ManifestFormat.fileName(0) == "manifest-0000000000.log")
        #expect(ManifestFormat.segmentFileName(9_999_999_999) == "seg-9999999999.sst")
    }

    @Test func numbersWiderThanTenDigitsAreWrittenWhole() {
        #expect(ManifestFormat.fileName(12_345_678_901) == "manifest-12345678901.log")
        #expect(ManifestFormat.segmentFileName(UInt64.max) == "seg-18446744073709551615.sst")
        #expect(ManifestFormat.number(fromSegmentName: "seg-18446744073709551615.sst") == UInt64.max)
    }

    @Test func namesParseBack() {
        for number: UInt64 in [0, 1, 7, 42, 9_999_999_999, 10_000_000_000, UInt64.max] {
            #expect(ManifestFormat.number(fromManifestName: ManifestFormat.fileName(number)) == number)
            #expect(ManifestFormat.number(fromTemporaryName: ManifestFormat.temporaryName(number)) == number)
            #expect(ManifestFormat.number(fromSegmentName: ManifestFormat.segmentFileName(number)) == number)
        }
    }

    @Test func eachParserTakesOnlyItsOwnKind() {
        let manifest = ManifestFormat.fileName(3)
        let temporary = ManifestFormat.temporaryName(3)
        let segment = ManifestFormat.segmentFileName(3)
        #expect(ManifestFormat.number(fromManifestName: temporary) == nil)
        #expect(ManifestFormat.number(fromManifestName: segment) == nil)
        #expect(ManifestFormat.number(fromTemporaryName: manifest) == nil)
        #expect(ManifestFormat.number(fromTemporaryName: segment) == nil)
        #expect(ManifestFormat.number(fromSegmentName: manifest) == nil)
        #expect(ManifestFormat.number(fromSegmentName: temporary) == nil)
        // Other files in a store directory.
        for other in ["wal-0000000003.log", "STRATA", "STRATA.tmp", "LOCK"] {
            #expect(ManifestFormat.number(fromManifestName: other) == nil)
            #expect(ManifestFormat.number(fromTemporaryName: other) == nil)
            #expect(ManifestFormat.number(fromSegmentName: other) == nil)
        }
    }

    @Test func wrongPrefixesAndSuffixesAreRejected() {
        for name in [
            "Manifest-0000000003.log", "manifest0000000003.log", "xmanifest-0000000003.log",
            "manifest-0000000003.LOG", "manifest-0000000003.log.tmp", "manifest-0000000003.logx",
            "manifest-0000000003", "0000000003.log", " manifest-0000000003.log"
        ] {
            #expect(ManifestFormat.number(fromManifestName: name) == nil, "\(name)")
        }
        for name in [
            "sg-0000000003.sst", "seg_0000000003.sst", "seg-0000000003.ss", "seg-0000000003.sst~",
            "seg-0000000003.sst.tmp", "SEG-0000000003.sst"
        ] {
            #expect(ManifestFormat.number(fromSegmentName: name) == nil, "\(name)")
        }
        #expect(ManifestFormat.number(fromTemporaryName: "manifest-0000000003.tmp.log") == nil)
    }

    @Test func nonDigitsAreRejected() {
        for digits in [
            "00000000x3", "-000000003", "+000000003", "0000 00003", "0x00000003", "00000003.0",
            "٠٠٠٠٠٠٠٠٠٣", "000000000３", "1e10", "½"
        ] {
            #expect(ManifestFormat.number(fromManifestName: "manifest-\(digits).log") == nil, "\(digits)")
            #expect(ManifestFormat.number(fromTemporaryName: "manifest-\(digits).tmp") == nil, "\(digits)")
            #expect(ManifestFormat.number(fromSegmentName: "seg-\(digits).sst") == nil, "\(digits)")
        }
    }

    @Test func emptyDigitsAreRejected() {
        #expect(ManifestFormat.number(fromManifestName: "manifest-.log") == nil)
        #expect(ManifestFormat.number(fromTemporaryName: "manifest-.tmp") == nil)
        #expect(ManifestFormat.number(fromSegmentName: "seg-.sst") == nil)
        #expect(ManifestFormat.number(fromManifestName: "") == nil)
        #expect(ManifestFormat.number(fromSegmentName: "seg-") == nil)
        #expect(ManifestFormat.number(fromSegmentName: ".sst") == nil)
    }

    @Test func numbersPastUInt64AreRejected() {
        #expect(ManifestFormat.number(fromManifestName: "manifest-18446744073709551616.log") == nil)
        #expect(ManifestFormat.number(fromSegmentName: "seg-99999999999999999999999.sst") == nil)
    }
}

@Suite struct ManifestHeaderTests {
    @Test func encodeDecodeRoundTrip() throws {
        let header = ManifestFormat.Header(fileNumber: 0x0102_0304_0506_0708)
        let bytes = header.encoded()
        #expect(bytes.count == ManifestFormat.headerSize)
        #expect(bytes.count == 32)
        #expect(Array(bytes[0..<8]) == Array("STRATAMF".utf8))
        #expect(Array(bytes[8..<12]) == [1, 0, 1, 0])
        #expect(Array(bytes[12..<16]) == [0, 0, 0, 0])
        #expect(Array(bytes[16..<24]) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(Array(bytes[24..<28]) == [0, 0, 0, 0])
        let stored = UInt32(bytes[28]) | UInt32(bytes[29]) << 8 | UInt32(bytes[30]) << 16 | UInt32(bytes[31]) << 24
        #expect(stored == Checksum.crc32(bytes[0..<28]))
        let decoded = try bytes.withUnsafeBytes { try ManifestFormat.Header.decode($0) }
        #expect(decoded == header)
        #expect(decoded.majorVersion == 1)
        #expect(decoded.minorVersion == 1)
    }

    @Test func extremeFileNumbersRoundTrip() throws {
        for number: UInt64 in [0, 1, UInt64.max] {
            let decoded = try ManifestFormat.Header(fileNumber: number).encoded().withUnsafeBytes { try ManifestFormat.Header.decode($0) }
            #expect(decoded.fileNumber == number)
        }
    }

    @Test func decodeIgnoresBytesAfterTheHeader() throws {
        let bytes = ManifestFormat.Header(fileNumber: 9).encoded() + [1, 2, 3]
        let decoded = try bytes.withUnsafeBytes { try ManifestFormat.Header.decode($0) }
        #expect(decoded.fileNumber == 9)
    }

    @Test func newerMinorVersionIsAccepted() throws {
        let bytes = ManifestFormat.Header(fileNumber: 2, majorVersion: 1, minorVersion: 7).encoded()
        let decoded = try bytes.withUnsafeBytes { try ManifestFormat.Header.decode($0) }
        #expect(decoded.minorVersion == 7)
        #expect(decoded.fileNumber == 2)
    }

    @Test func shortHeaderIsTruncated() {
        let bytes = ManifestFormat.Header(fileNumber: 1).encoded()
        for length in [0, 1, 8, 31] {
            let error = headerError(Array(bytes.prefix(length)))
            #expect(error?.kind == .truncated, "\(length) bytes")
            #expect(error?.offset == 0)
        }
    }

    @Test func badMagicIsReported() {
        var bytes = ManifestFormat.Header(fileNumber: 1).encoded()
        bytes[7] = UInt8(ascii: "X")
        #expect(headerError(bytes)?.kind == .badMagic)
        // Other Strata files are reported as not a manifest, not as damaged.
        let wal = WALFormat.SegmentHeader(segmentNumber: 1).encoded()
        #expect(headerError(wal)?.kind == .badMagic)
        #expect(headerError([UInt8](repeating: 0, count: 32))?.kind == .badMagic)
    }

    @Test func everyDamagedByteIsAChecksumMismatch() {
        let bytes = ManifestFormat.Header(fileNumber: 77).encoded()
        for index in 8..<32 {
            var damaged = bytes
            damaged[index] ^= 0x10
            let error = headerError(damaged)
            #expect(error?.kind == .checksumMismatch, "byte \(index)")
            #expect(error?.offset == 28, "byte \(index)")
        }
    }

    @Test func newerMajorVersionIsUnsupported() {
        let bytes = ManifestFormat.Header(fileNumber: 1, majorVersion: 2, minorVersion: 3).encoded()
        let error = headerError(bytes)
        #expect(error?.kind == .unsupportedVersion(major: 2, minor: 3))
        #expect(error?.offset == 8)
    }

    @Test func checksumIsCheckedBeforeVersion() {
        // A damaged header is reported as damaged even if its version field reads as newer.
        var bytes = ManifestFormat.Header(fileNumber: 1).encoded()
        bytes[8] = 9
        #expect(headerError(bytes)?.kind == .checksumMismatch)
    }
}

@Suite struct VersionEditRoundTripTests {
    @Test func emptyEdit() throws {
        let edit = VersionEdit()
        #expect(edit.encoded().isEmpty)
        #expect(try roundTrip(edit) == edit)
        let decoded = try decodeEdit([])
        #expect(decoded.logNumber == nil && decoded.lastSequence == nil && decoded.nextFileNumber == nil)
        #expect(decoded.added.isEmpty && decoded.removed.isEmpty)
    }

    @Test func scalarsOnly() throws {
        for edit in [
            VersionEdit(logNumber: 3), VersionEdit(lastSequence: 9), VersionEdit(nextFileNumber: 6),
            VersionEdit(logNumber: 3, lastSequence: 9, nextFileNumber: 6),
            VersionEdit(logNumber: 0, lastSequence: 0, nextFileNumber: 0),
            VersionEdit(logNumber: .max, lastSequence: .max, nextFileNumber: .max)
        ] {
            #expect(try roundTrip(edit) == edit)
        }
        #expect(VersionEdit(logNumber: 3, lastSequence: 9, nextFileNumber: 6).encoded() == [1, 3, 2, 9, 3, 6])
        #expect(VersionEdit(lastSequence: 300).encoded() == [2, 0xAC, 0x02])
    }

    @Test func addsAndRemoves() throws {
        let edit = VersionEdit(
            logNumber: 12, lastSequence: 4_000_000_000, nextFileNumber: 40,
            added: [
                meta(level: 1, file: 37, smallest: Array("a".utf8), largest: Array("m".utf8)),
                meta(level: 1, file: 38, smallest: Array("n".utf8), largest: Array("z".utf8)),
                meta(level: 6, file: 39, size: 1 << 40, entries: 1 << 33, sequences: 5...UInt64.max)
            ],
            removed: [(level: 0, fileNumber: 20), (level: 0, fileNumber: 21), (level: 1, fileNumber: 30)])
        let decoded = try roundTrip(edit)
        #expect(decoded == edit)
        #expect(decoded.added.map(\.fileNumber) == [37, 38, 39])
        #expect(decoded.removed.map(\.fileNumber) == [20, 21, 30])
        #expect(decoded.removed.map(\.level) == [0, 0, 1])
    }

    @Test func removalsAreWrittenBeforeAdditions() {
        let edit = VersionEdit(added: [meta(level: 2, file: 9)], removed: [(level: 1, fileNumber: 9)])
        let bytes = edit.encoded()
        #expect(Array(bytes[0..<3]) == [5, 1, 9])
        #expect(bytes[3] == 4)
    }

    @Test func fieldsMayComeInAnyOrderAndTheLastScalarWins() throws {
        var bytes: [UInt8] = addField(file: 8)
        bytes += [5, 2, 7]  // removeSegment level 2 file 7
        bytes += [3, 10, 1, 4]  // nextFileNumber 10, logNumber 4
        bytes += [1, 5]  // logNumber again: 5
        let decoded = try decodeEdit(bytes)
        #expect(decoded.logNumber == 5)
        #expect(decoded.nextFileNumber == 10)
        #expect(decoded.lastSequence == nil)
        #expect(decoded.added.map(\.fileNumber) == [8])
        #expect(decoded.removed.count == 1 && decoded.removed.first?.fileNumber == 7 && decoded.removed.first?.level == 2)
    }

    @Test func everyLevelRoundTrips() throws {
        let edit = VersionEdit(
            added: (0..<ManifestFormat.maxLevels).map { meta(level: $0, file: UInt64(100 + $0)) },
            removed: (0..<ManifestFormat.maxLevels).map { (level: $0, fileNumber: UInt64($0)) })
        #expect(ManifestFormat.maxLevels == 7)
        #expect(try roundTrip(edit) == edit)
    }

    @Test func longKeys() throws {
        let small = [UInt8](repeating: 0x61, count: 16 * 1024)
        let large = small + [0x62]
        let edit = VersionEdit(added: [
            meta(smallest: small, largest: large),
            meta(
                file: 5, smallest: [UInt8](repeating: 7, count: 1 << 16),
                largest: [UInt8](repeating: 7, count: 1 << 16))
        ])
        #expect(try roundTrip(edit) == edit)
    }

    @Test func keysWithZeroAndFFBytes() throws {
        let edit = VersionEdit(added: [
            meta(file: 1, smallest: [0x00], largest: [0xFF]),
            meta(file: 2, smallest: [0x00, 0x00], largest: [0x00, 0x00, 0x00]),
            meta(file: 3, smallest: [0xFF, 0x00, 0xFF], largest: [0xFF, 0xFF]),
            meta(file: 4, smallest: [0x7F], largest: [0x80]),
            meta(file: 5, smallest: [], largest: [0x00]),
            meta(file: 6, smallest: [0xFF], largest: [0xFF])
        ])
        #expect(try roundTrip(edit) == edit)
    }

    @Test func equalKeysAndSequencesAreAllowed() throws {
        let edit = VersionEdit(added: [meta(sequences: 7...7, smallest: Array("k".utf8), largest: Array("k".utf8))])
        #expect(try roundTrip(edit) == edit)
    }

    @Test func manyRandomEditsRoundTrip() throws {
        var random = SeededGenerator(state: 0x5EED)
        func key() -> [UInt8] { (0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } }
        func number() -> UInt64 { UInt64.random(in: 0...UInt64.max, using: &random) >> UInt64.random(in: 0...63, using: &random) }
        for _ in 0..<200 {
            var edit = VersionEdit()
            if Bool.random(using: &random) { edit.logNumber = number() }
            if Bool.random(using: &random) { edit.lastSequence = number() }
            if Bool.random(using: &random) { edit.nextFileNumber = number() }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                edit.removed.append((level: Int.random(in: 0..<7, using: &random), fileNumber: number()))
            }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let keys = [key(), key()].sorted { $0.lexicographicallyPrecedes($1) }
                let sequences = [number(), number()].sorted()
                edit.added.append(
                    SegmentMeta(
                        level: Int.random(in: 0..<7, using: &random), fileNumber: number(), fileSize: number(),
                        entryCount: number(), smallestSequence: sequences[0], largestSequence: sequences[1],
                        smallestKey: keys[0], largestKey: keys[1]))
            }
            #expect(try roundTrip(edit) == edit)
        }
    }
}

@Suite struct VersionEditDecodeFailureTests {
    @Test func tagZeroIsMalformed() {
        let error = editError([1, 2, 0, 1], baseOffset: 100)  // a valid logNumber first
        #expect(error?.kind == .malformed)
        #expect(error?.offset == 102)
    }

    @Test func aSizedFieldCutOffIsTruncated() {
        // From 1.1, tags 6 and up carry their length: one whose body is missing is cut off,
        // whether this reader knows the tag or not.
        for tag: UInt64 in [6, 7, 127, 128, 1 << 40] {
            var bytes: [UInt8] = [1, 2]
            bytes.appendVarint(tag)
            bytes += [1]
            #expect(editError(bytes, baseOffset: 100)?.kind == .truncated, "tag \(tag)")
        }
    }

    @Test func levelOutOfRangeIsMalformed() {
        for level: UInt64 in [7, 8, 255, UInt64.max] {
            let add = editError(addField(level: level))
            #expect(add?.kind == .malformed, "add at level \(level)")
            #expect(add?.offset == 1, "add at level \(level)")
            var remove: [UInt8] = [5]
            remove.appendVarint(level)
            remove += [3]
            let removal = editError([1, 1] + remove, baseOffset: 10)
            #expect(removal?.kind == .malformed, "remove at level \(level)")
            #expect(removal?.offset == 13, "remove at level \(level)")
        }
        #expect(editError(addField(level: 6)) == nil)
        #expect(editError([5, 6, 3]) == nil)
    }

    @Test func truncatedScalarsAreTruncated() {
        for bytes: [UInt8] in [[1], [2], [3], [1, 0x80], [3, 0xFF, 0xFF], [0x81]] {
            #expect(editError(bytes)?.kind == .truncated, "\(bytes)")
        }
    }

    @Test func everyTruncationOfAnAddIsTruncated() {
        let full = addField(
            level: 1, file: 300, size: 70_000, entries: 129, smallestSequence: 1000, largestSequence: 2000,
            smallest: Array("apple".utf8), largest: Array("cherry".utf8))
        #expect(editError(full) == nil)
        for length in 1..<full.count {
            let error = editError(Array(full.prefix(length)))
            #expect(error?.kind == .truncated, "cut at \(length)")
        }
    }

    @Test func everyTruncationOfARemoveIsTruncated() {
        let full: [UInt8] = [5, 1, 0xAC, 0x02]
        #expect(editError(full) == nil)
        for length in 1..<full.count {
            #expect(editError(Array(full.prefix(length)))?.kind == .truncated, "cut at \(length)")
        }
    }

    @Test func overlongKeyLengthIsMalformed() {
        var bytes: [UInt8] = [4, 0, 1, 1, 1, 1, 1]
        bytes.appendVarint((1 << 16) + 1)
        #expect(editError(bytes)?.kind == .malformed)
    }

    @Test func overlongVarintIsMalformed() {
        let bytes: [UInt8] = [1] + [UInt8](repeating: 0xFF, count: 10) + [0x01]
        #expect(editError(bytes)?.kind == .malformed)
    }

    @Test func invertedKeyRangeIsMalformed() {
        let cases: [([UInt8], [UInt8])] = [
            (Array("b".utf8), Array("a".utf8)),
            (Array("ab".utf8), Array("a".utf8)),  // a prefix sorts first
            ([0xFF], [0x00]),
            ([0x80], [0x7F]),  // bytes compare unsigned
            ([0x00], [])
        ]
        for (smallest, largest) in cases {
            let error = editError([2, 9] + addField(smallest: smallest, largest: largest), baseOffset: 50)
            #expect(error?.kind == .malformed, "\(smallest) > \(largest)")
            #expect(error?.offset == 52, "\(smallest) > \(largest)")
        }
    }

    @Test func invertedSequenceRangeIsMalformed() {
        let error = editError([2, 9] + addField(smallestSequence: 6, largestSequence: 5), baseOffset: 50)
        #expect(error?.kind == .malformed)
        #expect(error?.offset == 52)
        #expect(editError(addField(smallestSequence: 1, largestSequence: 0))?.kind == .malformed)
        #expect(editError(addField(smallestSequence: .max, largestSequence: 0))?.kind == .malformed)
    }

    @Test func errorsInALaterFieldAreAtTheirFileOffset() {
        // logNumber, then a remove cut short: the error names the offset of the missing varint.
        let error = editError([1, 7, 5, 0], baseOffset: 39)
        #expect(error?.kind == .truncated)
        #expect(error?.offset == 43)
    }
}

@Suite struct ManifestRecordFramingTests {
    /// A snapshot too big for one block: it is split at the 32 KiB boundary counted from file
    /// offset 0 (the header is the first 32 bytes of block 0), and scans back whole.
    @Test func largeSnapshotSpansBlocksCountedFromTheStartOfTheFile() throws {
        let segments = (0..<400).map { index -> SegmentMeta in
            let name = Array("key-\(1000 + index)".utf8)
            return meta(
                level: 1 + index % 6, file: UInt64(10 + index), smallest: name + [0x00],
                largest: name + [UInt8](repeating: 0xFF, count: 80))
        }
        let snapshot = VersionEdit(logNumber: 2, lastSequence: 5000, nextFileNumber: 410, added: segments)
        let later = VersionEdit(lastSequence: 6000, removed: [(level: 1, fileNumber: 10)])
        #expect(snapshot.encoded().count > WALFormat.blockSize)

        var file = ManifestFormat.Header(fileNumber: 9).encoded()
        let firstEnd = snapshot.encoded().withUnsafeBytes { WALFormat.appendRecord($0, to: &file, fileOffset: 0) }
        later.encoded().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &file, fileOffset: 0) }
        // FIRST at 32, filling block 0; the next fragment starts exactly at 32768.
        #expect(file[32 + 6] == WALFormat.FragmentType.first.rawValue)
        let firstLength = Int(file[32 + 4]) | Int(file[32 + 5]) << 8
        #expect(32 + WALFormat.fragmentHeaderSize + firstLength == WALFormat.blockSize)
        #expect(file[WALFormat.blockSize + 6] != WALFormat.FragmentType.full.rawValue)

        var scanner = WALScanner(bytes: file, start: ManifestFormat.headerSize)
        guard case .record(let first, 32, firstEnd) = scanner.next() else {
            Issue.record("the snapshot did not scan")
            return
        }
        guard case .record(let second, firstEnd, file.count) = scanner.next() else {
            Issue.record("the later edit did not scan")
            return
        }
        #expect(scanner.next() == .end(offset: file.count))
        #expect(try decodeEdit(first) == snapshot)
        #expect(try decodeEdit(second) == later)
    }
}
