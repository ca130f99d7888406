import Foundation
import Strata
import StrataFormat
import StrataIO
import StrataTestSupport
import StrataVerifier
import Testing

// Damage to synced bytes of the WAL and the manifest (docs/format/wal.md, "Recovery";
// docs/format/manifest.md, "Damage"): it must never be taken for a torn write, so the open
// either fails with .corruption or returns every acknowledged record, and strata-fsck's
// verdict agrees with the open's.

/// One store's files and what it acknowledged, for flipping bits in copies of it.
private struct DamageFixture {
    let fs: SimulatedFileSystem
    let options: StoreOptions
    let expected: [Entry]

    /// Opens a copy of the store with one bit flipped; returns nil when the open failed with
    /// `.corruption`, the entries it holds otherwise. Any other error is returned as a
    /// failure message.
    func openDamaged(_ file: String, offset: Int, mask: UInt8) throws -> Result<[Entry]?, LogDamageFailure> {
        let image = fs.crashImage(.keepAll)
        try image.corrupt(path: file, offset: offset, xor: mask)
        var options = options
        options.fileSystem = image
        let store: Store
        do {
            store = try Store(path: APITestSimulated.path, options: options)
        } catch let error as StoreError where error.code == .corruption {
            return .success(nil)
        } catch {
            return .failure(LogDamageFailure("the open failed with \(error), not .corruption"))
        }
        defer { try? store.close() }
        return .success(try store.read { tx in Array(try tx.scan(from: [])) })
    }

    /// Flips one bit in a copy of the store, opens it and verifies another copy; records an
    /// issue, naming `place`, when the open loses or changes acknowledged records without an
    /// error, fails with another error, or disagrees with the verifier. Returns the report.
    @discardableResult
    func check(_ file: String, offset: Int, mask: UInt8, place: String) throws -> VerificationReport {
        let opened: [Entry]?
        switch try openDamaged(file, offset: offset, mask: mask) {
        case .failure(let failure):
            Issue.record("\(place): \(failure.message)")
            opened = nil
        case .success(let entries):
            opened = entries
        }
        if let opened, opened != expected {
            Issue.record("\(place): the store opened without an error but holds \(opened.count) of \(expected.count) acknowledged records, or changed ones")
        }
        let report = try verifyDamaged(file, offset: offset, mask: mask)
        let verdictIsCorruption = report.findings.contains { $0.severity == .error }
        if verdictIsCorruption != (opened == nil) {
            Issue.record(
                "\(place): strata-fsck says \(verdictIsCorruption ? "corruption" : "no corruption") but the open \(opened == nil ? "failed" : "succeeded"): \(report.findings.map(\.code))"
            )
        }
        return report
    }

    /// The verifier's report on a copy of the store with one bit flipped.
    func verifyDamaged(_ file: String, offset: Int, mask: UInt8) throws -> VerificationReport {
        let image = fs.crashImage(.keepAll)
        try image.corrupt(path: file, offset: offset, xor: mask)
        return try Verifier.verify(path: APITestSimulated.path, fileSystem: image)
    }
}

private struct LogDamageFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The end of the last transaction record (not a sync mark) in a WAL segment's bytes.
private func lastTransactionEnd(_ bytes: [UInt8]) -> Int {
    var scanner = WALScanner(bytes: bytes)
    var end = WALFormat.headerSize
    while case .record(let payload, _, let recordEnd) = scanner.next() {
        let header = try? payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
        if header?.kind == .batch { end = recordEnd }
    }
    return end
}

/// Offsets to damage in a file of `count` written bytes: all of them for long tests,
/// otherwise a seeded sample of `sample` plus the last `tail` bytes (where the last record
/// and the sync mark are).
private func damageOffsets(count: Int, sample: Int, tail: Int, random: inout SeededRandom) -> [Int] {
    if TestEnvironment.longTests || count <= sample + tail { return Array(0..<count) }
    var chosen = Set((max(0, count - tail))..<count)
    while chosen.count < sample + min(tail, count) {
        chosen.insert(Int.random(in: 0..<count, using: &random))
    }
    return chosen.sorted()
}

@Suite struct LogDamageTests {
    /// `count` commits of one put each, `.synced`, with keys `rec/0000000`... and values of
    /// `valueBytes` bytes, on the real file system; then the store is closed.
    private static func writeRecords(_ path: String, count: Int, valueBytes: Int) throws {
        let store = try Store(path: path, options: APITestDirectory.options())
        for index in 0..<count {
            let key = Array(String(format: "rec/%07d", index).utf8)
            try store.write(durability: .synced) { tx in try tx.put(key, [UInt8](repeating: 0x76, count: valueBytes)) }
        }
        try store.close()
    }

    private static func flipBit(_ path: String, at offset: Int) throws {
        let fs = POSIXFileSystem()
        let handle = try fs.openFile(path, create: false)
        defer { try? handle.close() }
        var bytes = try handle.readAll()
        bytes[offset] ^= 0x01
        try handle.write([bytes[offset]], at: Int64(offset))
        try handle.sync()
    }

    /// Opening fails with .corruption at or before `offset`; the verifier says corruption,
    /// never a torn tail; and its repair leaves the WAL as it was.
    private static func expectCorruptionEverywhere(_ path: String, wal: String, damagedAt offset: Int) throws {
        let before = try POSIXFileSystem().openFile(wal, create: false).readAll()
        let error = #expect(throws: StoreError.self) { _ = try Store(path: path, options: APITestDirectory.options()) }
        #expect(error?.code == .corruption, "got \(String(describing: error))")
        #expect(error?.file == wal)
        #expect((error?.offset ?? .max) <= Int64(offset))

        let report = try Verifier.verify(path: path)
        #expect(report.findings.contains { $0.code == "wal.corruption" && $0.severity == .error })
        #expect(!report.findings.contains { $0.code == "wal.tornTail" })
        let repaired = try Verifier.verify(path: path, repair: true)
        #expect(repaired.repairedCount == 0)
        #expect(try POSIXFileSystem().openFile(wal, create: false).readAll() == before, "repair cut synced bytes")
    }

    @Test func flippedBitInTheLastBlockOfTheWALIsCorruption() throws {
        // 200 synced commits fill 16 KiB of one 32 KiB block; byte 12,600 is inside it, with
        // 47 records after it in the same block that say they were written after a sync
        // past 12,600.
        try APITestDirectory.with { directory in
            let path = directory + "/w.strata"
            try Self.writeRecords(path, count: 200, valueBytes: 40)
            let wal = path + "/wal-0000000001.log"
            try Self.flipBit(wal, at: 12_600)
            try Self.expectCorruptionEverywhere(path, wal: wal, damagedAt: 12_600)
        }
    }

    @Test func flippedBitInALaterBlockOfTheWALIsCorruption() throws {
        // 1,000 synced commits of 126-byte records over four blocks; byte 120,000 is in the
        // fourth, with some 40 records after it.
        try APITestDirectory.with { directory in
            let path = directory + "/w.strata"
            try Self.writeRecords(path, count: 1_000, valueBytes: 84)
            let wal = path + "/wal-0000000001.log"
            try Self.flipBit(wal, at: 120_000)
            try Self.expectCorruptionEverywhere(path, wal: wal, damagedAt: 120_000)
        }
    }

    @Test func flippedBitAnywhereInASyncedWALIsCorruptionOrHarmless() throws {
        let seed = TestEnvironment.seed(0x10_5EED, test: "flippedBitAnywhereInASyncedWAL")
        var random = SeededRandom(seed: seed)
        let fs = SimulatedFileSystem()
        let options = APITestSimulated.options(fs, walSegmentBytes: 64 << 10)
        let store = try Store(path: APITestSimulated.path, options: options)
        // Records of every fragment shape: many small ones per block, some spanning blocks
        // (FIRST, MIDDLE, LAST), over two WAL segments.
        let sizes = [8, 60, 300, 2_000, 40_000]
        var expected: [[UInt8]: [UInt8]] = [:]
        for index in 0..<30 {
            let key = Array(String(format: "key/%04d", index).utf8)
            let value = random.bytes(count: sizes[index % sizes.count])
            try store.write(durability: .synced) { tx in try tx.put(key, value) }
            expected[key] = value
        }
        try store.close()
        let fixture = DamageFixture(
            fs: fs, options: options,
            expected: expected.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { Entry(key: $0.key, value: $0.value) })

        let wals = try fs.listDirectory(APITestSimulated.path).filter { $0.hasPrefix("wal-") }.sorted()
        #expect(wals.count >= 2, "the workload must span two WAL segments")
        var cases = 0
        for name in wals {
            let file = APITestSimulated.path + "/" + name
            let bytes = fs.contents(of: file)!
            let written = (lastNonZeroIndex(bytes) ?? 0) + 1
            #expect(written > WALFormat.blockSize, "each segment must span several blocks")
            let lastRecordEnd = lastTransactionEnd(bytes)
            for offset in damageOffsets(count: written, sample: 1_000, tail: 100, random: &random) {
                let mask = UInt8(1) << UInt8.random(in: 0..<8, using: &random)
                let place = "\(name) byte \(offset) mask \(mask) (seed \(seed))"
                cases += 1
                let report = try fixture.check(file, offset: offset, mask: mask, place: place)
                if let torn = report.findings.first(where: { $0.code == "wal.tornTail" }), torn.file == name,
                    (torn.offset ?? 0) < Int64(lastRecordEnd)
                {
                    Issue.record("\(place): strata-fsck calls synced data at \(torn.offset ?? 0) a torn tail")
                }
            }
        }
        print("[flippedBitAnywhereInASyncedWAL] \(cases) damaged copies checked")
        #expect(cases >= 2_000)
    }

    @Test func flippedBitAnywhereInTheManifestIsCorruptionOrHarmless() throws {
        let seed = TestEnvironment.seed(0x11_5EED, test: "flippedBitAnywhereInTheManifest")
        var random = SeededRandom(seed: seed)
        let fs = SimulatedFileSystem()
        var options = APITestSimulated.options(fs, walSegmentBytes: 64 << 10)
        options.memtableBytes = 64 << 10
        let store = try Store(path: APITestSimulated.path, options: options)
        var expected: [[UInt8]: [UInt8]] = [:]
        // Three rounds of writes, each flushed and compacted: the manifest holds its snapshot,
        // then flush and compaction edits, then the close mark.
        for round in 0..<3 {
            for index in 0..<40 {
                let key = Array(String(format: "key/%04d", (index * 7 + round * 3) % 70).utf8)
                let value = random.bytes(count: 200 + index)
                try store.write { tx in try tx.put(key, value) }
                expected[key] = value
            }
            try store.compact()
        }
        try store.close()
        let fixture = DamageFixture(
            fs: fs, options: options,
            expected: expected.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { Entry(key: $0.key, value: $0.value) })

        let manifests = try fs.listDirectory(APITestSimulated.path).filter { $0.hasPrefix("manifest-") && $0.hasSuffix(".log") }
        let name = try #require(manifests.max())
        let file = APITestSimulated.path + "/" + name
        let bytes = fs.contents(of: file)!
        var records = 0
        _ = ManifestRecordReader.read(bytes) { _, _ in records += 1 }
        #expect(records >= 4, "snapshot, edits and the close mark")
        var cases = 0
        for offset in 0..<bytes.count {
            for bit in (TestEnvironment.longTests ? Array(0..<8) : [Int.random(in: 0..<8, using: &random)]) {
                let mask = UInt8(1) << UInt8(bit)
                let place = "\(name) byte \(offset) mask \(mask) (seed \(seed))"
                cases += 1
                try fixture.check(file, offset: offset, mask: mask, place: place)
            }
        }
        print("[flippedBitAnywhereInTheManifest] \(cases) damaged copies checked")
        #expect(cases == bytes.count * (TestEnvironment.longTests ? 8 : 1))
    }

    @Test func everyOffsetSearchFindsEvidenceInTheSameBlock() {
        // Two records in one block, the first damaged: the second, starting mid-block, says
        // it was written after a sync past the damage.
        var bytes = WALFormat.SegmentHeader(segmentNumber: 1).encoded()
        var first = BatchFormat.Encoder(sequence: 1, syncedThrough: 32)
        first.put([1], [1])
        first.finish().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
        let secondStart = bytes.count
        var second = BatchFormat.Encoder(sequence: 2, syncedThrough: UInt64(secondStart))
        second.put([2], [2])
        second.finish().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
        bytes[40] ^= 0x04
        let outcome = WALSegmentReader.read(bytes, later: nil, sequenceFloor: 0) { _, _ in }
        #expect(outcome.damage == .corruption(offset: 32, reason: "fragment checksum mismatch", evidence: .laterRecord(offset: secondStart)))
    }

    @Test func evidenceMustComeFromARecordTheWriterCouldHaveWritten() {
        // A later record claiming bytes at or past itself synced is no evidence (the writer
        // never writes one), nor is one with a sequence below the records before the damage.
        func segment(secondSyncedThrough: (Int) -> UInt64, secondSequence: UInt64) -> [UInt8] {
            var bytes = WALFormat.SegmentHeader(segmentNumber: 1).encoded()
            for sequence in 1...2 as ClosedRange<UInt64> {
                var batch = BatchFormat.Encoder(sequence: sequence, syncedThrough: 32)
                batch.put([UInt8(sequence)], [1])
                batch.finish().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
            }
            let damagedStart = bytes.count
            var damaged = BatchFormat.Encoder(sequence: 3, syncedThrough: 32)
            damaged.put([3], [3])
            damaged.finish().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
            bytes[damagedStart + 10] ^= 0x01
            let start = bytes.count
            var later = BatchFormat.Encoder(sequence: secondSequence, syncedThrough: secondSyncedThrough(start))
            later.put([4], [4])
            later.finish().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
            return bytes
        }
        func isTorn(_ bytes: [UInt8]) -> Bool {
            if case .tornTail? = WALSegmentReader.read(bytes, later: nil, sequenceFloor: 0, record: { _, _ in }).damage { return true }
            return false
        }
        #expect(!isTorn(segment(secondSyncedThrough: { UInt64($0) }, secondSequence: 4)))
        #expect(isTorn(segment(secondSyncedThrough: { UInt64($0 + 1) }, secondSequence: 4)))
        #expect(isTorn(segment(secondSyncedThrough: { UInt64($0) }, secondSequence: 1)))
    }

    @Test func onlyUnprovenRecordsGetASyncMark() throws {
        // One mark at the first close; opening and closing again without writes adds none,
        // so a store opened and closed often does not grow its log.
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try store.write { tx in try tx.put(apiKey(0), apiValue(0)) }
        try store.close()
        let segment = APITestSimulated.segment(1)
        let afterFirstClose = lastNonZeroIndex(fs.contents(of: segment)!)
        for _ in 0..<3 {
            try APITestSimulated.open(fs).close()
        }
        #expect(lastNonZeroIndex(fs.contents(of: segment)!) == afterFirstClose)
        let manifests = try fs.listDirectory(APITestSimulated.path).filter { $0.hasPrefix("manifest-") && $0.hasSuffix(".log") }
        var records = 0
        _ = ManifestRecordReader.read(fs.contents(of: APITestSimulated.path + "/" + manifests.max()!)!) { _, _ in records += 1 }
        #expect(records == 1, "a manifest holding only its snapshot needs no close mark")
    }

    @Test func aFormat1SegmentIsReadAndNeverAppendedTo() throws {
        // A store whose last WAL segment says format 1.0 (no sync marks): it is replayed, and
        // new records go to a new segment, so the old one stays whole and unmarked.
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        for index in 0..<3 { try store.write { tx in try tx.put(apiKey(index), apiValue(index)) } }
        let image = fs.crashImage(.loseAllUnsynced)
        try? store.close()
        let old = APITestSimulated.segment(1)
        let handle = try image.openFile(old, create: false)
        try handle.write(WALFormat.SegmentHeader(segmentNumber: 1, majorVersion: 1, minorVersion: 0).encoded(), at: 0)
        try handle.sync()
        try handle.close()
        let before = image.contents(of: old)!

        let reopened = try APITestSimulated.open(image)
        #expect(try apiAllEntries(reopened).count == 3)
        try reopened.write { tx in try tx.put(apiKey(3), apiValue(3)) }
        try reopened.close()
        #expect(image.contents(of: old)! == before)
        let again = try APITestSimulated.open(image)
        defer { try? again.close() }
        #expect(try apiAllEntries(again).count == 4)
        #expect(again.recovery.segmentsReplayed == 2)
    }
}
