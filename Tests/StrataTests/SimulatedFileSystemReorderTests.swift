import StrataIO
import StrataTestSupport
import Synchronization
import Testing

/// The simulator's reordered crash images, bit rot, and a process that carries on after a
/// failed sync.
@Suite struct SimulatedFileSystemReorderTests {
    /// "/d" durable; then, unsynced: "/d/old" durable beforehand; create "/d/new.tmp" (synced
    /// data), rename it to "/d/new", unlink "/d/old": the manifest install pattern.
    private func installPattern() throws -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/d")
        try fs.syncDirectory("/")
        let old = try fs.openFile("/d/old", create: true)
        try old.write([1, 2, 3], at: 0)
        try old.sync()
        try old.close()
        try fs.syncDirectory("/d")
        let fresh = try fs.openFile("/d/new.tmp", create: true)
        try fresh.write([9, 9], at: 0)
        try fresh.sync()
        try fresh.close()
        try fs.rename("/d/new.tmp", to: "/d/new")
        try fs.removeFile("/d/old")
        return fs
    }

    private func names(_ fs: SimulatedFileSystem) -> [String] {
        ((try? fs.listDirectory("/d")) ?? []).sorted()
    }

    @Test func reorderedImagesKeepAnySubsetOfEntryOperations() throws {
        let fs = try installPattern()
        #expect(fs.pendingEntryOperations.count == 3)
        let images = fs.reorderedCrashImages(seed: 1)
        let states = Set(images.map { names($0.image) })
        // Prefix images give only [old], [new.tmp, old], [new, old], [new]; reordering adds
        // the unlink without the rename, the one a missing directory sync exposes.
        #expect(states.contains(["old"]))
        #expect(states.contains(["new"]))
        #expect(states.contains([]))
        #expect(states.contains(["new.tmp"]))
        // A rename moves both names or neither; "new" never appears without its creation.
        for (kept, image) in images {
            let listed = names(image)
            #expect(!(listed.contains("new") && listed.contains("new.tmp")), "\(kept): \(listed)")
            if listed.contains("new") { #expect(image.contents(of: "/d/new") == [9, 9]) }
            if listed.contains("old") { #expect(image.contents(of: "/d/old") == [1, 2, 3]) }
        }
        // Eight subsets, less those that keep the rename without the creation it needs.
        #expect(images.count == 6)
        // Prefix crash images never drop the rename while keeping the unlink.
        for seed in 0..<200 as Range<UInt64> {
            #expect(names(fs.crashImage(.random(seed: seed))) != [])
        }
        #expect((0..<200 as Range<UInt64>).contains { names(fs.crashImage(.reordered(seed: $0))) == [] })
    }

    @Test func reorderedImagesDropNamesOfUncreatedFilesAndKeepSyncedOperations() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/d")
        try fs.syncDirectory("/")
        let file = try fs.openFile("/d/a", create: true)
        try file.write([5], at: 0)
        try fs.rename("/d/a", to: "/d/b")
        try fs.syncDirectory("/d")
        // Durable now: every image has "b".
        try fs.rename("/d/b", to: "/d/c")
        let other = try fs.openFile("/d/x", create: true)
        try fs.rename("/d/x", to: "/d/y")
        _ = other
        for (kept, image) in fs.reorderedCrashImages(seed: 3, keepingUnsyncedData: true) {
            let listed = names(image)
            #expect(listed.contains("b") != listed.contains("c"), "\(kept): \(listed)")
            #expect(!listed.contains("x") || !listed.contains("y"))
        }
        // Many operations: sampled, deterministic, none and all included.
        for index in 0..<10 { _ = try fs.openFile("/d/f\(index)", create: true) }
        let sampled = fs.reorderedCrashImages(seed: 9, exhaustiveUpTo: 4, samples: 10)
        #expect(sampled.count <= 12 && sampled.count >= 3)
        #expect(sampled.map(\.kept) == fs.reorderedCrashImages(seed: 9, exhaustiveUpTo: 4, samples: 10).map(\.kept))
        #expect(sampled.contains { $0.kept.isEmpty })
        #expect(sampled.contains { $0.kept.count == fs.pendingEntryOperations.count })
    }

    @Test func entryObserverSeesOperationsAndMayTakeImages() throws {
        let fs = SimulatedFileSystem()
        let seen = Mutex<[String]>([])
        fs.observeEntryOperations { operation in
            let images = fs.reorderedCrashImages(seed: 0).count
            seen.withLock { $0.append("\(operation) \(images)") }
        }
        try fs.createDirectory("/d")
        let file = try fs.openFile("/d/a", create: true)
        try file.write([1], at: 0)
        _ = try fs.openFile("/d/a", create: true)
        try fs.rename("/d/a", to: "/d/b")
        try fs.removeFile("/d/b")
        fs.observeEntryOperations(nil)
        try fs.createDirectory("/e")
        #expect(
            seen.withLock { $0 } == [
                // Images: every subset of the pending operations, less a rename kept without
                // the creation it needs.
                "createDirectory /d 2", "create /d/a 4", "rename /d/a -> /d/b 6", "remove /d/b 12"
            ])
    }

    @Test func rotFlipsOneBitOfSyncedBytes() throws {
        let fs = SimulatedFileSystem()
        let file = try fs.openFile("/f", create: true)
        try fs.syncDirectory("/")
        try file.write([UInt8](repeating: 0xAA, count: 100) + [UInt8](repeating: 0, count: 50), at: 0)
        try file.sync()
        try file.write([1, 2, 3], at: 200)
        let offsets = try fs.rot("/f", seed: 7, bytes: 3)
        #expect(offsets.count == 3 && offsets.allSatisfy { $0 < 100 })
        let durable = try #require(fs.durableContents(of: "/f"))
        for offset in 0..<150 {
            let expected: UInt8 = offset < 100 ? 0xAA : 0
            let differs = (durable[offset] ^ expected).nonzeroBitCount
            #expect(differs == (offsets.contains(offset) ? 1 : 0), "byte \(offset)")
        }
        // The unsynced write is still pending on top.
        #expect(fs.contents(of: "/f")?.suffix(3) == [1, 2, 3])
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/f")?.count == 150)
        #expect(try fs.rot("/f", seed: 1, within: 10..<20).allSatisfy { (10..<20).contains($0) })
        #expect(throws: IOError.self) { try fs.rot("/missing", seed: 1) }
        #expect(throws: IOError.self) { try fs.rot("/f", seed: 1, bytes: 5, within: 120..<150) }
    }

    /// A failed fdatasync fails that call only: the process goes on, later operations work,
    /// and a later sync makes the changes durable (unless the pages were lost).
    @Test func processCarriesOnAfterFailedSync() throws {
        for fault in [SimulatedFileSystem.Fault.syncError, .syncErrorLosingPages] {
            let fs = SimulatedFileSystem()
            let file = try fs.openFile("/f", create: true)
            try fs.syncDirectory("/")
            try file.write([1, 2], at: 0)
            fs.injectFault(fault, atOperation: 0, countingOnly: [.sync])
            #expect(throws: IOError.self) { try file.sync() }
            #expect(!fs.hasCrashed)
            try file.write([3], at: 2)
            try file.sync()
            let durable = fs.crashImage(.loseAllUnsynced).contents(of: "/f")
            #expect(durable == (fault == .syncError ? [1, 2, 3] : [0, 0, 3]), "\(fault)")
        }
    }
}
