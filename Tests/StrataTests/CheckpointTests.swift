// Online backup: `store.checkpoint(to:)` writes a copy consistent at one commit while writes
// go on; the copy opens as a store of its own and the verifier finds nothing wrong with it.
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import StrataVerifier
import Synchronization
import Testing

@Suite("Checkpoints: online backup")
struct CheckpointTests {
    private static func options(_ fileSystem: any FileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.runsBackgroundWorkInline = true
        return options
    }

    @Test("a copy holds segment files, sealed and active memtables, and deletions, as of one version")
    func copyOfEverySource() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/db", options: Self.options(fileSystem))
        try store.write { tx in
            for i in 0..<50 { try tx.put(apiKey(i), apiValue(i)) }
        }
        try store.compact()  // in segment files
        try store.write { tx in
            for i in 0..<10 { try tx.delete(apiKey(i)) }
            try tx.put(apiKey(20), apiBytes("newer"))
            try tx.put(apiBytes("only-in-memory"), apiBytes("x"))
        }
        let expected = try apiAllEntries(store)
        let report = try store.checkpoint(to: "/backup")
        #expect(report.version == store.version)
        #expect(report.sharedFiles >= 1 && report.memtableFiles == 1)
        try store.write { tx in try tx.put(apiBytes("after"), apiBytes("not in the copy")) }

        let copy = try Store(path: "/backup", options: Self.options(fileSystem))
        #expect(try apiAllEntries(copy) == expected)
        #expect(copy.version == report.version)
        let ref = try store.read { tx in try tx.reference(apiKey(20)) }
        let refused = try #require(throws: StoreError.self) { try copy.read { tx in try tx.resolve(ref) } }
        #expect(refused.code == .invalidArgument, "the copy is a store of its own")
        try copy.write { tx in try tx.put(apiBytes("copy"), apiBytes("writes")) }
        try copy.close()
        try store.close()
        let findings = try Verifier.verify(path: "/backup", fileSystem: fileSystem).findings
        #expect(findings.isEmpty, "\(findings)")
    }

    @Test("a finished copy survives power loss: its files, its directory and the directory's own entry are synced")
    func durableOnceReturned() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/db", options: Self.options(fileSystem))
        try store.write { tx in
            for i in 0..<20 { try tx.put(apiKey(i), apiValue(i)) }
        }
        try store.compact()
        try store.write { tx in try tx.put(apiKey(99), apiValue(99)) }
        let expected = try apiAllEntries(store)
        try fileSystem.createDirectory("/backups")
        try fileSystem.syncDirectory("/")
        try store.checkpoint(to: "/backups/monday")
        let afterPowerLoss = fileSystem.crashImage(.loseAllUnsynced)
        var options = Self.options(afterPowerLoss)
        options.createIfMissing = false
        let copy = try Store(path: "/backups/monday", options: options)
        #expect(try apiAllEntries(copy) == expected)
        try copy.close()
        try store.close()
    }

    @Test("the destination must be new or empty, and a suspended store refuses")
    func refusals() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/db", options: Self.options(fileSystem))
        try store.write { tx in try tx.put(apiKey(1), apiValue(1)) }
        try store.checkpoint(to: "/backup")
        let notEmpty = try #require(throws: StoreError.self) { try store.checkpoint(to: "/backup") }
        #expect(notEmpty.code == .invalidArgument)
        let intoAFile = try #require(throws: StoreError.self) { try store.checkpoint(to: "/backup/STRATA") }
        #expect(intoAFile.code == .invalidArgument)
        try fileSystem.createDirectory("/empty")
        try store.checkpoint(to: "/empty")
        try store.suspend()
        let suspended = try #require(throws: StoreError.self) { try store.checkpoint(to: "/later") }
        #expect(suspended.code == .suspended)
        _ = try store.resume()
        try store.close()
    }

    @Test("a destination whose parent does not exist is refused with .invalidArgument, creating nothing")
    func missingParent() throws {
        for fileSystem in [SimulatedFileSystem() as any FileSystem, POSIXFileSystem()] {
            let directory = try TemporaryDirectory(label: "checkpoint-parent")
            defer { directory.remove() }
            let root = fileSystem is POSIXFileSystem ? directory.path : "/"
            let store = try Store(path: fileSystem.path(root, "db"), options: Self.options(fileSystem))
            try store.write { tx in try tx.put(apiKey(1), apiValue(1)) }
            let destination = fileSystem.path(fileSystem.path(root, "missing"), "backup")
            let refused = try #require(throws: StoreError.self) { try store.checkpoint(to: destination) }
            #expect(refused.code == .invalidArgument, "\(refused)")
            #expect(refused.message.contains("parent directory does not exist"), "\(refused.message)")
            #expect(try fileSystem.kind(of: fileSystem.path(root, "missing")) == nil)
            try store.close()
        }
    }

    @Test("a copy cut short before its identity file is never taken for a store")
    func interruptedCopy() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/db", options: Self.options(fileSystem))
        try store.write { tx in try tx.put(apiKey(1), apiValue(1)) }
        try store.checkpoint(to: "/backup")
        try store.close()
        try fileSystem.removeFile("/backup/STRATA")
        let error = try #require(throws: StoreError.self) { try Store(path: "/backup", options: Self.options(fileSystem)) }
        #expect(error.code == .notAStore)
    }

    @Test("on the real file system, while a writer commits: hard links, and exactly the commits up to the copy's version")
    func whileWriting() async throws {
        try await TestEnvironment.withTemporaryDirectory("checkpoint") { directory in
            try Self.checkpointWhileWriting(directory)
        }
    }

    private static func checkpointWhileWriting(_ directory: String) throws {
        var options = StoreOptions()
        options.memtableBytes = 64 << 10
        options.durability = .buffered
        let store = try Store(path: directory + "/db", options: options)
        // Commit i puts key i: the copy at version v must hold keys 0..<v exactly.
        let writer = Thread {
            for i in 0..<4000 { try? store.write { tx in try tx.put(apiBytes(String(format: "key%06d", i)), [UInt8](repeating: 7, count: 100)) } }
        }
        writer.start()
        while store.version < 1500 { usleep(1000) }
        let report = try store.checkpoint(to: directory + "/copy")
        while !writer.isFinished { usleep(1000) }
        try store.close()
        #expect(report.sharedFiles > 0, "the store had flushed files to share")

        let copy = try Store(path: directory + "/copy")
        let keys = try copy.read { tx in Array(try tx.scan(from: [])).map(\.key) }
        #expect(keys == (0..<Int(report.version)).map { apiBytes(String(format: "key%06d", $0)) })
        try copy.close()
        let findings = try Verifier.verify(path: directory + "/copy").findings
        #expect(findings.isEmpty, "\(findings)")
    }
}
