import Foundation
import StrataVerifier
import Testing

/// `strata-fsck --salvage`, run as a real process on copies of the damaged fixtures.
@Suite("strata-fsck --salvage")
struct FsckSalvageTests {
    @Test func aDamagedSegmentIsLeftOutAndReported() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("damaged")
            try FixturePaths.copy("flipped-data-block", to: store)
            let result = try await fsck(store, "--salvage")
            // 2: salvage gave something up; the check after it is clean.
            #expect(result.status == 2, "\(result)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(
                lines.first?.hasPrefix(
                    "salvage seg-0000000002.sst  left out of the store, moved to aside/seg-0000000002.sst; keys \"apple\" to \"fig\" may be missing or older (6 entries)"
                ) == true, "\(result)")
            #expect(lines.contains { $0.hasPrefix("info    aside  [file.asideDirectory]") }, "\(result)")
            #expect(lines.last?.hasSuffix(": clean (5 files checked)") == true, "\(result)")
            #expect(FileManager.default.fileExists(atPath: store + "/aside/seg-0000000002.sst"))
            // Salvaged once, the store is whole: a second run gives nothing up.
            let again = try await fsck(store, "--salvage")
            #expect(again.status == 0, "\(again)")
            #expect(again.output.contains("salvage: nothing was damaged, nothing dropped"), "\(again)")
            #expect(try await fsck(store).status == 0)
        }
    }

    @Test func jsonListsWhatWasDropped() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("wal")
            try FixturePaths.copy("flipped-wal-record", to: store)
            #expect(try await fsck(store).status == 4)
            let result = try await fsck(store, "--salvage", "--json")
            #expect(result.status == 2, "\(result)")
            #expect(result.output.split(separator: "\n").count == 1, "\(result)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
            let salvage = try #require(object["salvage"] as? [String: Any])
            #expect(salvage["droppedAnything"] as? Bool == true)
            #expect(salvage["missingSequences"] as? [[Int]] == [[11, 11]])
            let dropped = try #require(salvage["droppedLogBytes"] as? [[String: Any]])
            #expect(dropped.map { $0["file"] as? String } == ["wal-0000000003.log"])
            let verification = try #require(object["verification"] as? [String: Any])
            #expect(verification["isClean"] as? Bool == true)
        }
    }

    @Test func aMissingStoreExitsEight() async throws {
        try await withTestDirectory { directory in
            let result = try await fsck(directory.path("no-such-store"), "--salvage")
            #expect(result.status == 8, "\(result)")
            #expect(!FileManager.default.fileExists(atPath: directory.path("no-such-store")))
        }
    }
}
