import StrataFormat
import Testing

/// Keeps the worked example in docs/format/manifest.md exact: the bytes printed there are the
/// bytes the encoders produce, and they decode back to the edits that made them.
struct ManifestWorkedExampleTests {
    static func hex(_ text: String) -> [UInt8] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { UInt8($0, radix: 16)! }
    }

    static let headerBytes = hex(
        """
        53 54 52 41 54 41 4d 46 01 00 01 00 00 00 00 00 03 00 00 00 00 00 00 00 00 00 00 00 cc fc 87 65
        """)
    static let firstRecordBytes = hex(
        """
        9c d0 46 28 30 00 01 01 02 02 05 03 05 04 00 04 c9 01 05 01 05 05 61 70 70 6c 65 06 63 68 65 72 72 79
        06 10 8c 2f 6e 1a 4b 3d 4f 0e 9a 7c 15 d2 e0 b3 6f 41 07 01 00
        """)
    static let secondRecordBytes = hex(
        """
        be 74 8e 04 1a 00 01 01 03 02 09 03 06 04 00 05 bc 01 04 06 09 06 62 61 6e 61 6e 61 04 64 61 74 65
        """)
    static var fileBytes: [UInt8] { headerBytes + firstRecordBytes + secondRecordBytes }

    static let snapshot = VersionEdit(
        logNumber: 2, lastSequence: 5, nextFileNumber: 5,
        added: [
            SegmentMeta(
                level: 0, fileNumber: 4, fileSize: 201, entryCount: 5, smallestSequence: 1,
                largestSequence: 5, smallestKey: Array("apple".utf8), largestKey: Array("cherry".utf8))
        ],
        storeIdentifier: hex("8c 2f 6e 1a 4b 3d 4f 0e 9a 7c 15 d2 e0 b3 6f 41"), droppedDeletions: 0)
    static let flush = VersionEdit(
        logNumber: 3, lastSequence: 9, nextFileNumber: 6,
        added: [
            SegmentMeta(
                level: 0, fileNumber: 5, fileSize: 188, entryCount: 4, smallestSequence: 6,
                largestSequence: 9, smallestKey: Array("banana".utf8), largestKey: Array("date".utf8))
        ])

    @Test func fileNameMatchesTheDocument() {
        #expect(ManifestFormat.fileName(3) == "manifest-0000000003.log")
        #expect(ManifestFormat.segmentFileName(4) == "seg-0000000004.sst")
        #expect(ManifestFormat.segmentFileName(5) == "seg-0000000005.sst")
    }

    @Test func headerMatchesTheDocument() {
        #expect(ManifestFormat.Header(fileNumber: 3).encoded() == Self.headerBytes)
    }

    @Test func payloadsMatchTheDocument() {
        #expect(Self.snapshot.encoded() == Array(Self.firstRecordBytes[7...]))
        #expect(Self.flush.encoded() == Array(Self.secondRecordBytes[7...]))
        #expect(Self.snapshot.encoded().count == 48)
        #expect(Self.flush.encoded().count == 26)
    }

    @Test func fileMatchesTheDocument() {
        var file = ManifestFormat.Header(fileNumber: 3).encoded()
        let firstEnd = Self.snapshot.encoded().withUnsafeBytes { WALFormat.appendRecord($0, to: &file, fileOffset: 0) }
        #expect(firstEnd == 87)
        let secondEnd = Self.flush.encoded().withUnsafeBytes { WALFormat.appendRecord($0, to: &file, fileOffset: 0) }
        #expect(secondEnd == 120)
        #expect(file == Self.fileBytes)
        #expect(file.count == 120)
    }

    @Test func checksumsCoverWhatTheDocumentSays() {
        let file = Self.fileBytes
        // Header CRC: bytes 0..<28. Fragment CRC: length, type and payload.
        #expect(Self.le32(file, 28) == Checksum.crc32(file[0..<28]))
        #expect(Self.le32(file, 32) == Checksum.crc32(file[36..<87]))
        #expect(Self.le32(file, 87) == Checksum.crc32(file[91..<120]))
    }

    @Test func decodesBackToTheEdits() throws {
        let file = Self.fileBytes
        let header = try file.withUnsafeBytes { try ManifestFormat.Header.decode($0) }
        #expect(header == ManifestFormat.Header(fileNumber: 3))

        var scanner = WALScanner(bytes: file, start: ManifestFormat.headerSize)
        var edits: [VersionEdit] = []
        var offsets: [Int] = []
        scan: while true {
            switch scanner.next() {
            case .record(let payload, let offset, _):
                offsets.append(offset)
                edits.append(try payload.withUnsafeBytes { try VersionEdit.decode($0, baseOffset: offset + WALFormat.fragmentHeaderSize) })
            case .end(let offset):
                #expect(offset == 120)
                break scan
            case .invalid(let offset, let reason):
                Issue.record("invalid record at \(offset): \(reason)")
                break scan
            }
        }
        #expect(offsets == [32, 87])
        #expect(edits == [Self.snapshot, Self.flush])
    }

    @Test func replayGivesTheStateTheDocumentDescribes() throws {
        var scanner = WALScanner(bytes: Self.fileBytes, start: ManifestFormat.headerSize)
        var state = ReplayedState()
        while case .record(let payload, _, _) = scanner.next() {
            state.apply(try payload.withUnsafeBytes { try VersionEdit.decode($0) })
        }
        #expect(state.logNumber == 3)
        #expect(state.lastSequence == 9)
        #expect(state.nextFileNumber == 6)
        #expect(state.level0NewestFirst == [5, 4])
    }

    @Test func tornSecondRecordLeavesTheSnapshot() throws {
        // Cut the file inside the second record: the scanner reports the record at 87 as
        // cut off, and the state is the snapshot's.
        let torn = Array(Self.fileBytes[0..<111])
        var scanner = WALScanner(bytes: torn, start: ManifestFormat.headerSize)
        var state = ReplayedState()
        guard case .record(let payload, _, _) = scanner.next() else {
            Issue.record("the first record did not scan")
            return
        }
        state.apply(try payload.withUnsafeBytes { try VersionEdit.decode($0) })
        guard case .invalid(let offset, _) = scanner.next() else {
            Issue.record("the torn record was not reported")
            return
        }
        #expect(offset == 87)
        #expect(state.logNumber == 2)
        #expect(state.lastSequence == 5)
        #expect(state.nextFileNumber == 5)
        #expect(state.level0NewestFirst == [4])
    }
}

extension ManifestWorkedExampleTests {
    static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    /// The replay rules of docs/format/manifest.md ("Replay"), enough for the example.
    struct ReplayedState {
        var logNumber: UInt64 = 0
        var lastSequence: UInt64 = 0
        var nextFileNumber: UInt64 = 0
        var segments: [SegmentMeta] = []

        mutating func apply(_ edit: VersionEdit) {
            if let value = edit.logNumber { logNumber = value }
            if let value = edit.lastSequence { lastSequence = value }
            if let value = edit.nextFileNumber { nextFileNumber = value }
            for removal in edit.removed {
                segments.removeAll { $0.level == removal.level && $0.fileNumber == removal.fileNumber }
            }
            segments += edit.added
        }

        var level0NewestFirst: [UInt64] {
            segments.filter { $0.level == 0 }.map(\.fileNumber).sorted(by: >)
        }
    }
}
