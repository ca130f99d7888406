import Foundation
import StrataFixtureKit
import StrataFormat
import StrataIO
import StrataVerifier
import Testing

/// Repair removes what nothing references and cuts torn WAL tails; nothing else.
@Suite("repair")
struct RepairTests {
    /// The files the clean store reads.
    static let referenced = [
        "STRATA", "LOCK", CleanStore.manifest, CleanStore.level1Segment, CleanStore.level0Segment,
        CleanStore.olderWAL, CleanStore.newerWAL
    ]

    @Test func repairRemovesUnreferencedFilesButNeverAReferencedOne() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("leftovers")
            try FixturePaths.copy("leftover-files", to: store)
            var files = try directoryContents(store)
            files["seg-0000000001.sst"] = files[CleanStore.level1Segment]
            files["notes.txt"] = Array("kept".utf8)
            try writeStore(files, to: store)
            try FileManager.default.createDirectory(atPath: store + "/backup", withIntermediateDirectories: false)

            let report = try Verifier.verify(path: store, repair: true)
            let unreferenced = report.findings.filter { $0.code == "file.unreferenced" }
            #expect(
                Set(unreferenced.map(\.file)) == [
                    "STRATA.tmp", "manifest-0000000001.log", "manifest-0000000005.tmp",
                    "wal-0000000002.log", "seg-0000000001.sst"
                ])
            #expect(unreferenced.allSatisfy { $0.repairable && $0.repaired })
            let unknown = report.findings.filter { $0.code == "file.unknown" }
            #expect(Set(unknown.map(\.file)) == ["notes.txt", "backup"])
            #expect(unknown.allSatisfy { !$0.repairable && !$0.repaired && $0.severity == .warning })
            #expect(report.problemsLeft == 2 && report.repairedCount == 5)

            let after = try directoryContents(store)
            #expect(Set(after.keys) == Set(Self.referenced + ["notes.txt"]))
            #expect(FileManager.default.fileExists(atPath: store + "/backup"))
            for name in Self.referenced {
                #expect(after[name] == files[name], "repair changed \(name), which the store reads")
            }
        }
    }

    @Test func repairCutsATornWALTailAndZeroFillsTheFileBackToItsSize() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("torn")
            try FixturePaths.copy("torn-wal-tail", to: store)
            let before = try directoryContents(store)
            let wal = try #require(before[CleanStore.newerWAL])

            let report = try Verifier.verify(path: store, repair: true)
            let torn = try #require(report.findings.first)
            #expect(report.findings.count == 1 && torn.code == "wal.tornTail" && torn.repaired)
            let cut = Int(try #require(torn.offset))
            #expect(cut == CleanStore().newerWALRecordOffsets.last)

            let after = try directoryContents(store)
            let repaired = try #require(after[CleanStore.newerWAL])
            #expect(repaired.count == wal.count, "the file keeps its size, zero-filled past the cut")
            #expect(Array(repaired[..<cut]) == Array(wal[..<cut]), "the records before the tear are untouched")
            #expect(repaired[cut...].allSatisfy { $0 == 0 })
            for (name, bytes) in before where name != CleanStore.newerWAL {
                #expect(after[name] == bytes, "repair changed \(name)")
            }

            // The record before the tear is still there, and the WAL now ends cleanly.
            var scanner = WALScanner(bytes: repaired)
            guard case .record(_, let offset, _) = scanner.next() else {
                Issue.record("the first record is gone")
                return
            }
            #expect(offset == WALFormat.headerSize)
            #expect(scanner.next() == .end(offset: cut))
            #expect(try Verifier.verify(path: store).findings.isEmpty)
        }
    }

    @Test func aDamagedManifestMakesNothingRemovable() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("damaged")
            try FixturePaths.copy("flipped-manifest-record", to: store)
            var files = try directoryContents(store)
            files["seg-0000000001.sst"] = files[CleanStore.level1Segment]
            files[ManifestFormat.fileName(1)] = FixtureEncoding.manifest(number: 1, [VersionEdit(logNumber: 1, lastSequence: 0, nextFileNumber: 2)]).bytes
            files["wal-0000000001.log"] = FixtureEncoding.walSegment(number: 1, []).bytes
            // A manifest install cut short: its header, then part of its snapshot.
            files["manifest-0000000004.tmp"] = Array(
                FixtureEncoding.manifest(number: 4, [VersionEdit(logNumber: 1, lastSequence: 0, nextFileNumber: 5)]).bytes.prefix(40))
            try writeStore(files, to: store)

            let report = try Verifier.verify(path: store, repair: true)
            #expect(report.findings.contains { $0.code == "manifest.corruptRecord" })
            // Only the .tmp file is provably a leftover.
            #expect(report.findings.filter(\.repairable).map(\.file) == ["manifest-0000000004.tmp"])
            var expected = files
            expected["manifest-0000000004.tmp"] = nil
            #expect(try directoryContents(store) == expected)
        }
    }

    @Test func withoutAManifestSegmentFilesAreRemovableOnlyWhenTheWALHoldsEverything() async throws {
        try await withTestDirectory { directory in
            let segment = FixtureEncoding.segment([FixtureEncoding.put("a", "1", 1)])
            let fromOne = directory.path("from-one")
            try writeStore(
                [
                    "STRATA": StoreIdentityFormat.encode(),
                    "wal-0000000001.log": FixtureEncoding.walSegment(number: 1, [FixtureTransaction(sequence: 1, [("a", "1")])]).bytes,
                    "seg-0000000001.sst": segment
                ], to: fromOne)
            let removable = try Verifier.verify(path: fromOne)
            #expect(removable.findings.map(\.code) == ["file.unreferenced"])
            #expect(removable.findings.first?.repairable == true)

            let later = directory.path("later")
            try writeStore(
                [
                    "STRATA": StoreIdentityFormat.encode(),
                    "wal-0000000002.log": FixtureEncoding.walSegment(number: 2, [FixtureTransaction(sequence: 2, [("b", "2")])]).bytes,
                    "seg-0000000001.sst": segment
                ], to: later)
            let kept = try Verifier.verify(path: later, repair: true)
            #expect(Set(kept.findings.map(\.code)) == ["wal.sequenceGap", "file.unreferenced"])
            #expect(kept.findings.allSatisfy { !$0.repairable && !$0.repaired })
            #expect(FileManager.default.fileExists(atPath: later + "/seg-0000000001.sst"))
        }
    }
}
