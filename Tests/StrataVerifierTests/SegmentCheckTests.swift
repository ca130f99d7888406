import Foundation
import StrataFixtureKit
import StrataFormat
import StrataVerifier
import Testing

/// Segment files that pass every checksum but break a rule, or disagree with the manifest.
@Suite("segment checks")
struct SegmentCheckTests {
    /// The clean store with its level 1 segment replaced by `bytes`, which the manifest
    /// describes as `meta` (or as the bytes truly are).
    func codes(level1 bytes: [UInt8], meta: SegmentMeta? = nil) async throws -> [String] {
        let clean = CleanStore()
        var level1 = meta ?? clean.level1Meta
        if meta == nil { level1.fileSize = UInt64(bytes.count) }
        var edits = clean.manifestEdits
        edits[0].added = [level1]
        var files = clean.store.files
        files[CleanStore.level1Segment] = bytes
        files[CleanStore.manifest] = CleanStore.manifest(edits)
        return try await withTestDirectory { directory in
            try writeStore(files, to: directory.path("store"))
            return try Verifier.verify(path: directory.path("store")).findings.map(\.code)
        }
    }

    let apple = FixtureEncoding.put("apple", "red", 1)
    let fig = FixtureEncoding.put("fig", "green", 6)

    @Test func keysMustAscendAcrossBlocks() async throws {
        // Each block and the index are in order; the second block's key sorts first.
        let bytes = assembledSegment(blocks: [[fig], [apple]], separators: ["g", "h"])
        // The check stops at the first broken rule, so the manifest's record of the file
        // (the clean one's) is not compared.
        #expect(try await codes(level1: bytes) == ["segment.keyOrder"])
    }

    @Test func entryCountAndSequenceRangeMustMatchTheFooter() async throws {
        let wrongCount = assembledSegment(blocks: [[apple], [fig]], separators: ["b", "g"], entryCount: 3)
        #expect(try await codes(level1: wrongCount).contains("segment.entryCount"))
        let narrowRange = assembledSegment(blocks: [[apple], [fig]], separators: ["b", "g"], sequences: (2, 6))
        #expect(try await codes(level1: narrowRange).contains("segment.sequenceRange"))
    }

    @Test func theFileMustMatchTheManifestsRecordOfIt() async throws {
        let clean = CleanStore()
        let bytes = clean.store.files[CleanStore.level1Segment]!
        var meta = clean.level1Meta
        meta.entryCount = 5
        meta.largestKey = Array("zucchini".utf8)
        #expect(try await codes(level1: bytes, meta: meta) == ["segment.metadataMismatch"])

        #expect(try await codes(level1: bytes + [0, 0], meta: clean.level1Meta) == ["segment.badMagic"])
    }

    @Test func aSegmentMayNotHoldSequencesTheManifestHasNotReached() async throws {
        let clean = CleanStore()
        var edits = clean.manifestEdits
        edits[1].lastSequence = 9
        var files = clean.store.files
        files[CleanStore.manifest] = CleanStore.manifest(edits)
        let codes = try await withTestDirectory { directory in
            try writeStore(files, to: directory.path("store"))
            return try Verifier.verify(path: directory.path("store")).findings.map(\.code)
        }
        // The WAL, which continues at 11, no longer follows the manifest either.
        #expect(codes == ["segment.sequenceAboveManifest", "wal.sequenceGap"])
    }
}
