import Strata
import StrataIO
import StrataTestSupport
import Testing

/// A file the open means to remove may be gone by then: in one process, a snapshot released
/// while the store is suspended removes its obsolete segment file itself, and the reload on
/// `resume()` has listed the directory just before. The soak met it as a failed resume
/// ("unlink ...: No such file or directory"): the open must take the file as removed.
@Suite struct VanishingFileTests {
    /// A store at "/store" on a simulated file system whose key [1] went from [1] to [2],
    /// each compacted into its own segment file, and a snapshot that holds the first,
    /// obsolete one.
    static func snapshotHoldingAnObsoleteFile() throws -> (Store, Snapshot, SimulatedFileSystem, StoreOptions) {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        let store = try Store(path: "/store", options: options)
        try store.write { tx in try tx.put([1], [1]) }
        try store.compact()
        let snapshot = store.snapshot()
        try store.write { tx in try tx.put([1], [2]) }
        try store.compact()
        return (store, snapshot, fileSystem, options)
    }

    @Test("a file gone between the listing and its removal does not fail the open")
    func unreferencedFileAlreadyGone() throws {
        let (first, snapshot, fileSystem, options) = try Self.snapshotHoldingAnObsoleteFile()
        try first.close()
        let segmentFiles = try fileSystem.listDirectory("/store").filter { $0.hasPrefix("seg-") }
        #expect(segmentFiles.count == 2, "the snapshot should keep its obsolete file: \(segmentFiles)")

        fileSystem.failNext(.removeFile, code: .notFound)
        let second = try Store(path: "/store", options: options)
        #expect(try second.read { tx in try tx.get([1]) } == [2])
        try second.close()
        snapshot.close()
    }

    /// The same release, while the store is suspended, must not make `resume()` believe
    /// another process wrote the store: the CI's freeze-and-kill suite met a resume that
    /// reloaded ("reloaded 2232 2232") with no other process near the store.
    @Test("a snapshot released while suspended does not make resume() reload")
    func obsoleteFileRemovedWhileSuspended() throws {
        let (store, snapshot, fileSystem, _) = try Self.snapshotHoldingAnObsoleteFile()
        try store.suspend()
        let before = try fileSystem.listDirectory("/store").filter { $0.hasPrefix("seg-") }
        snapshot.close()
        let after = try fileSystem.listDirectory("/store").filter { $0.hasPrefix("seg-") }
        #expect(after.count == before.count - 1, "the release should remove the obsolete file: \(before) → \(after)")
        #expect(try store.resume() == .unchanged)
        #expect(try store.read { tx in try tx.get([1]) } == [2])
        try store.close()
    }
}
