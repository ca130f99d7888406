import Foundation
import StrataFixtureKit
import StrataFormat
import StrataVerifier
import Testing

/// The WAL rules recovery applies, applied by the verifier.
@Suite("WAL checks")
struct WALCheckTests {
    func findings(_ files: [String: [UInt8]]) async throws -> [VerifierFinding] {
        try await withTestDirectory { directory in
            try writeStore(files, to: directory.path("store"))
            return try Verifier.verify(path: directory.path("store")).findings
        }
    }

    @Test func aStoreWithOnlyAWALIsClean() async throws {
        let files = [
            "STRATA": StoreIdentityFormat.encode(),
            "wal-0000000001.log": FixtureEncoding.walSegment(
                number: 1,
                [
                    FixtureTransaction(sequence: 1, [("a", "1")]), FixtureTransaction(sequence: 2, [("a", nil)])
                ]
            ).bytes + [UInt8](repeating: 0, count: 4096)
        ]
        #expect(try await findings(files).isEmpty)
    }

    @Test func sequencesMustContinueTheManifestAndEachOther() async throws {
        // The second record says the segment was synced past its first: so the older segment
        // had been synced to its end, and the missing sequence 13 is lost synced data.
        var files = CleanStore().store.files
        files[CleanStore.newerWAL] =
            FixtureEncoding.walSegment(
                number: 4, [FixtureTransaction(sequence: 14, [("x", "1")]), FixtureTransaction(sequence: 15, [("y", "1")])]
            ).bytes
        let gap = try await findings(files)
        #expect(gap.map(\.code) == ["wal.sequenceGap"])
        #expect(gap.first?.message.contains("the record before it has sequence 12") == true, "\(gap)")

        // With nothing proving a sync of the newer segment, and the older one not marked at its
        // end, the gap is a roll whose sync a crash interrupted: the log ends in the older one.
        files[CleanStore.newerWAL] = FixtureEncoding.walSegment(number: 4, [FixtureTransaction(sequence: 14, [("x", "1")])]).bytes
        let unsynced = try await findings(files)
        #expect(unsynced.map(\.code) == ["wal.unsyncedSegment"])
        #expect(unsynced.first?.file == CleanStore.newerWAL && unsynced.first?.repairable == true)

        files = CleanStore().store.files
        files[CleanStore.olderWAL] = nil
        let start = try await findings(files)
        #expect(start.map(\.code) == ["wal.sequenceGap"])
        #expect(start.first?.message.contains("the manifest's last sequence is 10") == true, "\(start)")
    }

    @Test func damageInTheLastSegmentIsCorruptionWhenALaterRecordProvesItWasSynced() async throws {
        // Record 0 fills most of block 0 and spills into block 1, where record 1 starts.
        let synced = walSegment(number: 4, firstSequence: 13, valueSizes: [40_000, 10], syncedThrough: [nil, nil])
        var damaged = synced.bytes
        damaged[synced.offsets[0] + 100] ^= 1
        var files = CleanStore().store.files
        files[CleanStore.newerWAL] = damaged
        let corrupt = try await findings(files)
        #expect(corrupt.map(\.code) == ["wal.corruption"])
        #expect(corrupt.first?.offset == Int64(synced.offsets[0]))

        // The same damage, when record 1 claims nothing was synced past the header, is torn.
        let unsynced = walSegment(number: 4, firstSequence: 13, valueSizes: [40_000, 10], syncedThrough: [nil, 32])
        damaged = unsynced.bytes
        damaged[unsynced.offsets[0] + 100] ^= 1
        files[CleanStore.newerWAL] = damaged
        let torn = try await findings(files)
        #expect(torn.map(\.code) == ["wal.tornTail"])
        #expect(torn.first?.repairable == true)
    }

    @Test func nonZeroBytesAfterTheEndOfTheLastSegmentAreATornTail() async throws {
        var files = CleanStore().store.files
        files[CleanStore.newerWAL]! += [0, 0, 0, 0, 0, 0, 0, 0, 9]
        #expect(try await findings(files).map(\.code) == ["wal.tornTail"])
    }

    @Test func anInterruptedSegmentCreationIsHarmless() async throws {
        var files = CleanStore().store.files
        files["wal-0000000005.log"] = [UInt8](repeating: 0, count: 4096)
        let found = try await findings(files)
        #expect(found.map(\.code) == ["wal.incompleteSegment"])
        #expect(found.first?.severity == .info)
    }

    @Test func headersAndBatchesAreChecked() async throws {
        var files = CleanStore().store.files
        files[CleanStore.olderWAL]![20] ^= 1
        #expect(try await findings(files).map(\.code) == ["wal.header"])

        files = CleanStore().store.files
        files[CleanStore.olderWAL]!.replaceSubrange(0..<WALFormat.headerSize, with: WALFormat.SegmentHeader(segmentNumber: 9).encoded())
        #expect(try await findings(files).map(\.code) == ["wal.numberMismatch"])

        files = CleanStore().store.files
        var bytes = WALFormat.SegmentHeader(segmentNumber: 4).encoded()
        var batch = BatchFormat.Encoder(sequence: 13, syncedThrough: 32)
        batch.put([], Array("empty key".utf8))
        batch.finish().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
        files[CleanStore.newerWAL] = bytes
        #expect(try await findings(files).map(\.code) == ["wal.badBatch"])
    }
}
