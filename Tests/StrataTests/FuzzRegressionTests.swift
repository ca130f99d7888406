@_spi(Engine) import StrataFormat

@testable import StrataVerifier

// What the store-file fuzz targets do with one input (docs/fuzzing.md), and the test that
// replays every kept input through the same code. `scripts/fuzz` compiles this file into the
// fuzz binaries with STRATA_FUZZ defined, so the fuzzer and the test can never run different
// decode paths; the test half is left out there.
#if !STRATA_FUZZ
    import Foundation
    import StrataTestSupport
    import Testing
#endif

/// One function per fuzz target. Each reads its input the ways the store and the verifier
/// read that kind of file, and then reads it again as the structure inside the file (a
/// record's payload, a data block, a filter): mutated files rarely get past their checksums,
/// and a checksum says nothing about what a buggy or newer writer put inside. Any thrown
/// error is fine; a trap, an out-of-bounds read or a broken round trip is a finding.
enum StoreFileFuzzing {
    static let targets = ["wal", "segment-engine", "segment-verifier", "manifest", "identity"]

    static func body(for target: String) -> ([UInt8]) -> Void {
        switch target {
        case "wal": wal
        case "segment-engine": segmentEngine
        case "segment-verifier": segmentVerifier
        case "manifest": manifest
        case "identity": identity
        default: preconditionFailure("no store-file fuzz target \(target)")
        }
    }

    // MARK: WAL

    /// A WAL segment as recovery reads it (not the last segment, so the scan stops at the
    /// first damage) and as the verifier reads it (the last segment, so damage is judged by
    /// searching for a later record); the input as one record's batch payload; and the input
    /// framed as a segment's records (`framedRecords`), checked against the manifest's last
    /// sequence its first 8 bytes give.
    static func wal(_ bytes: [UInt8]) {
        walSegment(bytes, lastSequence: nil)
        decodeBatch(bytes)
        if bytes.count >= 8 {
            let framed = framedRecords(WALFormat.SegmentHeader(segmentNumber: 1).encoded(), bytes[8...])
            walSegment(framed, lastSequence: littleEndian(bytes[0..<8]))
        }
    }

    static func walSegment(_ bytes: [UInt8], lastSequence: UInt64?) {
        _ = WALTail.isIncompleteSegment(bytes)
        _ = try? withBorrowedBytes(bytes) { raw throws(FormatError) in try WALFormat.SegmentHeader.decode(raw) }
        _ = WALSegmentReader.read(bytes, later: { nil }, sequenceFloor: lastSequence ?? 0) { payload, _ in decodeBatch(payload) }
        var check = WALCheck(lastSequence: lastSequence)
        if !check.checkIncomplete(name: "wal-0000000001.log", bytes: bytes) {
            check.check(name: "wal-0000000001.log", number: 1, bytes: bytes, later: nil)
        }
    }

    /// Decodes a batch as recovery does: the header, then every operation, reading each key
    /// and value byte so that the address sanitizer sees any borrowed bytes out of bounds.
    static func decodeBatch(_ payload: [UInt8]) {
        payload.withUnsafeBytes { raw in
            guard (try? BatchFormat.decodeHeader(raw)) != nil else { return }
            var sink: UInt64 = 0
            _ = try? BatchFormat.decode(raw, maxKeyBytes: WALCheck.maxKeyBytes, maxValueBytes: WALCheck.maxValueBytes) { kind, key, value in
                sink &+= UInt64(kind.rawValue) &+ sum(key) &+ (value.map(sum) ?? 0)
            }
            keep(sink)
        }
    }

    // MARK: Segment, as the engine reads it

    /// A segment file as `SegmentTable` reads it: the footer from the last 76 bytes, the tail
    /// (filter and index) from where the footer says it starts, then each data block in
    /// place when it is stored uncompressed (checksum and restart array checked, then
    /// borrowed as a mapped file's bytes would be) and copied otherwise, walked and searched
    /// with `BlockCursor`; point reads go through the filter and the index as the engine's
    /// do. The same for the input framed as a segment's only data block, and as its index
    /// block; and the input as a filter block.
    static func segmentEngine(_ bytes: [UInt8]) {
        engineSegment(bytes)
        engineSegment(segmentAround(dataBlock: bytes))
        engineSegment(framedSegment(dataBlock: fixedDataBlock, indexBlock: bytes))
        if let filter = try? BloomFilter(decoding: bytes) {
            filter.prefetchLine(hash: 0)
            var sink: UInt64 = 0
            for key: [UInt8] in [[], [0], [0x61]] where filter.mayContain(key) { sink &+= 1 }
            keep(sink)
        }
    }

    static func engineSegment(_ bytes: [UInt8]) {
        let file = FuzzMappedFile(bytes)
        guard let tail = engineTail(file) else { return }
        var keys: [[UInt8]] = []
        for i in tail.index.indices {
            if let view = try? mappedBlock(i, tail, file) { walk(view, keys: &keys) }
            if let view = try? copiedBlock(i, tail, file) { walk(view, keys: &keys) }
        }
        for key in keys + [[], [0xFF]] {
            for sequence in [SegmentFormat.maxSequence, 1] { engineGet(key, sequence, tail, file) }
        }
    }

    static func engineTail(_ file: FuzzMappedFile) -> SegmentTail? {
        let size = file.bytes.count
        guard size >= SegmentFormat.footerSize else { return nil }
        let footerBytes = UnsafeRawBufferPointer(rebasing: file.bytes[(size - SegmentFormat.footerSize)...])
        guard let footer = try? SegmentFormat.Footer.decode(footerBytes) else { return nil }
        let start = SegmentTail.start(of: footer)
        guard start < size else { return nil }
        return try? SegmentTail(decoding: UnsafeRawBufferPointer(rebasing: file.bytes[start...]), tailOffset: start)
    }

    /// The name the mapped blocks' views report, alive for the whole run (`BlockView` rule 2).
    static let fuzzFileName = BlockFileName("fuzz")

    /// Data block `i` as the engine reads it from a mapped file.
    static func mappedBlock(_ i: Int, _ tail: SegmentTail, _ file: FuzzMappedFile) throws(FormatError) -> BlockView? {
        let handle = tail.index[i].handle
        let start = Int(handle.offset)
        let size = Int(handle.size)
        let stored = UnsafeRawBufferPointer(rebasing: file.bytes[start..<(start + size + SegmentFormat.blockTrailerSize)])
        guard stored[size] == SegmentFormat.Compression.none.rawValue else { return nil }
        _ = try SegmentFormat.verifyBlock(stored, what: "data block")
        let contents = UnsafeRawBufferPointer(rebasing: stored[0..<size])
        _ = try BlockView.checkRestarts(contents, fileOffset: start, fileName: "fuzz")
        return BlockView(checked: contents, mapping: file, fileOffset: start, name: fuzzFileName)
    }

    /// Data block `i` as the engine reads it without a mapping: read, checked, inflated when
    /// compressed, and copied into a `DataBlock`.
    static func copiedBlock(_ i: Int, _ tail: SegmentTail, _ file: FuzzMappedFile) throws(FormatError) -> BlockView {
        let handle = tail.index[i].handle
        let start = Int(handle.offset)
        let stored = UnsafeRawBufferPointer(rebasing: file.bytes[start..<(start + Int(handle.size) + SegmentFormat.blockTrailerSize)])
        let contents = try SegmentFormat.readBlock(stored, handle: SegmentFormat.BlockHandle(offset: 0, size: handle.size), what: "data block").contents
        return try DataBlock(contents: contents, fileOffset: start, fileName: "fuzz").view
    }

    /// Every entry of a block, then seeks for some of its keys; collects a few user keys.
    static func walk(_ view: BlockView, keys: inout [[UInt8]]) {
        var sink: UInt64 = 0
        var cursor = BlockCursor(block: view, keyBuffer: KeyBuffer())
        while (try? cursor.next()) == true {
            sink &+= sum(cursor.userKey) &+ cursor.sequence &+ (cursor.isTombstone ? 1 : 0) &+ sum(cursor.value)
            if keys.count < 6 { keys.append(Array(cursor.userKey)) }
        }
        for key in keys.suffix(3) + [[], [0xFF]] {
            for sequence in [UInt64.max, 0] {
                var seeker = BlockCursor(block: view, keyBuffer: KeyBuffer())
                if (try? key.withUnsafeBytes { try seeker.seek(userKey: $0, sequence: sequence) }) == true {
                    sink &+= sum(seeker.userKey) &+ sum(seeker.value)
                }
            }
        }
        keep(sink)
    }

    /// A point read as `SegmentTable.get` does it: filter, first block whose separator is at
    /// or after the key, a seek there, and the next block's first entry when the seek runs
    /// off the end.
    static func engineGet(_ key: [UInt8], _ sequence: UInt64, _ tail: SegmentTail, _ file: FuzzMappedFile) {
        guard tail.filter.mayContain(hash: BloomFilter.hash(key)) else { return }
        let target = SegmentFormat.seekKey(userKey: key, sequence: sequence)
        var low = 0
        var high = tail.index.count
        while low < high {
            let mid = (low + high) / 2
            if SegmentFormat.compareInternalKeys(tail.index[mid].separator, target) < 0 { low = mid + 1 } else { high = mid }
        }
        guard low < tail.index.count, let view = try? mappedBlock(low, tail, file) ?? copiedBlock(low, tail, file) else { return }
        var cursor = BlockCursor(block: view, keyBuffer: KeyBuffer())
        var found = (try? key.withUnsafeBytes { try cursor.seek(userKey: $0, sequence: sequence) }) == true
        if !found, low + 1 < tail.index.count, let next = try? mappedBlock(low + 1, tail, file) ?? copiedBlock(low + 1, tail, file) {
            cursor = BlockCursor(block: next, keyBuffer: KeyBuffer())
            found = (try? cursor.next()) == true
        }
        if found { keep(sum(cursor.value)) }
    }

    // MARK: Segment, as the verifier reads it

    /// A segment file as the verifier checks it (every block through the strict reader,
    /// against a manifest entry), and through `SegmentReader`'s point reads and seeks. The
    /// same for the input framed as a segment's only data block, and as its index block.
    static func segmentVerifier(_ bytes: [UInt8]) {
        verifierSegment(bytes)
        verifierSegment(segmentAround(dataBlock: bytes))
        verifierSegment(framedSegment(dataBlock: fixedDataBlock, indexBlock: bytes))
    }

    static func verifierSegment(_ bytes: [UInt8]) {
        let meta = SegmentMeta(
            level: 1, fileNumber: 1, fileSize: UInt64(bytes.count), entryCount: 1, smallestSequence: 1, largestSequence: 1,
            smallestKey: [0x61], largestKey: [0x7A])
        _ = SegmentCheck.check(name: "seg-0000000001.sst", bytes: bytes, meta: meta, lastSequence: 1)
        guard let reader = try? SegmentReader(bytes) else { return }
        var sink: UInt64 = 0
        var keys: [[UInt8]] = [[], [0xFF]]
        var cursor = reader.makeCursor()
        while let entry = try? cursor.next(), keys.count < 8 { keys.append(entry.userKey) }
        _ = try? reader.entries()
        for key in keys {
            for sequence in [SegmentFormat.maxSequence, 1] {
                if case .value(let value)? = try? reader.get(key, atSequence: sequence) { sink &+= UInt64(value.count) }
                var seeker = try? reader.seek(userKey: key, sequence: sequence)
                if let entry = try? seeker?.next() { sink &+= entry.sequence }
            }
        }
        keep(sink)
    }

    // MARK: Manifest and identity

    /// A manifest as the store loads it (header, records with the damage rules, each record's
    /// edit) and as the verifier checks it (the same, then the replay of every edit); the
    /// input as one record's edit, which must survive a round trip through its encoder; and
    /// the input framed as a manifest's records (`framedRecords`).
    static func manifest(_ bytes: [UInt8]) {
        manifestFile(bytes)
        if let edit = try? withBorrowedBytes(bytes, { raw throws(FormatError) in try VersionEdit.decode(raw) }) {
            let again = try? withBorrowedBytes(edit.encoded()) { raw throws(FormatError) in try VersionEdit.decode(raw) }
            precondition(again == edit, "a decoded version edit does not decode the same after encoding")
        }
        manifestFile(framedRecords(ManifestFormat.Header(fileNumber: 1).encoded(), bytes[...]))
    }

    static func manifestFile(_ bytes: [UInt8]) {
        let header = try? withBorrowedBytes(bytes) { raw throws(FormatError) in try ManifestFormat.Header.decode(raw) }
        _ = ManifestRecordReader.read(bytes) { payload, offset in
            _ = try? withBorrowedBytes(payload) { raw throws(FormatError) in try VersionEdit.decode(raw, baseOffset: offset) }
        }
        _ = ManifestCheck.check(name: "manifest-0000000001.log", number: header?.fileNumber ?? 1, bytes: bytes)
    }

    /// The `STRATA` identity file, and the input as the name of a file in a store directory
    /// (recovery and the verifier sort a directory's files by these parsers).
    static func identity(_ bytes: [UInt8]) {
        _ = try? StoreIdentityFormat.validate(bytes)
        let name = String(decoding: bytes, as: UTF8.self)
        for number in [
            WALFormat.number(fromName: name), ManifestFormat.number(fromManifestName: name),
            ManifestFormat.number(fromTemporaryName: name), ManifestFormat.number(fromSegmentName: name)
        ] {
            if let number { precondition(ManifestFormat.number(fromSegmentName: ManifestFormat.segmentFileName(number)) == number) }
        }
    }

    // MARK: Framing

    // Mutated files rarely keep valid checksums, so most of what a reader does after its
    // checksum checks would be out of the fuzzer's reach. These wrap the input in the
    // framing the format checksums, so the checks pass and the bytes inside are the fuzzer's.

    /// A log (WAL segment or manifest): `header`, then one record for each piece of `bytes`,
    /// a piece being a length byte and that many bytes.
    static func framedRecords(_ header: [UInt8], _ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var file = header
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let end = min(bytes.endIndex, i + 1 + Int(bytes[i]))
            let piece = Array(bytes[(i + 1)..<end])
            piece.withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &file, fileOffset: 0) }
            i = end
        }
        return file
    }

    /// A segment file of the given data block and index block, with a filter that lets every
    /// lookup through and a footer that says what `framedSegment` callers cannot know: one
    /// entry, any sequence.
    static func framedSegment(dataBlock: [UInt8], indexBlock: [UInt8]) -> [UInt8] {
        var file: [UInt8] = []
        _ = SegmentFormat.appendBlock(dataBlock, compressionLevel: nil, to: &file)
        let filterHandle = SegmentFormat.appendBlock([UInt8](repeating: 0xFF, count: 64) + [7], compressionLevel: nil, to: &file)
        let indexHandle = SegmentFormat.appendBlock(indexBlock, compressionLevel: nil, to: &file)
        let footer = SegmentFormat.Footer(
            indexHandle: indexHandle, filterHandle: filterHandle, entryCount: 1, smallestSequence: 0, largestSequence: SegmentFormat.maxSequence)
        return file + footer.encoded()
    }

    /// The segment `framedSegment` makes around a data block: one index entry for it.
    static func segmentAround(dataBlock: [UInt8]) -> [UInt8] {
        var index = SegmentBlockBuilder()
        var handle: [UInt8] = []
        SegmentFormat.BlockHandle(offset: 0, size: UInt64(dataBlock.count)).appendVarints(to: &handle)
        index.add(key: [0xFF, 0xFF] + [UInt8](repeating: 0xFF, count: 8), value: handle)
        return framedSegment(dataBlock: dataBlock, indexBlock: index.finish())
    }

    /// A valid data block of three keys, for `framedSegment` around an index block.
    static let fixedDataBlock: [UInt8] = {
        var block = SegmentBlockBuilder(restartInterval: 2)
        for (i, key) in ["a", "b", "c"].enumerated() {
            block.add(key: SegmentFormat.internalKey(userKey: Array(key.utf8), sequence: UInt64(3 - i), kind: .value), value: [UInt8(i)])
        }
        return block.finish()
    }()

    /// The index block of a segment that holds `fixedDataBlock` alone: a seed for the input
    /// framed as an index block.
    static let fixedIndexBlock: [UInt8] = {
        var index = SegmentBlockBuilder()
        var handle: [UInt8] = []
        SegmentFormat.BlockHandle(offset: 0, size: UInt64(fixedDataBlock.count)).appendVarints(to: &handle)
        index.add(key: SegmentFormat.internalKey(userKey: [0x64], sequence: SegmentFormat.maxSequence, kind: .value), value: handle)
        return index.finish()
    }()

    // MARK: Helpers

    static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func sum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var total: UInt64 = 0
        for byte in bytes { total &+= UInt64(byte) }
        return total
    }

    /// Keeps a value the optimizer would otherwise let a read be dropped for.
    @inline(never)
    static func keep(_ value: UInt64) {
        if value == 0x5EED_F00D_5EED_F00D { print("") }
    }
}

/// The input in memory the harness owns, as a mapped segment file is: `BlockView`s borrow
/// its bytes and keep it alive. Allocated at exactly the input's size, so the address
/// sanitizer catches a read past the end of the file.
final class FuzzMappedFile {
    let bytes: UnsafeRawBufferPointer
    private let storage: UnsafeMutableRawBufferPointer

    init(_ contents: [UInt8]) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(contents.count, 1), alignment: 8)
        contents.withUnsafeBytes { storage.copyMemory(from: $0) }
        self.storage = storage
        bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[0..<contents.count])
    }

    deinit {
        storage.deallocate()
    }
}

#if !STRATA_FUZZ
    /// Every input kept for the store-file fuzz targets, seeds and crashes alike, goes back
    /// through the target's function here, so a crash the fuzzer found and that was fixed
    /// stays fixed without libFuzzer. `scripts/fuzz replay TARGET` finds which input traps.
    @Suite struct FuzzRegressionTests {
        static var corpusRoot: URL {
            URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent()  // StrataTests
                .deletingLastPathComponent()  // Tests
                .deletingLastPathComponent()  // repository root
                .appendingPathComponent("Fixtures/fuzz")
        }

        static func inputs(_ target: String) throws -> [URL] {
            let directory = corpusRoot.appendingPathComponent(target)
            guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
            return try walker.compactMap { $0 as? URL }.filter { try $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true }
        }

        @Test(arguments: StoreFileFuzzing.targets)
        func everyKeptInputDecodesWithoutTrapping(target: String) throws {
            let inputs = try Self.inputs(target)
            #expect(!inputs.isEmpty, "Fixtures/fuzz/\(target) holds no inputs")
            let body = StoreFileFuzzing.body(for: target)
            for input in inputs { body(try fileBytes(atPath: input.path)) }
        }

        static func crash(_ target: String, _ name: String) throws -> [UInt8] {
            try fileBytes(atPath: corpusRoot.appendingPathComponent("\(target)/crashes/\(name)").path)
        }

        /// Index handles whose offsets and sizes add up to the filter block's offset only by
        /// wrapping round 2^64 are damage, not a block the engine may read.
        @Test func indexHandlesThatWrapRoundAreRefused() throws {
            let bytes = try Self.crash("segment-engine", "index-handles-wrap-around.sst")
            let error = #expect(throws: FormatError.self) { try SegmentReader(bytes) }
            #expect(error?.message.contains("points past the data blocks") == true)
            let findings = SegmentCheck.check(name: "seg-0000000001.sst", bytes: bytes, meta: nil, lastSequence: nil)
            #expect(findings.map(\.code) == [FindingCode.segment(.malformed)])
        }

        /// The largest sequence there is, from a manifest or in a record, has no successor;
        /// the WAL check goes on without one.
        @Test func aSequenceWithNoSuccessorIsChecked() throws {
            let segment = try Self.crash("wal", "sequence-with-no-successor.log")
            var afterRecord = WALCheck(lastSequence: nil)
            afterRecord.check(name: "wal-0000000001.log", number: 1, bytes: segment, later: nil)
            #expect(afterRecord.firstSequence == .max)
            var afterManifest = WALCheck(lastSequence: .max)
            afterManifest.check(name: "wal-0000000001.log", number: 1, bytes: segment, later: nil)
            #expect(afterManifest.firstSequence == .max)
        }
    }
#endif
