import Foundation
import StrataIO
import StrataVerifier
import Testing

/// The `strata-fsck` binary, run as a real process: its exit statuses and output.
@Suite("strata-fsck command")
struct FsckCommandTests {
    @Test func cleanStoreExitsZero() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("clean")
            try FixturePaths.copy("clean", to: store)
            let result = try await fsck(store)
            #expect(result.status == 0, "\(result)")
            #expect(result.output.hasSuffix("clean (6 files checked)\n"), "\(result)")
            #expect(result.errorText.isEmpty)
        }
    }

    @Test func damagedSegmentExitsFourWithOneLinePerFinding() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("damaged")
            try FixturePaths.copy("flipped-data-block", to: store)
            let result = try await fsck(store)
            #expect(result.status == 4, "\(result)")
            let lines = result.output.split(separator: "\n")
            #expect(lines.count == 2, "\(result)")
            #expect(lines.first?.hasPrefix("error   seg-0000000002.sst @ 0  [segment.checksum] ") == true, "\(result)")
            #expect(lines.last?.contains("1 problem left") == true, "\(result)")
        }
    }

    @Test func tornTailIsRepairedThenClean() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("torn")
            try FixturePaths.copy("torn-wal-tail", to: store)
            #expect(try await fsck(store).status == 4)
            let repair = try await fsck(store, "--repair")
            #expect(repair.status == 1, "\(repair)")
            #expect(repair.output.contains("(repaired)"), "\(repair)")
            let again = try await fsck(store)
            #expect(again.status == 0, "\(again)")
        }
    }

    @Test func repairedAndLeftProblemsAddUpToFive() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("torn")
            try FixturePaths.copy("torn-wal-tail", to: store)
            try Data("not Strata's".utf8).write(to: URL(fileURLWithPath: store + "/notes.txt"))
            let result = try await fsck(store, "--repair")
            #expect(result.status == 5, "\(result)")
            #expect(FileManager.default.fileExists(atPath: store + "/notes.txt"))
        }
    }

    @Test func jsonIsOneReportObject() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("unreferenced")
            try FixturePaths.copy("unreferenced-segment", to: store)
            let result = try await fsck(store, "--json")
            #expect(result.status == 4, "\(result)")
            #expect(result.output.split(separator: "\n").count == 1, "\(result)")
            let report = try JSONDecoder().decode(VerificationReport.self, from: Data(result.output.utf8))
            #expect(report.path == store)
            #expect(report.findings.map(\.code) == ["file.unreferenced"])
            #expect(report.findings.first?.repairable == true)
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            #expect(object?["problemsLeft"] as? Int == 1)
            #expect(object?["isClean"] as? Bool == false)
        }
    }

    @Test func missingPathExitsEight() async throws {
        try await withTestDirectory { directory in
            let result = try await fsck(directory.path("no-such-store"))
            #expect(result.status == 8, "\(result)")
            #expect(result.output.isEmpty)
            #expect(result.errorText.hasPrefix("strata-fsck: there is nothing at "), "\(result)")
        }
    }

    @Test func lockedStoreExitsEight() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("open")
            try FixturePaths.copy("clean", to: store)
            let lock = try POSIXFileSystem().lockFile(store + "/LOCK")
            defer { try? lock.unlock() }
            let result = try await fsck(store)
            #expect(result.status == 8, "\(result)")
            #expect(result.errorText.contains("close it first"), "\(result)")
            #expect(result.errorText.contains("lock file \(store)/LOCK"), "the message names the lock that is held: \(result)")
        }
    }

    @Test func usageErrorsExitSixteen() async throws {
        let badFlag = try await fsck("somewhere", "--bogus")
        #expect(badFlag.status == 16, "\(badFlag)")
        #expect(badFlag.errorText.contains("--bogus") && badFlag.errorText.contains("Usage"), "\(badFlag)")
        #expect(badFlag.output.isEmpty)

        let noPath = try await fsck()
        #expect(noPath.status == 16, "\(noPath)")

        let help = try await fsck("--help")
        #expect(help.status == 0, "\(help)")
        #expect(help.output.contains("USAGE: strata-fsck <path>"), "\(help)")
    }
}
