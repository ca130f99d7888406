import Foundation
import StrataFixtureKit
import StrataFormat
import StrataIO
import StrataVerifier
import Testing

/// When the verifier cannot check a store at all, it throws, and says why.
@Suite("operational errors")
struct OperationalErrorTests {
    func verifierError(_ body: () throws -> Void) -> VerifierError? {
        do {
            try body()
            return nil
        } catch let error as VerifierError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func missingPathFileAndForeignDirectoryAreRefused() async throws {
        try await withTestDirectory { directory in
            #expect(verifierError { _ = try Verifier.verify(path: directory.path("nothing")) }?.code == .notFound)

            try Data("x".utf8).write(to: URL(fileURLWithPath: directory.path("file")))
            #expect(verifierError { _ = try Verifier.verify(path: directory.path("file")) }?.code == .notADirectory)

            let foreign = directory.path("foreign")
            try writeStore(["notes.txt": [1]], to: foreign)
            let error = verifierError { _ = try Verifier.verify(path: foreign) }
            #expect(error?.code == .notAStore)
            #expect(!FileManager.default.fileExists(atPath: foreign + "/LOCK"), "no LOCK may be created in someone else's directory")
        }
    }

    @Test func aStoreOpenElsewhereIsRefused() async throws {
        try await withTestDirectory { directory in
            let store = directory.path("open")
            try FixturePaths.copy("clean", to: store)
            let lock = try POSIXFileSystem().lockFile(store + "/LOCK")
            let error = verifierError { _ = try Verifier.verify(path: store) }
            #expect(error?.code == .locked)
            #expect(error?.message.contains("close it first") == true)
            #expect(error?.message.contains("lock file \(store)/LOCK") == true, "\(String(describing: error))")
            try lock.unlock()
            #expect(try Verifier.verify(path: store).isClean)
        }
    }

    @Test func aNewerStoreFormatIsRefusedAndADamagedIdentityIsReported() async throws {
        try await withTestDirectory { directory in
            var newer = StoreIdentityFormat.encode()
            newer[8] = 2
            newer.replaceSubrange(16..<20, with: withUnsafeBytes(of: Checksum.crc32(newer[0..<16]).littleEndian, Array.init))
            var files = CleanStore().store.files
            files["STRATA"] = newer
            try writeStore(files, to: directory.path("newer"))
            #expect(verifierError { _ = try Verifier.verify(path: directory.path("newer")) }?.code == .unsupportedVersion)

            files["STRATA"] = Array(StoreIdentityFormat.encode().prefix(19)) + [0]
            try writeStore(files, to: directory.path("damaged"))
            let report = try Verifier.verify(path: directory.path("damaged"))
            #expect(report.findings.map(\.code) == ["identity.damaged"])
        }
    }
}
