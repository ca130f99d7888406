import Foundation
import MetadataCacheKit
import Strata
import Testing

/// A fresh directory for one test, removed when `body` returns.
private func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-cache-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory.path)
}

@Suite("Metadata cache example")
struct MetadataCacheTests {
    @Test("the lifecycle scenario keeps every write and passes its checks")
    func scenario() async throws {
        let report = try await withTemporaryDirectory { try await runLifecycleScenario(directory: $0, rounds: 4) }
        #expect(report.failures == [])
        #expect(report.suspensions == 4)
        #expect(report.extensionTurns == 2)
        #expect(report.lockedResumes == 2)
        #expect(report.reloads == 2)
        // At least the three saves made on purpose while suspended, each round.
        #expect(report.retried >= 3 * 4)
        for style in WriterStyle.allCases {
            #expect(report.committed[style, default: 0] > 0, "no \(style.rawValue) save committed")
        }
        #expect(report.recordsChecked >= report.retried + report.committed.values.reduce(0, +))
    }

    @Test("a save refused while suspended is written by resume, and a newer save is not overwritten")
    func keptSaves() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try MetadataCache(path: directory + "/cache.strata")
            let old = FileMetadata(path: "/a.txt", size: 1, modified: Date(timeIntervalSince1970: 1), contentType: "public.plain-text")
            let newer = FileMetadata(path: "/a.txt", size: 2, modified: Date(timeIntervalSince1970: 2), contentType: "public.plain-text")
            let other = FileMetadata(path: "/b.txt", size: 3, modified: Date(timeIntervalSince1970: 1), contentType: "public.plain-text")

            try await cache.suspend()
            #expect(try await cache.save(old, sync: false) == .retryAfterResume)
            #expect(try await cache.save(other, sync: true) == .retryAfterResume)
            #expect(cache.waitingCount == 2)

            // Another process saves a newer version of /a.txt meanwhile.
            let anotherProcess = try MetadataCache(path: directory + "/cache.strata")
            try await anotherProcess.save(newer, sync: true)
            try anotherProcess.close()

            guard case .reloaded = try cache.resume() else {
                Issue.record("resume() did not reload after another process wrote")
                return
            }
            #expect(cache.waitingCount == 0)
            #expect(try cache.metadata(forPath: "/a.txt") == newer)
            #expect(try cache.metadata(forPath: "/b.txt") == other)
            try cache.close()
        }
    }
}
