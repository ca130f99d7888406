import Foundation
@_spi(Testing) import Strata
import StrataFormat
import StrataIO
import StrataTestSupport
import StrataVerifier
import Testing

/// Record offsets (transactions only, not sync marks) and the end of valid data in a WAL
/// segment's bytes.
private struct RecoveryWALLayout {
    var records: [(offset: Int, end: Int, sequence: UInt64, syncedThrough: UInt64)] = []
    var end: Int

    init(_ bytes: [UInt8]) {
        var scanner = WALScanner(bytes: bytes)
        end = WALFormat.headerSize
        while true {
            switch scanner.next() {
            case .record(let payload, let offset, let recordEnd):
                let header = try? payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
                if header?.kind != .syncMark {
                    records.append((offset, recordEnd, header?.sequence ?? 0, header?.syncedThrough ?? 0))
                }
                end = recordEnd
            case .end(let offset):
                end = offset
                return
            case .invalid(let offset, _):
                end = offset
                return
            }
        }
    }
}

/// Framed WAL bytes of one batch, as the engine would write them at `fileOffset`.
private func recoveryRecord(
    sequence: UInt64, syncedThrough: UInt64, fileOffset: Int,
    puts: [([UInt8], [UInt8])]
) -> [UInt8] {
    var encoder = BatchFormat.Encoder(sequence: sequence, syncedThrough: syncedThrough)
    for (key, value) in puts { encoder.put(key, value) }
    let payload = encoder.finish()
    var framed: [UInt8] = []
    payload.withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &framed, fileOffset: fileOffset) }
    return framed
}

private func recoveryWrite(_ fs: any FileSystem, _ path: String, _ bytes: [UInt8], at offset: Int, create: Bool = false) throws {
    let handle = try fs.openFile(path, create: create)
    try handle.write(bytes, at: Int64(offset))
    try handle.sync()
    try handle.close()
}

private func recoveryExpectedEntries(_ range: Range<Int>) -> [Entry] {
    range.map { Entry(key: apiKey($0), value: apiValue($0)) }
}

/// Commits `count` transactions of one key each, numbered from `first`.
private func recoveryCommit(_ store: Store, _ range: Range<Int>, durability: Durability = .synced, padding: Int = 0) throws {
    for index in range {
        try store.write(durability: durability) { tx in
            try tx.put(apiKey(index), apiValue(index))
            if padding > 0 { try tx.put(apiKey(index) + apiBytes("-pad"), [UInt8](repeating: 0x70, count: padding)) }
        }
    }
}

@Suite struct RecoveryTests {
    @Test func freshStoreReport() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        #expect(store.recovery == RecoveryReport())
        #expect(store.version == 0)
        try store.close()
        let reopened = try APITestSimulated.open(fs)
        defer { try? reopened.close() }
        #expect(reopened.recovery.segmentsReplayed == 1)
        #expect(reopened.recovery.transactionsReplayed == 0)
        #expect(reopened.recovery.lastSequence == 0)
        #expect(reopened.recovery.truncatedTail == nil)
        #expect(reopened.recovery.removedIncompleteSegments.isEmpty)
    }

    @Test func reportCounts() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<5)
        try store.write { _ in }  // empty: no record
        _ = try? store.write { tx in
            try tx.put(apiBytes("x"), apiBytes("x"))
            throw CancellationError()  // thrown: no record
        }
        try store.write { tx in
            try tx.delete(apiKey(0))
            try tx.put(apiKey(1), apiBytes("changed"))
        }
        try store.close()
        let reopened = try APITestSimulated.open(fs)
        defer { try? reopened.close() }
        #expect(reopened.recovery.segmentsReplayed == 1)
        #expect(reopened.recovery.transactionsReplayed == 6)
        #expect(reopened.recovery.lastSequence == 6)
        #expect(reopened.recovery.truncatedTail == nil)
        #expect(reopened.recovery.removedIncompleteSegments.isEmpty)
        #expect(reopened.version == 6)
        #expect(try apiAllEntries(reopened).map(\.key) == (1..<5).map(apiKey))
        #expect(try reopened.read { try $0.get(apiKey(1)) } == apiBytes("changed"))
    }

    @Test func replaysSeveralSegments() throws {
        let fs = SimulatedFileSystem()
        let segmentBytes = 64 * 1024
        let store = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        try recoveryCommit(store, 0..<60, padding: 4_000)
        let stats = try store.stats()
        #expect(stats.walSegments >= 3)
        try store.close()
        let names = try fs.listDirectory(APITestSimulated.path).filter { $0.hasPrefix("wal-") }
        #expect(names.count == stats.walSegments)

        let reopened = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        defer { try? reopened.close() }
        #expect(reopened.recovery.segmentsReplayed == names.count)
        #expect(reopened.recovery.transactionsReplayed == 60)
        #expect(reopened.recovery.lastSequence == 60)
        #expect(reopened.version == 60)
        #expect(try reopened.read { try $0.scan(from: []).count } == 120)
        #expect(try reopened.stats().walSegments == names.count)
        // Closing added one sync mark (a 7-byte fragment header and a 21-byte payload).
        #expect(try reopened.stats().walBytes == stats.walBytes + WALFormat.fragmentHeaderSize + BatchFormat.headerSize)
    }

    @Test func appendedRecordInTheEngineFormatIsReplayed() throws {
        // The test's own framing of a record is what the engine reads: guards the helpers
        // the damage tests below rely on.
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<3)
        try store.close()
        let segment = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: segment)!)
        #expect(layout.records.map(\.sequence) == [1, 2, 3])
        let record = recoveryRecord(
            sequence: 4, syncedThrough: UInt64(layout.end), fileOffset: layout.end,
            puts: [(apiKey(3), apiValue(3))])
        try recoveryWrite(fs, segment, record, at: layout.end)
        let reopened = try APITestSimulated.open(fs)
        defer { try? reopened.close() }
        #expect(reopened.recovery.truncatedTail == nil)
        #expect(reopened.version == 4)
        #expect(try apiAllEntries(reopened) == recoveryExpectedEntries(0..<4))
    }

    enum TornTail: String, CaseIterable, Sendable {
        case halfRecord, garbage, recordWithBadChecksum
    }

    @Test(arguments: TornTail.allCases)
    func tornTailIsTruncatedAndReported(kind: TornTail) throws {
        let fs = SimulatedFileSystem()
        let segmentBytes = 64 * 1024
        let store = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        try recoveryCommit(store, 0..<3)
        try store.close()

        let segment = APITestSimulated.segment(1)
        let end = RecoveryWALLayout(fs.contents(of: segment)!).end
        let whole = recoveryRecord(
            sequence: 4, syncedThrough: UInt64(end), fileOffset: end,
            puts: [(apiBytes("torn"), [UInt8](repeating: 0x5A, count: 200))])
        let tail: [UInt8]
        switch kind {
        case .halfRecord:
            tail = Array(whole.prefix(whole.count / 2))
        case .garbage:
            tail = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) | 0x01 }
        case .recordWithBadChecksum:
            var damaged = whole
            damaged[damaged.count - 1] ^= 0x01
            tail = damaged
        }
        #expect(tail.last != 0)
        try recoveryWrite(fs, segment, tail, at: end)

        let reopened = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        let torn = try #require(reopened.recovery.truncatedTail)
        #expect(torn.file == segment)
        #expect(torn.offset == Int64(end))
        #expect(torn.discardedBytes == Int64(tail.count))
        #expect(reopened.recovery.transactionsReplayed == 3)
        #expect(reopened.recovery.lastSequence == 3)
        #expect(reopened.version == 3)
        #expect(try apiAllEntries(reopened) == recoveryExpectedEntries(0..<3))
        // The torn bytes are gone from the file. (No new sync mark: the one closing wrote,
        // just before the torn bytes, still proves every record synced.)
        let after = fs.contents(of: segment)!
        #expect(after[end...].allSatisfy { $0 == 0 })
        #expect(after.count >= segmentBytes)

        // It takes writes, and the next open finds nothing to repair.
        try recoveryCommit(reopened, 3..<5)
        try reopened.close()
        let again = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        defer { try? again.close() }
        #expect(again.recovery.truncatedTail == nil)
        #expect(again.recovery.removedIncompleteSegments.isEmpty)
        #expect(again.recovery.transactionsReplayed == 5)
        #expect(try apiAllEntries(again) == recoveryExpectedEntries(0..<5))
    }

    @Test func tornTailOnTheRealFileSystem() throws {
        try APITestDirectory.with { directory in
            let path = directory + "/store"
            let options = APITestDirectory.options()
            let store = try Store(path: path, options: options)
            try recoveryCommit(store, 0..<4)
            try store.close()

            let fs = POSIXFileSystem()
            let segment = path + "/wal-0000000001.log"
            let end = RecoveryWALLayout(try fs.openFile(segment, create: false).readAll()).end
            let record = recoveryRecord(
                sequence: 5, syncedThrough: UInt64(end), fileOffset: end,
                puts: [(apiBytes("torn"), [UInt8](repeating: 0x33, count: 300))])
            let half = Array(record.prefix(record.count / 2))
            try recoveryWrite(fs, segment, half, at: end)

            // The cut is reported in the log too, naming the file and what was discarded.
            let log = TestLog.Capture()
            var logged = options
            logged.logger = log.logger
            let reopened = try Store(path: path, options: logged)
            #expect(log.contains("cut a torn write off the end of the WAL"), "\(log.messages)")
            #expect(log.messages.contains { $0.hasPrefix("warning") && $0.contains("discardedBytes=\(half.count)") }, "\(log.messages)")
            #expect(reopened.recovery.truncatedTail?.file == segment)
            #expect(reopened.recovery.truncatedTail?.offset == Int64(end))
            #expect(reopened.recovery.truncatedTail?.discardedBytes == Int64(half.count))
            #expect(try apiAllEntries(reopened) == recoveryExpectedEntries(0..<4))
            try recoveryCommit(reopened, 4..<6)
            try reopened.close()

            let again = try Store(path: path, options: options)
            defer { try? again.close() }
            #expect(again.recovery.truncatedTail == nil)
            #expect(try apiAllEntries(again) == recoveryExpectedEntries(0..<6))
        }
    }

    @Test func damagedLastRecordAfterACrashIsATornTail() throws {
        // A process that crashed after its last sync left no sync mark: nothing after the
        // damaged last record says it was synced, so it may be a torn write. (The next open
        // writes a mark; this is the damage that strikes before it.)
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<5)
        let image = fs.crashImage(.loseAllUnsynced)
        try? store.close()
        let segment = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(image.contents(of: segment)!)
        let last = layout.records[4]
        #expect(layout.end == last.end, "a crash leaves no sync mark after the last record")
        try image.corrupt(path: segment, offset: last.offset + 12, xor: 0x08)
        let reopened = try APITestSimulated.open(image)
        defer { try? reopened.close() }
        #expect(reopened.recovery.truncatedTail?.file == segment)
        #expect(reopened.recovery.truncatedTail?.offset == Int64(last.offset))
        #expect(reopened.version == 4)
        #expect(try apiAllEntries(reopened) == recoveryExpectedEntries(0..<4))
    }

    @Test func damagedLastRecordAfterACloseIsCorruption() throws {
        // Closing wrote a sync mark after the last record: it proves the record was synced.
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<5)
        try store.close()
        let segment = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: segment)!)
        let last = layout.records[4]
        #expect(layout.end > last.end, "closing writes a sync mark after the last record")
        try fs.corrupt(path: segment, offset: last.offset + 12, xor: 0x08)
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs) }
        #expect(error?.code == .corruption)
        #expect(error?.file == segment)
        #expect(error?.offset == Int64(last.offset))
    }

    @Test func openAfterACrashMarksTheReplayedRecordsSynced() throws {
        // Recovery syncs what it replayed and writes a mark, so damage to the last record
        // after that open is corruption too.
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<5)
        let image = fs.crashImage(.loseAllUnsynced)
        try? store.close()
        let segment = APITestSimulated.segment(1)
        let reopened = try APITestSimulated.open(image)
        let crashed = image.crashImage(.loseAllUnsynced)
        try? reopened.close()
        let layout = RecoveryWALLayout(crashed.contents(of: segment)!)
        #expect(layout.end > layout.records[4].end)
        try crashed.corrupt(path: segment, offset: layout.records[4].offset + 12, xor: 0x08)
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(crashed) }
        #expect(error?.code == .corruption)
    }

    @Test func damageInANonLastSegmentIsCorruption() throws {
        let fs = SimulatedFileSystem()
        let segmentBytes = 64 * 1024
        let store = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        try recoveryCommit(store, 0..<40, padding: 4_000)
        #expect(try store.stats().walSegments >= 2)
        try store.close()

        let first = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: first)!)
        #expect(layout.records.count > 5)
        let victim = layout.records[5]
        try fs.corrupt(path: first, offset: victim.offset + 100, xor: 0x01)

        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes) }
        #expect(error?.code == .corruption)
        #expect(error?.file == first)
        #expect(error?.offset == Int64(victim.offset))
        #expect(error?.message.isEmpty == false)
        // Recovery changed nothing on disk: the segment is still whole past the damage.
        #expect(RecoveryWALLayout(fs.contents(of: APITestSimulated.segment(2))!).records.isEmpty == false)
    }

    @Test func missingMiddleSegmentIsCorruption() throws {
        let fs = SimulatedFileSystem()
        let segmentBytes = 64 * 1024
        let store = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        try recoveryCommit(store, 0..<60, padding: 4_000)
        #expect(try store.stats().walSegments >= 3)
        try store.close()
        try fs.removeFile(APITestSimulated.segment(2))
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes) }
        #expect(error?.code == .corruption)
        #expect(error?.file == APITestSimulated.segment(3))
        #expect(error?.offset == Int64(WALFormat.headerSize))
    }

    @Test func damageInTheFirstRecordOfANonLastSegmentIsCorruption() throws {
        let fs = SimulatedFileSystem()
        let segmentBytes = 64 * 1024
        let store = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        try recoveryCommit(store, 0..<40, padding: 4_000)
        try store.close()
        let first = APITestSimulated.segment(1)
        try fs.corrupt(path: first, offset: WALFormat.headerSize + 3, xor: 0x80)
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes) }
        #expect(error?.code == .corruption)
        #expect(error?.file == first)
        #expect(error?.offset == Int64(WALFormat.headerSize))
    }

    @Test func damageFollowedByARecordProvingItWasSyncedIsCorruption() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        // Synced commits, about 2 KiB each, filling more than two 32 KiB blocks of one segment.
        try recoveryCommit(store, 0..<40, padding: 2_000)
        try store.close()
        let segment = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: segment)!)
        #expect(layout.end > 2 * WALFormat.blockSize)
        #expect(layout.records.count == 40)
        // Every synced commit's record says everything before it is durable.
        #expect(layout.records.last!.syncedThrough == UInt64(layout.records[38].end))

        let victim = layout.records[1]
        try fs.corrupt(path: segment, offset: victim.offset + 40, xor: 0x10)
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs) }
        #expect(error?.code == .corruption)
        #expect(error?.file == segment)
        #expect(error?.offset == Int64(victim.offset))
        #expect(error?.message.isEmpty == false)
        // Not cut: the later records are still there for a repair tool.
        #expect(fs.contents(of: segment)!.count >= layout.end)
        let bytes = fs.contents(of: segment)!
        #expect(Array(bytes[layout.records[39].offset..<layout.records[39].end]).allSatisfy { $0 == 0 } == false)
    }

    @Test func damageInTheLastBlockOfTheLastSegmentWithSyncedRecordsBeforeIt() throws {
        // Damage in a later block, with valid synced records only before it and no sync mark
        // after it (the process crashed), is a torn tail.
        let live = SimulatedFileSystem()
        let store = try APITestSimulated.open(live)
        try recoveryCommit(store, 0..<40, padding: 2_000)
        let fs = live.crashImage(.loseAllUnsynced)
        try? store.close()
        let segment = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: segment)!)
        let victim = layout.records[39]
        try fs.corrupt(path: segment, offset: victim.end - 1, xor: 0x01)
        let reopened = try APITestSimulated.open(fs)
        defer { try? reopened.close() }
        #expect(reopened.recovery.truncatedTail?.offset == Int64(victim.offset))
        #expect(reopened.version == 39)
    }

    @Test func sequenceGapIsCorruption() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<3)
        try store.close()
        let segment = APITestSimulated.segment(1)
        let end = RecoveryWALLayout(fs.contents(of: segment)!).end
        // A well-framed record whose sequence skips one.
        let record = recoveryRecord(sequence: 5, syncedThrough: UInt64(end), fileOffset: end, puts: [(apiBytes("gap"), apiBytes("x"))])
        try recoveryWrite(fs, segment, record, at: end)
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs) }
        #expect(error?.code == .corruption)
        #expect(error?.file == segment)
        #expect(error?.offset == Int64(end))
    }

    enum IncompleteSegment: String, CaseIterable, Sendable {
        case empty, zeros, partialHeader
    }

    @Test(arguments: IncompleteSegment.allCases)
    func incompleteLastSegmentIsRemovedAndReported(kind: IncompleteSegment) throws {
        let fs = SimulatedFileSystem()
        let segmentBytes = 64 * 1024
        let store = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        try recoveryCommit(store, 0..<3)
        try store.close()

        let next = APITestSimulated.segment(2)
        let handle = try fs.openFile(next, create: true)
        switch kind {
        case .empty:
            break
        case .zeros:
            try handle.preallocate(to: Int64(segmentBytes))
        case .partialHeader:
            try handle.preallocate(to: Int64(segmentBytes))
            try handle.write(Array(WALFormat.SegmentHeader(segmentNumber: 2).encoded().prefix(12)), at: 0)
        }
        try handle.sync()
        try handle.close()
        try fs.syncDirectory(APITestSimulated.path)

        let reopened = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        #expect(reopened.recovery.removedIncompleteSegments == ["wal-0000000002.log"])
        #expect(reopened.recovery.segmentsReplayed == 1)
        #expect(reopened.recovery.transactionsReplayed == 3)
        #expect(reopened.recovery.truncatedTail == nil)
        #expect(try fs.kind(of: next) == nil)
        #expect(try apiAllEntries(reopened) == recoveryExpectedEntries(0..<3))
        try recoveryCommit(reopened, 3..<4)
        try reopened.close()

        let again = try APITestSimulated.open(fs, walSegmentBytes: segmentBytes)
        defer { try? again.close() }
        #expect(again.recovery.removedIncompleteSegments.isEmpty)
        #expect(try apiAllEntries(again) == recoveryExpectedEntries(0..<4))
    }

    @Test func segmentWithRecordsButNoHeaderIsNotRemoved() throws {
        // Zeros where the header should be, then data: not an interrupted creation.
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<3)
        try store.close()
        let segment = APITestSimulated.segment(1)
        try recoveryWrite(fs, segment, [UInt8](repeating: 0, count: WALFormat.headerSize), at: 0)
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs) }
        #expect(error?.file == segment)
        #expect(fs.contents(of: segment) != nil)
    }

    @Test func recoveryAfterLosingUnsyncedBufferedWrites() throws {
        // Buffered commits after the last sync may vanish in a crash; synced ones may not.
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try recoveryCommit(store, 0..<5)
        try recoveryCommit(store, 5..<10, durability: .buffered)
        for mode in [SimulatedFileSystem.CrashMode.loseAllUnsynced, .keepAll, .random(seed: 1), .random(seed: 2), .random(seed: 3)] {
            let image = fs.crashImage(mode)
            let reopened = try APITestSimulated.open(image)
            let version = Int(reopened.version)
            #expect(version >= 5 && version <= 10, "\(mode)")
            #expect(try apiAllEntries(reopened) == recoveryExpectedEntries(0..<version), "\(mode)")
            try recoveryCommit(reopened, version..<(version + 1))
            try reopened.close()
            let again = try APITestSimulated.open(image)
            #expect(again.recovery.truncatedTail == nil, "\(mode)")
            #expect(try apiAllEntries(again) == recoveryExpectedEntries(0..<(version + 1)), "\(mode)")
            try again.close()
        }
        try store.close()
    }
}

/// A roll whose sync a crash interrupted: the writer moves on to the next WAL segment before
/// the one it leaves is synced and marked (docs/format/wal.md, "Writing", rule 4), so after a
/// crash that segment may end torn, or early in zeros, with records of the next one on disk.
/// Recovery takes the log's end to be there, unless a later segment proves a sync of its own.
@Suite("A WAL roll whose sync a crash interrupted")
struct UnfinishedRollTests {
    static let segmentBytes = 64 * 1024

    /// A store whose writer rolled from segment 1 to 2 and wrote into 2, all `.buffered`, so
    /// segment 1 is not finished yet (background work inline: it waits for the next sync),
    /// and the image of a crash that kept every write. Returns the image and the number of
    /// commits made.
    static func crashAfterAnUnfinishedRoll(syncedInNewSegment: Bool = false) throws -> (SimulatedFileSystem, Int) {
        let fs = SimulatedFileSystem()
        var options = APITestSimulated.options(fs, walSegmentBytes: segmentBytes)
        options.runsBackgroundWorkInline = true
        let store = try Store(path: APITestSimulated.path, options: options)
        var count = 0
        while try store.stats().walSegments < 2 {
            try recoveryCommit(store, count..<(count + 1), durability: .buffered, padding: 1_000)
            count += 1
        }
        if syncedInNewSegment {
            try recoveryCommit(store, count..<(count + 1), durability: .synced, padding: 1_000)
            count += 1
        }
        try recoveryCommit(store, count..<(count + 3), durability: .buffered, padding: 1_000)
        count += 3
        let image = fs.crashImage(.keepAll)
        try? store.close()
        return (image, count)
    }

    /// How many of the commits `recoveryCommit` numbered from 0 the store holds, checking
    /// they are a prefix.
    static func committed(_ store: Store) throws -> Int {
        try store.read { tx in
            var held = 0
            while try tx.get(apiKey(held)) == apiValue(held) { held += 1 }
            return held
        }
    }

    static func reopen(_ fs: SimulatedFileSystem) throws -> Store {
        try Store(path: APITestSimulated.path, options: APITestSimulated.options(fs, walSegmentBytes: segmentBytes))
    }

    @Test func aTornOldSegmentEndsTheLogAndTheNewSegmentGoes() throws {
        let (fs, _) = try Self.crashAfterAnUnfinishedRoll()
        let first = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: first)!)
        let victim = layout.records.last!
        try fs.corrupt(path: first, offset: victim.end - 1, xor: 0x01)
        #expect(try Verifier.verify(path: APITestSimulated.path, fileSystem: fs).findings.map(\.code) == ["wal.tornTail", "wal.unsyncedSegment"])

        let store = try Self.reopen(fs)
        #expect(store.recovery.truncatedTail?.file == first)
        #expect(store.recovery.truncatedTail?.offset == Int64(victim.offset))
        #expect(store.recovery.removedUnsyncedSegments == [WALFormat.fileName(2)])
        #expect(store.version == victim.sequence - 1)
        #expect(try Self.committed(store) == Int(victim.sequence - 1))
        try store.write { try $0.put(apiBytes("after"), apiBytes("yes")) }
        try store.close()
        #expect(try fs.kind(of: APITestSimulated.segment(2)) == nil)
        #expect(try Verifier.verify(path: APITestSimulated.path, fileSystem: fs).findings.filter { $0.severity != .info }.isEmpty)
        let again = try Self.reopen(fs)
        #expect(again.version == victim.sequence)
        try again.close()
    }

    @Test func anOldSegmentEndingEarlyInZerosEndsTheLogWhenTheNextDoesNotContinueIt() throws {
        let (fs, _) = try Self.crashAfterAnUnfinishedRoll()
        let first = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: first)!)
        let victim = layout.records.last!
        // The last record's pages never reached the disk: zeros, as preallocated.
        let handle = try fs.openFile(first, create: false)
        try handle.write([UInt8](repeating: 0, count: victim.end - victim.offset), at: Int64(victim.offset))
        try handle.sync()
        try handle.close()
        #expect(try Verifier.verify(path: APITestSimulated.path, fileSystem: fs).findings.map(\.code) == ["wal.unsyncedSegment"])

        let store = try Self.reopen(fs)
        #expect(store.recovery.truncatedTail == nil)
        #expect(store.recovery.removedUnsyncedSegments == [WALFormat.fileName(2)])
        #expect(store.version == victim.sequence - 1)
        try store.close()
    }

    @Test func damageInTheOldSegmentIsCorruptionOnceTheNewSegmentProvesASync() throws {
        let (fs, _) = try Self.crashAfterAnUnfinishedRoll(syncedInNewSegment: true)
        let first = APITestSimulated.segment(1)
        let layout = RecoveryWALLayout(fs.contents(of: first)!)
        let victim = layout.records.last!
        // The synced commit finished segment 1 first: it ends with a sync mark. Without the
        // mark, segment 2's records alone prove it.
        #expect(layout.end > victim.end)
        let handle = try fs.openFile(first, create: false)
        try handle.write([UInt8](repeating: 0, count: layout.end - victim.end), at: Int64(victim.end))
        try handle.sync()
        try handle.close()
        try fs.corrupt(path: first, offset: victim.end - 1, xor: 0x01)
        #expect(try Verifier.verify(path: APITestSimulated.path, fileSystem: fs).findings.map(\.code) == ["wal.corruption"])
        let error = #expect(throws: StoreError.self) { _ = try Self.reopen(fs) }
        #expect(error?.code == .corruption)
        #expect(error?.file == first)
        #expect(error?.message.contains(WALFormat.fileName(2)) == true)
    }

    @Test func anIntactUnfinishedSegmentIsSyncedAndMarkedAtOpen() throws {
        let (fs, count) = try Self.crashAfterAnUnfinishedRoll()
        let first = APITestSimulated.segment(1)
        let before = WALSegmentReader.read(fs.contents(of: first)!, later: { nil }, sequenceFloor: nil) { _, _ in }
        #expect(before.provenThrough < before.end, "the crash came before the old segment was marked")
        let store = try Self.reopen(fs)
        #expect(store.version == UInt64(count))
        #expect(store.recovery.removedUnsyncedSegments.isEmpty)
        #expect(try Self.committed(store) == count)
        let after = WALSegmentReader.read(fs.contents(of: first)!, later: { nil }, sequenceFloor: nil) { _, _ in }
        #expect(after.provenThrough == after.end && after.damage == nil)
        #expect(fs.durableContents(of: first) == fs.contents(of: first))
        try store.close()
    }
}

/// A crash while the next WAL segment, made ahead of the roll (WALWriter invariant 9), sits
/// empty after the current one: recovery treats it as any segment that holds no record.
@Suite("WAL segment made ahead of the roll")
struct SegmentMadeAheadTests {
    /// A store (background work inline) that committed until segment 2 was made ahead, then
    /// `more` commits with `durability`, and the image of a crash in `mode`. Returns the image
    /// and the number of commits made.
    static func crashWithASegmentMadeAhead(
        more: Int, durability: Durability, mode: SimulatedFileSystem.CrashMode
    ) throws -> (SimulatedFileSystem, Int) {
        let (fs, store, made) = try Self.storeWithASegmentMadeAhead(durability: .synced)
        #expect(try store.stats().walSegments == 1, "segment 2 is made, not yet rolled to")
        #expect(fs.durableContents(of: APITestSimulated.segment(2)) == fs.contents(of: APITestSimulated.segment(2)))
        try recoveryCommit(store, made..<(made + more), durability: durability, padding: 1_000)
        let count = made + more
        let image = fs.crashImage(mode)
        try? store.close()
        return (image, count)
    }

    @Test func everySyncedCommitSurvivesAndTheEmptySegmentIsWrittenNext() throws {
        let (fs, count) = try Self.crashWithASegmentMadeAhead(more: 3, durability: .synced, mode: .loseAllUnsynced)
        #expect(try Verifier.verify(path: APITestSimulated.path, fileSystem: fs).findings.filter { $0.severity != .info }.isEmpty)
        let store = try UnfinishedRollTests.reopen(fs)
        #expect(store.version == UInt64(count))
        #expect(try UnfinishedRollTests.committed(store) == count)
        #expect(store.recovery.removedUnsyncedSegments.isEmpty && store.recovery.truncatedTail == nil)
        // Segment 1 is marked at open, and the next commit goes to segment 2.
        let first = WALSegmentReader.read(fs.contents(of: APITestSimulated.segment(1))!, later: { nil }, sequenceFloor: nil) { _, _ in }
        #expect(first.provenThrough == first.end && first.damage == nil)
        try store.write { try $0.put(apiBytes("after"), apiBytes("yes")) }
        var inSecond = 0
        _ = WALSegmentReader.read(fs.contents(of: APITestSimulated.segment(2))!, later: nil, sequenceFloor: nil) { _, _ in inSecond += 1 }
        #expect(inSecond == 1)
        try store.close()
        let again = try UnfinishedRollTests.reopen(fs)
        #expect(try again.get(apiBytes("after")) == apiBytes("yes"))
        #expect(try UnfinishedRollTests.committed(again) == count)
        try again.close()
    }

    @Test func aTornCurrentSegmentIsCutAndTheEmptySegmentGoes() throws {
        let (fs, _) = try Self.crashWithASegmentMadeAhead(more: 3, durability: .buffered, mode: .keepAll)
        let first = APITestSimulated.segment(1)
        let victim = RecoveryWALLayout(fs.contents(of: first)!).records.last!
        try fs.corrupt(path: first, offset: victim.end - 1, xor: 0x01)
        let store = try UnfinishedRollTests.reopen(fs)
        #expect(store.recovery.truncatedTail?.file == first)
        #expect(store.recovery.removedUnsyncedSegments == [WALFormat.fileName(2)])
        #expect(try UnfinishedRollTests.committed(store) == Int(victim.sequence - 1))
        try store.close()
        #expect(try Verifier.verify(path: APITestSimulated.path, fileSystem: fs).findings.filter { $0.severity != .info }.isEmpty)
    }

    /// A store (background work inline) that made `durability` commits until segment 2 was
    /// made ahead of the roll; returns the file system, the store and the number of commits.
    static func storeWithASegmentMadeAhead(durability: Durability) throws -> (SimulatedFileSystem, Store, Int) {
        let fs = SimulatedFileSystem()
        var options = APITestSimulated.options(fs, walSegmentBytes: UnfinishedRollTests.segmentBytes)
        options.runsBackgroundWorkInline = true
        let store = try Store(path: APITestSimulated.path, options: options)
        var count = 0
        while try fs.kind(of: APITestSimulated.segment(2)) == nil {
            try recoveryCommit(store, count..<(count + 1), durability: durability, padding: 1_000)
            count += 1
        }
        return (fs, store, count)
    }

    @Test func aCloseAndASuspensionLeaveNoSegmentMadeAhead() throws {
        let (fs, first, made) = try Self.storeWithASegmentMadeAhead(durability: .buffered)
        var store = first
        var count = made
        try store.suspend()
        #expect(try fs.kind(of: APITestSimulated.segment(2)) == nil, "another process may open the store now")
        #expect(try store.resume() == .unchanged)
        // Past the threshold already: the next write makes it again.
        try recoveryCommit(store, count..<(count + 1), durability: .buffered, padding: 1_000)
        count += 1
        #expect(try fs.kind(of: APITestSimulated.segment(2)) != nil)
        try store.close()
        #expect(try fs.kind(of: APITestSimulated.segment(2)) == nil)
        store = try UnfinishedRollTests.reopen(fs)
        #expect(try UnfinishedRollTests.committed(store) == count)
        try store.close()
    }
}
