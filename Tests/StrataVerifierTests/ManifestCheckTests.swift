import Foundation
import StrataFixtureKit
import StrataFormat
import StrataVerifier
import Testing

/// Manifests whose records do not make sense one after another.
@Suite("manifest checks")
struct ManifestCheckTests {
    /// The codes the verifier reports for the clean store with these manifest records.
    func codes(_ edits: (CleanStore) -> [VersionEdit]) async throws -> [String] {
        try await codes(cleanStore(manifest: edits))
    }

    func codes(_ files: [String: [UInt8]]) async throws -> [String] {
        try await withTestDirectory { directory in
            try writeStore(files, to: directory.path("store"))
            return try Verifier.verify(path: directory.path("store")).findings.map(\.code)
        }
    }

    @Test func editsThatDoNotFitTheStateBeforeThem() async throws {
        #expect(try await codes { $0.manifestEdits + [VersionEdit(removed: [(level: 1, fileNumber: 4)])] } == ["manifest.removeNotLive"])
        #expect(try await codes { $0.manifestEdits + [VersionEdit(added: [$0.level0Meta])] } == ["manifest.duplicateFile"])
        // A removed number may not come back later ...
        #expect(
            try await codes {
                $0.manifestEdits + [VersionEdit(removed: [(level: 0, fileNumber: 4)]), VersionEdit(added: [$0.level0Meta])]
            } == ["manifest.duplicateFile"])
        #expect(try await codes { $0.manifestEdits + [VersionEdit(logNumber: 2)] } == ["manifest.numberDecreased"])
        #expect(
            try await codes { $0.manifestEdits + [VersionEdit(droppedDeletions: 3), VersionEdit(droppedDeletions: 2)] } == ["manifest.numberDecreased"])
        let first = [UInt8](repeating: 1, count: 16)
        let second = [UInt8](repeating: 2, count: 16)
        #expect(try await codes { $0.manifestEdits + [VersionEdit(storeIdentifier: first), VersionEdit(storeIdentifier: first)] } == [])
        #expect(try await codes { $0.manifestEdits + [VersionEdit(storeIdentifier: first), VersionEdit(storeIdentifier: second)] } == ["manifest.badEdit"])
        #expect(try await codes { $0.manifestEdits + [VersionEdit(nextFileNumber: 4)] }.contains("manifest.numberDecreased"))

        var beyond = CleanStore().level0Meta
        beyond.fileNumber = 7
        #expect(try await codes { $0.manifestEdits + [VersionEdit(added: [beyond])] } == ["manifest.fileNumberTooLarge", "manifest.missingSegment"])
    }

    @Test func movingASegmentBetweenLevelsInOneEditIsFine() async throws {
        #expect(
            try await codes { clean in
                var level2 = clean.level0Meta
                var level3 = clean.level0Meta
                level2.level = 2
                level3.level = 3
                return clean.manifestEdits + [
                    VersionEdit(added: [level2], removed: [(level: 0, fileNumber: 4)]),
                    VersionEdit(added: [level3], removed: [(level: 2, fileNumber: 4)])
                ]
            }.isEmpty)
    }

    @Test func theFirstRecordMustBeAFullSnapshot() async throws {
        #expect(
            try await codes { clean in
                var edits = clean.manifestEdits
                edits[0].nextFileNumber = nil
                return edits
            } == ["manifest.incompleteSnapshot"])
    }

    @Test func aManifestNumberedAtOrPastItsCounterIsReported() async throws {
        var files = CleanStore().store.files
        let bytes = files.removeValue(forKey: CleanStore.manifest)!
        var renumbered = bytes
        renumbered.replaceSubrange(0..<ManifestFormat.headerSize, with: ManifestFormat.Header(fileNumber: 9).encoded())
        files[ManifestFormat.fileName(9)] = renumbered
        #expect(try await codes(files) == ["manifest.fileNumberTooLarge"])

        files[ManifestFormat.fileName(9)] = bytes
        #expect(try await codes(files) == ["manifest.numberMismatch", "manifest.fileNumberTooLarge"])
    }

    @Test func damageFollowedByARecordInTheSameBlockIsCorruptionNotATornAppend() async throws {
        let clean = CleanStore()
        let third = VersionEdit(lastSequence: 10)
        let manifest = FixtureEncoding.manifest(number: 3, clean.manifestEdits + [third])
        var files = clean.store.files

        // A payload bit: the length field still says where the next record starts.
        var payloadFlip = manifest.bytes
        payloadFlip[manifest.recordOffsets[1] + WALFormat.fragmentHeaderSize + 1] ^= 1
        files[CleanStore.manifest] = payloadFlip
        #expect(try await codes(files) == ["manifest.corruptRecord"])

        // A length bit: only probing the rest of the block finds the next record.
        var lengthFlip = manifest.bytes
        lengthFlip[manifest.recordOffsets[1] + 4] ^= 1
        files[CleanStore.manifest] = lengthFlip
        #expect(try await codes(files) == ["manifest.corruptRecord"])

        // The same damage in the last record is a torn append.
        var lastFlip = manifest.bytes
        lastFlip[manifest.recordOffsets[2] + WALFormat.fragmentHeaderSize] ^= 1
        files[CleanStore.manifest] = lastFlip
        #expect(try await codes(files) == ["manifest.tornRecord"])
    }

    @Test func intactRecordsThatDoNotDecodeAndEmptyManifestsAreErrors() async throws {
        let clean = CleanStore()
        var files = clean.store.files
        files[CleanStore.manifest] = manifestBytes(number: 3, payloads: clean.manifestEdits.map { $0.encoded() } + [[0x63, 0x01]])
        #expect(try await codes(files) == ["manifest.badEdit"])

        files[CleanStore.manifest] = ManifestFormat.Header(fileNumber: 3).encoded()
        #expect(try await codes(files) == ["manifest.empty"])

        files[CleanStore.manifest] = Array(ManifestFormat.Header(fileNumber: 3).encoded().prefix(20))
        #expect(try await codes(files) == ["manifest.header"])
    }
}
