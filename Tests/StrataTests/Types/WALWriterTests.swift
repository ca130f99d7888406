import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import Strata

/// `WALWriter` on its own: framing, offsets, the synced offset, sync marks and rolls.
@Suite struct WALWriterTests {
    private static let directory = "/wal"

    private static func makeWriter(
        _ fs: SimulatedFileSystem, segmentBytes: Int = 64 << 10, finishesInBackground: Bool = true, makesNextSegmentAfter: Int = .max
    ) throws -> (WALWriter, WALInventory) {
        try fs.createDirectory(directory)
        let handle = try WALWriter.createSegment(fileSystem: fs, directory: directory, number: 1)
        let inventory = WALInventory([:])
        let writer = WALWriter(
            fileSystem: fs, directory: directory, segmentBytes: segmentBytes, inventory: inventory, handle: handle,
            segmentNumber: 1, offset: WALFormat.headerSize, provenThrough: WALFormat.headerSize,
            fileSize: WALWriter.preallocationTarget(for: WALFormat.headerSize), finishesRolledSegmentsInBackground: finishesInBackground,
            makesNextSegmentAfter: makesNextSegmentAfter)
        return (writer, inventory)
    }

    private static func batch(_ writer: WALWriter, sequence: UInt64, valueBytes: Int = 10) -> [UInt8] {
        var encoder = BatchFormat.Encoder(sequence: sequence, syncedThrough: writer.syncedThrough)
        encoder.put(Array("k\(sequence)".utf8), [UInt8](repeating: 7, count: valueBytes))
        return encoder.finish()
    }

    /// Every record in the segment, as (kind, sequence, syncedThrough, offset).
    private static func records(_ fs: SimulatedFileSystem, _ number: UInt64) throws -> [(BatchFormat.RecordKind, UInt64, UInt64, Int)] {
        let bytes = fs.contents(of: directory + "/" + WALFormat.fileName(number))!
        var found: [(BatchFormat.RecordKind, UInt64, UInt64, Int)] = []
        _ = try WALSegmentReader.read(bytes, later: nil, sequenceFloor: nil) { payload, offset in
            let header = try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
            found.append((header.kind, header.sequence, header.syncedThrough, offset))
        }
        return found
    }

    @Test func aGroupIsOneWriteAndItsRecordsCarryTheSyncedOffsetFromBeforeIt() throws {
        let fs = SimulatedFileSystem()
        let (writer, inventory) = try Self.makeWriter(fs)
        writer.stage(Self.batch(writer, sequence: 1))
        writer.stage(Self.batch(writer, sequence: 2))
        #expect(writer.hasStagedRecords)
        try writer.writeStaged()
        #expect(!writer.hasStagedRecords)
        try writer.sync()
        writer.stage(Self.batch(writer, sequence: 3))
        try writer.writeStaged()
        let found = try Self.records(fs, 1)
        #expect(found.map(\.1) == [1, 2, 3])
        #expect(found[0].2 == 32 && found[1].2 == 32, "the first group was written with only the header synced")
        #expect(found[2].2 == UInt64(found[2].3), "the second group follows a sync of everything before it")
        #expect(inventory.totalBytes == fs.contents(of: Self.directory + "/" + WALFormat.fileName(1)).map { (lastNonZeroIndex($0) ?? 0) + 1 })
    }

    @Test func aSyncMarkIsWrittenOnlyWhenSomeRecordIsUnproven() throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs)
        try writer.writeSyncMarkIfNeeded(sequence: 0)
        #expect(try Self.records(fs, 1).isEmpty, "an empty segment needs no mark")
        writer.stage(Self.batch(writer, sequence: 1))
        try writer.writeStaged()
        try writer.writeSyncMarkIfNeeded(sequence: 1)
        try writer.writeSyncMarkIfNeeded(sequence: 1)
        let found = try Self.records(fs, 1)
        #expect(found.map(\.0) == [.batch, .syncMark], "one mark, not two")
        #expect(found[1].2 == UInt64(found[1].3), "a mark vouches for everything before it")
        #expect(fs.durableContents(of: Self.directory + "/" + WALFormat.fileName(1)) == fs.contents(of: Self.directory + "/" + WALFormat.fileName(1)))
    }

    @Test func aRollMarksTheOldSegmentAndStartsADurableNewOne() throws {
        let fs = SimulatedFileSystem()
        let (writer, inventory) = try Self.makeWriter(fs)
        writer.stage(Self.batch(writer, sequence: 1))
        try writer.writeStaged()
        try writer.roll(lastSequence: 1)
        #expect(writer.segmentNumber == 2)
        // Finished in the background; the next sync waits for it.
        try writer.sync()
        #expect(!writer.hasRolledSegment)
        #expect(try Self.records(fs, 1).map(\.0) == [.batch, .syncMark])
        #expect(fs.durableContents(of: Self.directory + "/" + WALFormat.fileName(1)) == fs.contents(of: Self.directory + "/" + WALFormat.fileName(1)))
        #expect(fs.durableContents(of: Self.directory + "/" + WALFormat.fileName(2))?.prefix(8).elementsEqual(WALFormat.magic) == true)
        #expect(inventory.segmentCount == 2)
        inventory.retire(below: 2, fileSystem: fs, directory: Self.directory)
        #expect(inventory.segmentCount == 1)
        #expect(try fs.kind(of: Self.directory + "/" + WALFormat.fileName(1)) == nil)
    }

    @Test func aRollDoesNotWaitForTheOldSegmentsSyncButTheNextSyncDoes() throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs, finishesInBackground: false)
        let old = Self.directory + "/" + WALFormat.fileName(1)
        let new = Self.directory + "/" + WALFormat.fileName(2)
        writer.stage(Self.batch(writer, sequence: 1))
        try writer.writeStaged()
        try writer.roll(lastSequence: 1)
        writer.stage(Self.batch(writer, sequence: 2))
        try writer.writeStaged()
        // Nothing of the old segment's record is durable yet, and the new segment's record
        // still says only its header is synced: a crash now leaves a torn roll that recovery
        // cuts (docs/format/wal.md, "Recovery").
        #expect(writer.hasRolledSegment)
        #expect(fs.durableContents(of: old) != fs.contents(of: old))
        #expect(try Self.records(fs, 1).map(\.0) == [.batch])
        #expect(try Self.records(fs, 2).map(\.2) == [UInt64(WALFormat.headerSize)])
        try writer.sync()
        #expect(!writer.hasRolledSegment)
        #expect(try Self.records(fs, 1).map(\.0) == [.batch, .syncMark])
        #expect(fs.durableContents(of: old) == fs.contents(of: old), "the old segment is synced, mark and all, before the new one")
        #expect(fs.durableContents(of: new) == fs.contents(of: new))
        // The next record proves the new segment synced: the old one was finished first.
        writer.stage(Self.batch(writer, sequence: 3))
        try writer.writeStaged()
        #expect(WALTail.recordProvingSegmentSynced(fs.contents(of: new)!) != nil)
    }

    @Test func aFailedSyncOfTheOldSegmentFailsTheNextSync() throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs, finishesInBackground: false)
        writer.stage(Self.batch(writer, sequence: 1))
        try writer.writeStaged()
        try writer.roll(lastSequence: 1)
        // The next fdatasync is the old segment's, which the sync below must wait for.
        fs.injectFault(.syncError, atOperation: 0, countingOnly: [.sync])
        #expect(throws: IOError.self) { try writer.sync() }
        #expect(fs.durableContents(of: Self.directory + "/" + WALFormat.fileName(1)) != fs.contents(of: Self.directory + "/" + WALFormat.fileName(1)))
        try writer.close()
    }

    @Test func discardedRecordsAreNeverWritten() throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs)
        writer.stage(Self.batch(writer, sequence: 1))
        writer.discardStaged()
        try writer.writeStaged()
        #expect(try Self.records(fs, 1).isEmpty)
    }

    @Test func theFileGrowsInPreallocatedSteps() throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs, segmentBytes: 8 << 20)
        for sequence in 1...40 as ClosedRange<UInt64> {
            writer.stage(Self.batch(writer, sequence: sequence, valueBytes: 40_000))
            try writer.writeStaged()
        }
        let size = fs.contents(of: Self.directory + "/" + WALFormat.fileName(1))!.count
        #expect(size % WALWriter.preallocationStepBytes == 0)
        #expect(try Self.records(fs, 1).count == 40)
    }

    @Test(arguments: [false, true])
    func theNextSegmentIsMadeAheadAndTheRollTakesItWithoutASync(inBackground: Bool) throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs, finishesInBackground: inBackground, makesNextSegmentAfter: 100)
        let next = Self.directory + "/" + WALFormat.fileName(2)
        writer.stage(Self.batch(writer, sequence: 1))
        try writer.writeStaged()
        #expect(try fs.kind(of: next) == nil, "not before the threshold")
        writer.stage(Self.batch(writer, sequence: 2, valueBytes: 200))
        try writer.writeStaged()
        try writer.sync()
        // Made: durable and empty, before any roll.
        try writer.roll(lastSequence: 2)
        #expect(writer.segmentNumber == 2)
        try writer.sync()
        #expect(try Self.records(fs, 2).isEmpty)
        #expect(fs.durableContents(of: next) == fs.contents(of: next))
        writer.stage(Self.batch(writer, sequence: 3))
        try writer.writeStaged()
        #expect(try Self.records(fs, 2).map(\.1) == [3])
        try writer.close()
    }

    @Test func aRollToASegmentMadeAheadSyncsNothingOfItsOwn() throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs, finishesInBackground: false, makesNextSegmentAfter: 100)
        writer.stage(Self.batch(writer, sequence: 1, valueBytes: 200))
        try writer.writeStaged()
        try writer.sync()
        #expect(try fs.kind(of: Self.directory + "/" + WALFormat.fileName(2)) != nil)
        fs.recordOperations(true)
        try writer.roll(lastSequence: 1)
        #expect(writer.segmentNumber == 2)
        #expect(fs.recordedOperations.isEmpty, "the roll only takes the segment: \(fs.recordedOperations)")
        fs.recordOperations(false)
        try writer.sync()
        #expect(try Self.records(fs, 1).map(\.0) == [.batch, .syncMark])
    }

    @Test func aFailedCreationAheadIsNoErrorAndTheRollCreatesTheSegment() throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs, finishesInBackground: false, makesNextSegmentAfter: 100)
        fs.injectFault(.syncError, atOperation: 0, countingOnly: [.sync])
        writer.stage(Self.batch(writer, sequence: 1, valueBytes: 200))
        try writer.writeStaged()
        fs.clearFaults()
        try writer.sync()
        try writer.roll(lastSequence: 1)
        try writer.sync()
        let next = Self.directory + "/" + WALFormat.fileName(2)
        #expect(fs.durableContents(of: next)?.prefix(8).elementsEqual(WALFormat.magic) == true)
        writer.stage(Self.batch(writer, sequence: 2))
        try writer.writeStaged()
        try writer.sync()
        #expect(try Self.records(fs, 2).map(\.1) == [2])
    }

    @Test(arguments: [false, true])
    func aSegmentMadeAheadAndNotTakenIsRemoved(inBackground: Bool) throws {
        let fs = SimulatedFileSystem()
        let (writer, _) = try Self.makeWriter(fs, finishesInBackground: inBackground, makesNextSegmentAfter: 100)
        let next = Self.directory + "/" + WALFormat.fileName(2)
        writer.stage(Self.batch(writer, sequence: 1, valueBytes: 200))
        try writer.writeStaged()
        writer.discardSegmentAhead()
        #expect(try fs.kind(of: next) == nil)
        writer.stage(Self.batch(writer, sequence: 2))
        try writer.writeStaged()
        try writer.sync()
        // Made again by the next write (at once when inline; the background may not be done).
        if !inBackground { #expect(try fs.kind(of: next) != nil) }
        try writer.close()
        #expect(try fs.kind(of: next) == nil)
    }
}
