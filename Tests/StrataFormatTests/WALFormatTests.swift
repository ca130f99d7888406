import StrataFormat
import Testing

/// Builds WAL segment images in memory.
private struct SegmentBuilder {
    var bytes: [UInt8]
    /// (offset, end) of every record appended, in order.
    var records: [(offset: Int, end: Int)] = []

    init(segmentNumber: UInt64 = 1) {
        bytes = WALFormat.SegmentHeader(segmentNumber: segmentNumber).encoded()
    }

    /// Appends a record whose payload is `count` bytes of a pattern seeded by `seed`.
    @discardableResult
    mutating func append(count: Int, seed: UInt8 = 1) -> [UInt8] {
        let payload = Self.payload(count: count, seed: seed)
        append(payload)
        return payload
    }

    mutating func append(_ payload: [UInt8]) {
        let before = bytes.count
        let end = payload.withUnsafeBytes { WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
        #expect(end == bytes.count)
        // The record starts after any block-tail padding.
        let room = WALFormat.blockSize - before % WALFormat.blockSize
        let start = room < WALFormat.fragmentHeaderSize ? before + room : before
        records.append((start, end))
    }

    /// Pads with zeros to `size`, as a preallocated segment is.
    mutating func zeroFill(to size: Int) {
        if bytes.count < size { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
    }

    static func payload(count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) | 1 }
    }
}

/// Every step a scanner produces until `.end` or `.invalid`.
private func scanAll(_ bytes: [UInt8]) -> [WALScanner.Step] {
    var scanner = WALScanner(bytes: bytes)
    var steps: [WALScanner.Step] = []
    while true {
        let step = scanner.next()
        steps.append(step)
        if case .record = step { continue }
        return steps
    }
}

/// The type byte of the fragment at `offset`.
private func fragmentType(_ bytes: [UInt8], at offset: Int) -> WALFormat.FragmentType? {
    WALFormat.FragmentType(rawValue: bytes[offset + 6])
}

private func fragmentLength(_ bytes: [UInt8], at offset: Int) -> Int {
    Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
}

@Suite struct WALHeaderTests {
    @Test func encodeDecodeRoundTrip() throws {
        let header = WALFormat.SegmentHeader(segmentNumber: 0x0102_0304_0506_0708)
        let bytes = header.encoded()
        #expect(bytes.count == WALFormat.headerSize)
        #expect(Array(bytes[0..<8]) == Array("STRATAWL".utf8))
        let decoded = try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) }
        #expect(decoded == header)
        #expect(decoded.majorVersion == WALFormat.majorVersion)
        #expect(decoded.minorVersion == WALFormat.minorVersion)
        // The checksum covers the 28 bytes before it.
        let stored = UInt32(bytes[28]) | UInt32(bytes[29]) << 8 | UInt32(bytes[30]) << 16 | UInt32(bytes[31]) << 24
        #expect(stored == Checksum.crc32(bytes[0..<28]))
    }

    @Test func decodeIgnoresBytesAfterTheHeader() throws {
        let bytes = WALFormat.SegmentHeader(segmentNumber: 9).encoded() + [1, 2, 3]
        let decoded = try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) }
        #expect(decoded.segmentNumber == 9)
    }

    @Test func newerMinorVersionIsAccepted() throws {
        let bytes = WALFormat.SegmentHeader(segmentNumber: 3, minorVersion: 7).encoded()
        let decoded = try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) }
        #expect(decoded.minorVersion == 7)
    }

    @Test func shortHeaderIsTruncated() {
        let bytes = Array(WALFormat.SegmentHeader(segmentNumber: 1).encoded().prefix(31))
        let error = #expect(throws: FormatError.self) { try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) } }
        #expect(error?.kind == .truncated)
        let empty = #expect(throws: FormatError.self) { try [UInt8]().withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) } }
        #expect(empty?.kind == .truncated)
    }

    @Test func badMagic() {
        var bytes = WALFormat.SegmentHeader(segmentNumber: 1).encoded()
        bytes[0] = UInt8(ascii: "X")
        let error = #expect(throws: FormatError.self) { try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) } }
        #expect(error?.kind == .badMagic)
        #expect(error?.offset == 0)

        // Another store file (the identity file) is not a WAL segment either.
        let identity = StoreIdentityFormat.encode() + [UInt8](repeating: 0, count: 20)
        let other = #expect(throws: FormatError.self) { try identity.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) } }
        #expect(other?.kind == .badMagic)
    }

    @Test(arguments: [8, 12, 16, 23, 24, 28, 31])
    func badChecksum(flippedByte: Int) {
        var bytes = WALFormat.SegmentHeader(segmentNumber: 1).encoded()
        bytes[flippedByte] ^= 0x40
        let error = #expect(throws: FormatError.self) { try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) } }
        #expect(error?.kind == .checksumMismatch)
        #expect(error?.offset == 28)
    }

    @Test func newerMajorVersionIsUnsupported() {
        let bytes = WALFormat.SegmentHeader(segmentNumber: 5, majorVersion: 3, minorVersion: 1).encoded()
        let error = #expect(throws: FormatError.self) { try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) } }
        #expect(error?.kind == .unsupportedVersion(major: 3, minor: 1))
        #expect(error?.message.contains("3.1") == true)
    }

    @Test func damagedHeaderOfNewerVersionIsADamagedHeader() {
        // Checksum before version: a flipped bit must not pass for a version number.
        var bytes = WALFormat.SegmentHeader(segmentNumber: 5, majorVersion: 2).encoded()
        bytes[20] ^= 1
        let error = #expect(throws: FormatError.self) { try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) } }
        #expect(error?.kind == .checksumMismatch)
    }
}

@Suite struct WALRecordTests {
    @Test func emptyRecord() {
        var segment = SegmentBuilder()
        segment.append(count: 0)
        #expect(segment.bytes.count == WALFormat.headerSize + WALFormat.fragmentHeaderSize)
        #expect(fragmentType(segment.bytes, at: WALFormat.headerSize) == .full)
        let steps = scanAll(segment.bytes)
        #expect(
            steps == [
                .record(payload: [], offset: WALFormat.headerSize, end: WALFormat.headerSize + 7),
                .end(offset: WALFormat.headerSize + 7)
            ])
    }

    @Test func smallRecordsRoundTrip() {
        var segment = SegmentBuilder()
        let payloads = (1...20).map { SegmentBuilder.payload(count: $0 * 13, seed: UInt8($0)) }
        for payload in payloads { segment.append(payload) }
        let steps = scanAll(segment.bytes)
        #expect(steps.count == payloads.count + 1)
        for (index, payload) in payloads.enumerated() {
            #expect(steps[index] == .record(payload: payload, offset: segment.records[index].offset, end: segment.records[index].end))
        }
        #expect(steps.last == .end(offset: segment.bytes.count))
    }

    @Test func recordExactlyFillingTheFirstBlock() {
        var segment = SegmentBuilder()
        let size = WALFormat.blockSize - WALFormat.headerSize - WALFormat.fragmentHeaderSize
        let payload = segment.append(count: size)
        #expect(segment.bytes.count == WALFormat.blockSize)
        #expect(fragmentType(segment.bytes, at: WALFormat.headerSize) == .full)
        let next = segment.append(count: 10, seed: 9)
        // The next record starts the next block with no padding.
        #expect(segment.records[1].offset == WALFormat.blockSize)
        #expect(fragmentType(segment.bytes, at: WALFormat.blockSize) == .full)
        #expect(
            scanAll(segment.bytes) == [
                .record(payload: payload, offset: WALFormat.headerSize, end: WALFormat.blockSize),
                .record(payload: next, offset: WALFormat.blockSize, end: WALFormat.blockSize + 17),
                .end(offset: WALFormat.blockSize + 17)
            ])
    }

    @Test func recordOneByteTooBigForTheBlockSpillsIntoTheNext() {
        var segment = SegmentBuilder()
        let size = WALFormat.blockSize - WALFormat.headerSize - WALFormat.fragmentHeaderSize + 1
        let payload = segment.append(count: size)
        #expect(fragmentType(segment.bytes, at: WALFormat.headerSize) == .first)
        #expect(fragmentType(segment.bytes, at: WALFormat.blockSize) == .last)
        #expect(fragmentLength(segment.bytes, at: WALFormat.blockSize) == 1)
        #expect(segment.bytes.count == WALFormat.blockSize + 8)
        #expect(
            scanAll(segment.bytes) == [
                .record(payload: payload, offset: WALFormat.headerSize, end: WALFormat.blockSize + 8),
                .end(offset: WALFormat.blockSize + 8)
            ])
    }

    @Test func recordSpanningSeveralBlocks() {
        var segment = SegmentBuilder()
        let small = segment.append(count: 100, seed: 3)
        let big = segment.append(count: 4 * WALFormat.blockSize + 5_000, seed: 4)
        let after = segment.append(count: 50, seed: 5)
        let bytes = segment.bytes
        let bigStart = segment.records[1].offset
        #expect(fragmentType(bytes, at: bigStart) == .first)
        #expect(fragmentType(bytes, at: WALFormat.blockSize) == .middle)
        #expect(fragmentType(bytes, at: 2 * WALFormat.blockSize) == .middle)
        #expect(fragmentType(bytes, at: 3 * WALFormat.blockSize) == .middle)
        #expect(fragmentType(bytes, at: 4 * WALFormat.blockSize) == .last)
        #expect(fragmentLength(bytes, at: WALFormat.blockSize) == WALFormat.blockSize - WALFormat.fragmentHeaderSize)
        #expect(
            scanAll(bytes) == [
                .record(payload: small, offset: segment.records[0].offset, end: segment.records[0].end),
                .record(payload: big, offset: bigStart, end: segment.records[1].end),
                .record(payload: after, offset: segment.records[2].offset, end: segment.records[2].end),
                .end(offset: bytes.count)
            ])
    }

    /// Leaves `remaining` bytes in the first block, then appends a record.
    private func segmentLeaving(_ remaining: Int) -> (SegmentBuilder, first: [UInt8], second: [UInt8]) {
        var segment = SegmentBuilder()
        let firstSize = WALFormat.blockSize - remaining - WALFormat.headerSize - WALFormat.fragmentHeaderSize
        let first = segment.append(count: firstSize, seed: 7)
        #expect(segment.bytes.count == WALFormat.blockSize - remaining)
        let second = segment.append(count: 40, seed: 8)
        return (segment, first, second)
    }

    @Test(arguments: 1...6)
    func blockTailTooShortForAFragmentIsPadded(remaining: Int) {
        let (segment, first, second) = segmentLeaving(remaining)
        let bytes = segment.bytes
        // The tail is a zero trailer and the record starts the next block.
        #expect(bytes[(WALFormat.blockSize - remaining)..<WALFormat.blockSize].allSatisfy { $0 == 0 })
        #expect(segment.records[1].offset == WALFormat.blockSize)
        #expect(fragmentType(bytes, at: WALFormat.blockSize) == .full)
        #expect(
            scanAll(bytes) == [
                .record(payload: first, offset: WALFormat.headerSize, end: WALFormat.blockSize - remaining),
                .record(payload: second, offset: WALFormat.blockSize, end: WALFormat.blockSize + 47),
                .end(offset: WALFormat.blockSize + 47)
            ])
    }

    @Test func blockTailOfExactlyAFragmentHeaderHoldsAnEmptyFirstFragment() {
        let (segment, first, second) = segmentLeaving(WALFormat.fragmentHeaderSize)
        let bytes = segment.bytes
        let start = WALFormat.blockSize - WALFormat.fragmentHeaderSize
        #expect(segment.records[1].offset == start)
        #expect(fragmentType(bytes, at: start) == .first)
        #expect(fragmentLength(bytes, at: start) == 0)
        #expect(fragmentType(bytes, at: WALFormat.blockSize) == .last)
        #expect(
            scanAll(bytes) == [
                .record(payload: first, offset: WALFormat.headerSize, end: start),
                .record(payload: second, offset: start, end: WALFormat.blockSize + 47),
                .end(offset: WALFormat.blockSize + 47)
            ])
    }

    @Test(arguments: [1, 3, 6])
    func appendRecordPadsWhenTheBufferStartsNearABlockEnd(remaining: Int) {
        // The caller's buffer is empty and will be written at a file offset near a block end.
        var buffer: [UInt8] = []
        let payload: [UInt8] = [1, 2, 3]
        let fileOffset = 5 * WALFormat.blockSize - remaining
        let end = payload.withUnsafeBytes { WALFormat.appendRecord($0, to: &buffer, fileOffset: fileOffset) }
        #expect(buffer.count == remaining + 7 + 3)
        #expect(buffer.prefix(remaining).allSatisfy { $0 == 0 })
        #expect(end == 5 * WALFormat.blockSize + 10)
        #expect(fragmentType(buffer, at: remaining) == .full)
    }

    @Test func appendRecordAccountsForBytesAlreadyInTheBuffer() {
        // fileOffset + buffer.count is where the record goes.
        var buffer = [UInt8](repeating: 0xEE, count: 10)
        let fileOffset = WALFormat.blockSize - 14
        let end = [UInt8](repeating: 9, count: 20).withUnsafeBytes {
            WALFormat.appendRecord($0, to: &buffer, fileOffset: fileOffset)
        }
        // 4 bytes remained: padded, then one FULL fragment in the next block.
        #expect(buffer.count == 10 + 4 + 7 + 20)
        #expect(end == WALFormat.blockSize + 27)
        #expect(buffer[10..<14].allSatisfy { $0 == 0 })
    }

    @Test func zeroBytesAfterTheRecordsAreTheEnd() {
        var segment = SegmentBuilder()
        segment.append(count: 30)
        segment.append(count: 40)
        let end = segment.bytes.count
        segment.zeroFill(to: 3 * WALFormat.blockSize)
        var scanner = WALScanner(bytes: segment.bytes)
        guard case .record = scanner.next(), case .record = scanner.next() else {
            Issue.record("expected two records")
            return
        }
        #expect(scanner.next() == .end(offset: end))
        #expect(scanner.isZero(from: end))
        #expect(!scanner.isZero(from: end - 1))
        #expect(scanner.isZero(from: segment.bytes.count + 10))
    }

    @Test func emptySegmentIsAtEnd() {
        let header = WALFormat.SegmentHeader(segmentNumber: 1).encoded()
        #expect(scanAll(header) == [.end(offset: WALFormat.headerSize)])
        var zeroed = header
        zeroed += [UInt8](repeating: 0, count: 1_000)
        #expect(scanAll(zeroed) == [.end(offset: WALFormat.headerSize)])
    }

    @Test func fewerBytesThanAFragmentHeaderAtTheEndIsTheEnd() {
        var segment = SegmentBuilder()
        segment.append(count: 10)
        let end = segment.bytes.count
        segment.bytes += [0, 0, 0]
        // Too short for a fragment header: the data ends where the records do.
        #expect(scanAll(segment.bytes).last == .end(offset: end))
    }

    @Test(arguments: [0, 4, 5, 6, 7, 20, 36])
    func flippedByteIsInvalidAtTheRecordOffset(offsetInRecord: Int) {
        var segment = SegmentBuilder()
        let first = segment.append(count: 30, seed: 1)
        segment.append(count: 30, seed: 2)
        segment.append(count: 30, seed: 3)
        let damaged = segment.records[1].offset
        var bytes = segment.bytes
        bytes[damaged + offsetInRecord] ^= 0x10
        let steps = scanAll(bytes)
        #expect(steps.count == 2)
        #expect(steps.first == .record(payload: first, offset: segment.records[0].offset, end: segment.records[0].end))
        guard case .invalid(let offset, let reason) = steps.last else {
            Issue.record("expected .invalid, got \(String(describing: steps.last))")
            return
        }
        #expect(offset == damaged)
        #expect(!reason.isEmpty)
    }

    @Test func flippedByteInALaterFragmentIsInvalidAtTheRecordStart() {
        var segment = SegmentBuilder()
        segment.append(count: 100)
        segment.append(count: 2 * WALFormat.blockSize, seed: 2)
        let recordStart = segment.records[1].offset
        var bytes = segment.bytes
        // Inside the MIDDLE fragment's payload, in the second block.
        bytes[WALFormat.blockSize + 500] ^= 0x01
        guard case .invalid(let offset, _) = scanAll(bytes).last else {
            Issue.record("expected .invalid")
            return
        }
        #expect(offset == recordStart)
    }

    @Test func recordCutOffByTheEndOfTheBytesIsInvalid() {
        var segment = SegmentBuilder()
        segment.append(count: 10)
        segment.append(count: WALFormat.blockSize, seed: 2)
        let start = segment.records[1].offset
        // Cut in the second block: the FIRST fragment is whole, the LAST is gone.
        let cut = Array(segment.bytes.prefix(WALFormat.blockSize + 3))
        guard case .invalid(let offset, _) = scanAll(cut).last else {
            Issue.record("expected .invalid")
            return
        }
        #expect(offset == start)
        // Cut inside a single FULL fragment.
        let partial = Array(segment.bytes.prefix(segment.records[0].end - 2))
        guard case .invalid(let offset2, _) = scanAll(partial).last else {
            Issue.record("expected .invalid")
            return
        }
        #expect(offset2 == WALFormat.headerSize)
    }

    @Test func recordCutOffByZeroBytesIsInvalid() {
        var segment = SegmentBuilder()
        segment.append(count: 10)
        segment.append(count: WALFormat.blockSize, seed: 2)
        var bytes = segment.bytes
        // Zero the LAST fragment, as if its write never reached the disk.
        for index in WALFormat.blockSize..<bytes.count { bytes[index] = 0 }
        guard case .invalid(let offset, _) = scanAll(bytes).last else {
            Issue.record("expected .invalid")
            return
        }
        #expect(offset == segment.records[1].offset)
    }

    @Test func unknownFragmentTypeIsInvalid() {
        var segment = SegmentBuilder()
        segment.append(count: 10)
        var bytes = segment.bytes
        bytes[WALFormat.headerSize + 6] = 9
        #expect(scanAll(bytes).count == 1)
        guard case .invalid(let offset, _) = scanAll(bytes).first else {
            Issue.record("expected .invalid")
            return
        }
        #expect(offset == WALFormat.headerSize)
    }

    @Test func nonZeroGarbageAfterTheLastRecordIsInvalid() {
        var segment = SegmentBuilder()
        segment.append(count: 10)
        let end = segment.bytes.count
        segment.bytes += [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0, 0x11]
        guard case .invalid(let offset, _) = scanAll(segment.bytes).last else {
            Issue.record("expected .invalid")
            return
        }
        #expect(offset == end)
    }

    @Test func continuationWithoutAFirstFragmentIsInvalidWithoutResync() {
        var segment = SegmentBuilder()
        segment.append(count: 2 * WALFormat.blockSize)
        // Start scanning at the second block, inside the record.
        var scanner = WALScanner(bytes: segment.bytes, start: WALFormat.blockSize)
        guard case .invalid(let offset, _) = scanner.next() else {
            Issue.record("expected .invalid")
            return
        }
        #expect(offset == WALFormat.blockSize)
    }

}
