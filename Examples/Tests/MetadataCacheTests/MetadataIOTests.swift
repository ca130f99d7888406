import Foundation
import MetadataCacheKit
import Strata
import Testing

@Suite("Metadata cache with StoreIO")
struct MetadataIOTests {
    @Test("a composed sync pass is one commit with the right outcome; a failing pass applies nothing")
    func syncPass() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-io-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = try await runMetadataIOScenario(directory: directory)
        #expect(report.failures == [])

        #expect(report.commitsToSeed == 1)
        #expect(report.commitsForPass == 1)
        #expect(report.pass.touched == ["/Documents/Notes.txt", "/Documents/Budget.numbers"])
        #expect(report.pass.added == ["/Documents/Slides.key", "/Documents/Todo.txt"])
        #expect(report.pass.evicted == ["/Documents/Photo.heic"])
        #expect(
            report.afterPass.map(\.path) == [
                "/Documents/Budget.numbers", "/Documents/Notes.txt", "/Documents/Report.pdf", "/Documents/Slides.key", "/Documents/Todo.txt"
            ])
        #expect(report.afterPass.first { $0.path == "/Documents/Notes.txt" }?.size == 2_048)

        #expect(report.failedPassError == NotCached(path: "/Documents/Missing.txt"))
        #expect(report.commitsForFailedPass == 0)
        #expect(report.afterFailedPass == report.afterPass)
    }

    @Test("the helpers work on the store MetadataCache writes to")
    func sharedStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-io-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try MetadataCache(path: directory + "/cache.strata")
        let record = FileMetadata(path: "/a.txt", size: 1, modified: Date(timeIntervalSince1970: 1), contentType: "public.plain-text")
        try await cache.save(record, sync: true)

        #expect(try await cache.store.run(MetadataIO.entry(forPath: "/a.txt")) == record)
        let touched = try await cache.store.run(MetadataIO.touch("/a.txt", size: 2, modified: Date(timeIntervalSince1970: 2)))
        #expect(touched.size == 2)
        #expect(try cache.metadata(forPath: "/a.txt") == touched)
        try cache.close()
    }
}
