import StrataIO
import StrataTestSupport
import Testing

private func filled(_ count: Int, _ value: UInt8) -> [UInt8] {
    [UInt8](repeating: value, count: count)
}

private let everyMode: [SimulatedFileSystem.CrashMode] =
    [.loseAllUnsynced, .keepAll] + (0..<200).map { .random(seed: $0) }

/// A file system with "/store/data" created and its name made durable.
private func storeWithFile() throws -> (SimulatedFileSystem, any FileHandle) {
    let fs = SimulatedFileSystem()
    try fs.createDirectory("/store")
    try fs.syncDirectory("/")
    let handle = try fs.openFile("/store/data", create: true)
    try fs.syncDirectory("/store")
    return (fs, handle)
}

@Suite struct SimulatedFileSystemTests {
    // MARK: Basic semantics

    @Test func simulatedFileSystemBasicFileOperations() throws {
        let fs = SimulatedFileSystem()
        #expect(try fs.kind(of: "/") == .directory)
        #expect(try fs.kind(of: "/missing") == nil)
        #expect(try fs.kind(of: "/missing/deeper") == nil)

        let error = #expect(throws: IOError.self) { try fs.openFile("/a", create: false) }
        #expect(error?.code == .notFound)
        #expect((#expect(throws: IOError.self) { try fs.openFile("/no/a", create: true) })?.code == .notFound)

        let file = try fs.openFile("/a", create: true)
        #expect(try fs.kind(of: "/a") == .file)
        #expect(try file.size() == 0)
        #expect(try file.read(at: 0, count: 10) == [])

        // A write past the end extends with zeros.
        try file.write([1, 2, 3], at: 5)
        #expect(try file.size() == 8)
        #expect(try file.readAll() == [0, 0, 0, 0, 0, 1, 2, 3])
        // Reads past the end return fewer bytes, or none.
        #expect(try file.read(at: 6, count: 10) == [2, 3])
        #expect(try file.read(at: 8, count: 10) == [])
        #expect(try file.read(at: 100, count: 10) == [])

        try file.truncate(to: 6)
        #expect(try file.readAll() == [0, 0, 0, 0, 0, 1])
        try file.truncate(to: 8)
        #expect(try file.readAll() == [0, 0, 0, 0, 0, 1, 0, 0])
        try file.preallocate(to: 4)  // never shrinks
        #expect(try file.size() == 8)
        try file.preallocate(to: 10_000)
        #expect(try file.size() == 10_000)

        // A second handle sees the same inode; reopening does not truncate.
        let again = try fs.openFile("//a/", create: true)
        #expect(try again.read(at: 5, count: 1) == [1])
        #expect(fs.contents(of: "/a")?.count == 10_000)

        try file.close()
        try file.close()  // idempotent, like POSIXFileHandle
        #expect((#expect(throws: IOError.self) { try file.read(at: 0, count: 1) })?.code == .closed)
        #expect((#expect(throws: IOError.self) { try file.write([1], at: 0) })?.code == .closed)
        #expect((#expect(throws: IOError.self) { try file.sync() })?.code == .closed)
        #expect(try again.size() == 10_000)
    }

    @Test func simulatedFileSystemDirectoryOperations() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/store")
        try fs.createDirectory("/store/")  // exists already: fine
        try fs.createDirectory("/store//sub")
        #expect(try fs.kind(of: "/store/sub") == .directory)
        #expect((#expect(throws: IOError.self) { try fs.createDirectory("/x/y") })?.code == .notFound)

        _ = try fs.openFile("/store/b", create: true)
        _ = try fs.openFile("/store/a", create: true)
        #expect(try fs.listDirectory("/store").sorted() == ["a", "b", "sub"])
        #expect(try fs.listDirectory("/").sorted() == ["store"])
        #expect((#expect(throws: IOError.self) { try fs.listDirectory("/nope") })?.code == .notFound)
        #expect((#expect(throws: IOError.self) { try fs.listDirectory("/store/a") })?.code == .notADirectory)
        #expect((#expect(throws: IOError.self) { try fs.createDirectory("/store/a") })?.code == .alreadyExists)
        #expect((#expect(throws: IOError.self) { try fs.openFile("/store/sub", create: true) })?.code == .isADirectory)
        #expect((#expect(throws: IOError.self) { try fs.openFile("/store/a/x", create: true) })?.code == .notADirectory)
        #expect((#expect(throws: IOError.self) { try fs.removeFile("/store/sub") })?.code == .isADirectory)
        #expect((#expect(throws: IOError.self) { try fs.removeFile("/store/zzz") })?.code == .notFound)
        #expect((#expect(throws: IOError.self) { try fs.syncDirectory("/nope") })?.code == .notFound)

        // rename replaces the destination.
        try fs.openFile("/store/a", create: false).write([1], at: 0)
        try fs.openFile("/store/b", create: false).write([2], at: 0)
        try fs.rename("/store/a", to: "/store/b")
        #expect(try fs.listDirectory("/store").sorted() == ["b", "sub"])
        #expect(fs.contents(of: "/store/b") == [1])
        #expect((#expect(throws: IOError.self) { try fs.rename("/store/a", to: "/store/c") })?.code == .notFound)
        try fs.rename("/store/b", to: "/store/sub/c")
        #expect(fs.contents(of: "/store/sub/c") == [1])

        try fs.removeFile("/store/sub/c")
        #expect(try fs.kind(of: "/store/sub/c") == nil)
        #expect(fs.contents(of: "/store/sub/c") == nil)
        #expect(fs.snapshot().directories == ["/", "/store", "/store/sub"])
    }

    @Test func simulatedFileSystemCorrupt() throws {
        let (fs, handle) = try storeWithFile()
        try handle.write(filled(100, 7), at: 0)
        try handle.sync()
        try fs.corrupt(path: "/store/data", offset: 10, xor: 0xFF)
        var expected = filled(100, 7)
        expected[10] ^= 0xFF
        #expect(try handle.readAll() == expected)
        #expect(fs.durableContents(of: "/store/data") == expected)
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/store/data") == expected)
        #expect(throws: IOError.self) { try fs.corrupt(path: "/store/data", offset: 100, xor: 1) }
        #expect(throws: IOError.self) { try fs.corrupt(path: "/store/none", offset: 0, xor: 1) }
    }

    // MARK: What survives a crash

    @Test func syncedDataSurvivesEveryCrashMode() throws {
        let (fs, handle) = try storeWithFile()
        let synced = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try handle.write(synced, at: 0)
        try handle.sync()
        // Unsynced changes after it, past the synced bytes.
        try handle.write(filled(700, 0xEE), at: 3000)
        try handle.preallocate(to: 8192)
        try handle.write(filled(100, 0xDD), at: 5000)
        _ = try fs.openFile("/store/other", create: true)

        for mode in everyMode {
            let image = fs.crashImage(mode)
            let contents = try #require(image.contents(of: "/store/data"), "\(mode)")
            #expect(Array(contents.prefix(synced.count)) == synced, "\(mode)")
            #expect(try image.kind(of: "/store") == .directory)
        }
    }

    @Test func unsyncedWritesAreLostOrKeptByMode() throws {
        let (fs, handle) = try storeWithFile()
        try handle.write(filled(10, 1), at: 0)
        try handle.sync()
        try handle.write(filled(10, 2), at: 5)
        try handle.truncate(to: 12)

        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/store/data") == filled(10, 1))
        #expect(fs.crashImage(.keepAll).contents(of: "/store/data") == filled(5, 1) + filled(7, 2))
        #expect(fs.durableContents(of: "/store/data") == filled(10, 1))
        #expect(fs.contents(of: "/store/data") == filled(5, 1) + filled(7, 2))

        // Random images lie between the two, and both extremes occur.
        var seen = Set<[UInt8]>()
        for seed in 0..<200 as Range<UInt64> {
            seen.insert(try #require(fs.crash(seed: seed).contents(of: "/store/data")))
        }
        #expect(seen.contains(filled(10, 1)))
        #expect(seen.contains(filled(5, 1) + filled(7, 2)))
    }

    @Test func tornWritesMixOldNewAndGarbagePerSector() throws {
        let sector = SimulatedFileSystem.sectorSize
        let (fs, handle) = try storeWithFile()
        let old = filled(6 * sector, 0xAA)
        try handle.write(old, at: 0)
        try handle.sync()
        // An unaligned write: partial first and last sectors.
        let start = sector / 2
        let new = filled(4 * sector, 0xBB)
        try handle.write(new, at: Int64(start))

        enum Outcome { case old, new, other }
        var outcomes = Set<Outcome>()
        var images = 0
        for seed in 0..<400 as Range<UInt64> {
            let contents = try #require(fs.crash(seed: seed).contents(of: "/store/data"))
            #expect(contents.count == old.count)
            // Bytes outside the write never change.
            #expect(contents[..<start].allSatisfy { $0 == 0xAA })
            #expect(contents[(start + new.count)...].allSatisfy { $0 == 0xAA })
            // Each sector the write touched is wholly old, wholly new, or something else.
            var sectorStart = start
            while sectorStart < start + new.count {
                let sectorEnd = min((sectorStart / sector + 1) * sector, start + new.count)
                let bytes = contents[sectorStart..<sectorEnd]
                if bytes.allSatisfy({ $0 == 0xAA }) {
                    outcomes.insert(.old)
                } else if bytes.allSatisfy({ $0 == 0xBB }) {
                    outcomes.insert(.new)
                } else {
                    outcomes.insert(.other)
                }
                sectorStart = sectorEnd
            }
            images += 1
        }
        #expect(images == 400)
        #expect(outcomes == [.old, .new, .other])
    }

    @Test func tornExtendingWriteGrowsTheFile() throws {
        let (fs, handle) = try storeWithFile()
        try handle.write(filled(4 * 512, 9), at: 0)
        var sizes = Set<Int>()
        var sawHoleSector = false
        for seed in 0..<100 as Range<UInt64> {
            let contents = try #require(fs.crash(seed: seed).contents(of: "/store/data"))
            sizes.insert(contents.count)
            // A torn extending write still sets the size; a sector that kept its old bytes
            // reads as zeros.
            for sector in 0..<(contents.count / 512) where contents[(sector * 512)..<((sector + 1) * 512)].allSatisfy({ $0 == 0 }) {
                sawHoleSector = true
            }
        }
        #expect(sizes == [0, 2048])
        #expect(sawHoleSector)
    }

    @Test func newFileNeedsDirectorySync() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/store")
        let handle = try fs.openFile("/store/a", create: true)
        try handle.write([1, 2, 3], at: 0)
        try handle.sync()  // the data is durable, the names are not

        #expect(try fs.crashImage(.loseAllUnsynced).kind(of: "/store") == nil)
        #expect(try fs.crashImage(.keepAll).kind(of: "/store/a") == .file)

        try fs.syncDirectory("/")
        #expect(try fs.crashImage(.loseAllUnsynced).kind(of: "/store") == .directory)
        #expect(try fs.crashImage(.loseAllUnsynced).kind(of: "/store/a") == nil)
        var disappeared = false
        for seed in 0..<50 as Range<UInt64> where try fs.crash(seed: seed).kind(of: "/store/a") == nil {
            disappeared = true
        }
        #expect(disappeared)

        try fs.syncDirectory("/store")
        for mode in everyMode {
            #expect(fs.crashImage(mode).contents(of: "/store/a") == [1, 2, 3], "\(mode)")
        }
    }

    @Test func renameWithoutDirectorySyncMayBeUndone() throws {
        let fs = SimulatedFileSystem()
        let current = try fs.openFile("/current", create: true)
        try current.write([1], at: 0)
        try current.sync()
        let temporary = try fs.openFile("/current.tmp", create: true)
        try temporary.write([2], at: 0)
        try temporary.sync()
        try fs.syncDirectory("/")

        try fs.rename("/current.tmp", to: "/current")
        #expect(fs.contents(of: "/current") == [2])
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/current") == [1])
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/current.tmp") == [2])
        #expect(fs.crashImage(.keepAll).contents(of: "/current") == [2])
        #expect(fs.crashImage(.keepAll).contents(of: "/current.tmp") == nil)

        // A rename within one directory is atomic: old state or new state, never a mix.
        var states = Set<[String]>()
        for seed in 0..<100 as Range<UInt64> {
            let image = fs.crash(seed: seed)
            let names = try image.listDirectory("/").sorted()
            states.insert(names)
            if names == ["current"] {
                #expect(image.contents(of: "/current") == [2])
            } else {
                #expect(names == ["current", "current.tmp"])
                #expect(image.contents(of: "/current") == [1])
            }
        }
        #expect(states.count == 2)

        try fs.syncDirectory("/")
        for mode in everyMode {
            let image = fs.crashImage(mode)
            #expect(image.contents(of: "/current") == [2], "\(mode)")
            #expect(try image.kind(of: "/current.tmp") == nil, "\(mode)")
        }
    }

    @Test func renameAcrossDirectoriesTouchesBoth() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/a")
        try fs.createDirectory("/b")
        let handle = try fs.openFile("/a/f", create: true)
        try handle.write([5], at: 0)
        try handle.sync()
        try fs.syncDirectory("/a")
        try fs.syncDirectory("/")
        try fs.rename("/a/f", to: "/b/f")

        try fs.syncDirectory("/b")  // the new name is durable, the removal of the old one is not
        let image = fs.crashImage(.loseAllUnsynced)
        #expect(image.contents(of: "/a/f") == [5])
        #expect(image.contents(of: "/b/f") == [5])
        try fs.syncDirectory("/a")
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/a/f") == nil)
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/b/f") == [5])
    }

    @Test func removedFileComesBackWithoutDirectorySync() throws {
        let (fs, handle) = try storeWithFile()
        try handle.write([1, 2], at: 0)
        try handle.sync()
        try handle.close()
        try fs.removeFile("/store/data")
        #expect(try fs.kind(of: "/store/data") == nil)
        // Syncing another directory must not forget the removed file's bytes.
        try fs.syncDirectory("/")
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/store/data") == [1, 2])
        #expect(fs.crashImage(.keepAll).contents(of: "/store/data") == nil)
        try fs.syncDirectory("/store")
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/store/data") == nil)
    }

    @Test func openHandleOnRemovedFileStillWorks() throws {
        let (fs, handle) = try storeWithFile()
        try fs.removeFile("/store/data")
        try fs.syncDirectory("/store")
        try handle.write([3], at: 0)
        #expect(try handle.readAll() == [3])
        #expect(try fs.kind(of: "/store/data") == nil)
    }

    @Test func crashImageHasNoHandlesOrLocksAndIsIndependent() throws {
        let (fs, handle) = try storeWithFile()
        let lock = try fs.lockFile("/store/LOCK")
        try fs.syncDirectory("/store")
        try handle.write([1], at: 0)
        try handle.sync()

        let image = fs.crashImage(.keepAll)
        let imageLock = try image.lockFile("/store/LOCK")  // the original's lock is not held here
        try imageLock.unlock()
        try image.openFile("/store/data", create: false).write([9], at: 0)
        #expect(fs.contents(of: "/store/data") == [1])
        try handle.write([2], at: 0)
        #expect(image.contents(of: "/store/data") == [9])
        try lock.unlock()
    }

    @Test func largePreallocationIsCheap() throws {
        let (fs, handle) = try storeWithFile()
        try handle.preallocate(to: 64 << 20)
        try handle.sync()
        for index in 0..<100 {
            try handle.write(filled(100, UInt8(index)), at: Int64(index * 100))
            try handle.sync()
            try handle.write([0xFF], at: Int64(index * 100 + 100))
            let image = fs.crash(seed: UInt64(index))
            let file = try image.openFile("/store/data", create: false)
            #expect(try file.size() == 64 << 20)
            #expect(try file.read(at: Int64(index * 100), count: 100) == filled(100, UInt8(index)))
        }
    }

    // MARK: Crash injection

    /// A small store-like workload: calls `step` after every operation.
    private func workload(_ fs: SimulatedFileSystem, step: () -> Void) throws {
        try fs.createDirectory("/store")
        step()
        try fs.syncDirectory("/")
        step()
        let lock = try fs.lockFile("/store/LOCK")
        step()
        let wal = try fs.openFile("/store/wal", create: true)
        step()
        try wal.preallocate(to: 4096)
        step()
        try fs.syncDirectory("/store")
        step()
        for index in 0..<4 {
            try wal.write(filled(300, UInt8(index + 1)), at: Int64(index * 300))
            step()
            if index % 2 == 1 {
                try wal.sync()
                step()
            }
        }
        _ = try wal.read(at: 0, count: 10)
        step()
        let temporary = try fs.openFile("/store/manifest.tmp", create: true)
        step()
        try temporary.write([1, 2, 3], at: 0)
        step()
        try temporary.sync()
        step()
        try fs.rename("/store/manifest.tmp", to: "/store/manifest")
        step()
        try fs.syncDirectory("/store")
        step()
        try wal.truncate(to: 600)
        step()
        try wal.sync()
        step()
        try fs.removeFile("/store/manifest")
        step()
        _ = try fs.listDirectory("/store")
        step()
        try lock.unlock()
        step()
    }

    @Test func crashInjectionStopsAtOperationK() throws {
        // Reference run: the live and durable state after each count of mutating operations.
        let reference = SimulatedFileSystem()
        var live: [Int: SimulatedFileSystem.Snapshot] = [:]
        var durable: [Int: SimulatedFileSystem.Snapshot] = [:]
        let record = {
            live[reference.operationCount] = reference.snapshot()
            durable[reference.operationCount] = reference.crashImage(.loseAllUnsynced).snapshot()
        }
        record()
        try workload(reference, step: record)
        let total = reference.operationCount
        #expect(total == 20)
        #expect(!reference.hasCrashed)

        for k in 0..<total {
            let fs = SimulatedFileSystem()
            fs.failAfter(operations: k)
            let error = #expect(throws: IOError.self) { try workload(fs, step: {}) }
            #expect(error?.code == .crashed, "k=\(k)")
            #expect(fs.hasCrashed)
            #expect(fs.operationCount == k)
            #expect(fs.snapshot() == live[k], "k=\(k)")
            #expect(fs.crashImage(.loseAllUnsynced).snapshot() == durable[k], "k=\(k)")
            // Everything fails from now on, reads and locks included.
            #expect((#expect(throws: IOError.self) { try fs.kind(of: "/") })?.code == .crashed)
            #expect((#expect(throws: IOError.self) { try fs.listDirectory("/") })?.code == .crashed)
            #expect((#expect(throws: IOError.self) { try fs.lockFile("/x") })?.code == .crashed)
            #expect((#expect(throws: IOError.self) { try fs.openFile("/", create: false) })?.code == .crashed)
            // The image of a crashed file system works normally.
            let image = fs.crash(seed: UInt64(k))
            #expect(!image.hasCrashed)
            #expect(try image.kind(of: "/") == .directory)
        }

        // failAfter past the end: the workload completes.
        let fs = SimulatedFileSystem()
        fs.failAfter(operations: total)
        try workload(fs, step: {})
        #expect(!fs.hasCrashed)
    }

    @Test func crashInjectionFailsReadsOnOpenHandles() throws {
        let (fs, handle) = try storeWithFile()
        try handle.write([1], at: 0)
        fs.failAfter(operations: fs.operationCount + 1)
        try handle.sync()
        #expect((#expect(throws: IOError.self) { try handle.write([2], at: 0) })?.code == .crashed)
        #expect((#expect(throws: IOError.self) { try handle.read(at: 0, count: 1) })?.code == .crashed)
        #expect((#expect(throws: IOError.self) { try handle.size() })?.code == .crashed)
        #expect(fs.contents(of: "/store/data") == [1])
        #expect(fs.crashImage(.loseAllUnsynced).contents(of: "/store/data") == [1])
    }

    @Test func powerOffFailsEverything() throws {
        let (fs, handle) = try storeWithFile()
        fs.powerOff()
        #expect(fs.hasCrashed)
        #expect((#expect(throws: IOError.self) { try handle.read(at: 0, count: 1) })?.code == .crashed)
        #expect((#expect(throws: IOError.self) { try fs.kind(of: "/store") })?.code == .crashed)
    }

    // MARK: Determinism

    /// Many unsynced changes of every kind, so random images differ.
    private func busyFileSystem() throws -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/store")
        try fs.syncDirectory("/")
        for name in ["a", "b", "c"] {
            let handle = try fs.openFile("/store/" + name, create: true)
            try handle.write(filled(1500, 1), at: 0)
            try handle.sync()
            for index in 0..<6 {
                try handle.write(filled(700, UInt8(index + 2)), at: Int64(index * 400))
            }
            try handle.truncate(to: 2000)
        }
        try fs.rename("/store/a", to: "/store/z")
        try fs.createDirectory("/store/sub")
        try fs.removeFile("/store/b")
        return fs
    }

    @Test func sameSeedGivesSameCrashImage() throws {
        let first = try busyFileSystem()
        let second = try busyFileSystem()  // an identical run in another instance
        var distinct = Set<[String: [UInt8]]>()
        for seed in 0..<100 as Range<UInt64> {
            let image = first.crash(seed: seed).snapshot()
            #expect(first.crash(seed: seed).snapshot() == image)
            #expect(second.crash(seed: seed).snapshot() == image)
            distinct.insert(image.files)
        }
        #expect(distinct.count > 50)
        #expect(first.crashImage(.keepAll).snapshot() == first.snapshot())
    }

    @Test func seededRandomIsDeterministic() {
        var a = SeededRandom(seed: 42)
        var b = SeededRandom(seed: 42)
        let sequence = (0..<10).map { _ in a.next() }
        #expect(sequence == (0..<10).map { _ in b.next() })
        var c = SeededRandom(seed: 43)
        #expect(sequence != (0..<10).map { _ in c.next() })
        var d = SeededRandom(seed: 1)
        let values = (0..<1000).map { _ in Int.random(in: 0..<10, using: &d) }
        #expect(Set(values) == Set(0..<10))
        #expect(d.bytes(count: 13).count == 13)
        var e = SeededRandom(seed: 1, stream: 1)
        var f = SeededRandom(seed: 1, stream: 2)
        #expect(e.next() != f.next())
    }

    // MARK: Locks and faults

    @Test func secondLockWouldBlock() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/store")
        let lock = try fs.lockFile("/store/LOCK")
        #expect(try fs.kind(of: "/store/LOCK") == .file)
        #expect((#expect(throws: IOError.self) { try fs.lockFile("/store/LOCK") })?.code == .wouldBlock)
        #expect((#expect(throws: IOError.self) { try fs.lockFile("/store//LOCK/") })?.code == .wouldBlock)
        try lock.unlock()
        try lock.unlock()  // idempotent
        let again = try fs.lockFile("/store/LOCK")
        try again.unlock()
        // Dropping a lock releases it, like closing a descriptor.
        _ = try fs.lockFile("/store/LOCK")
        try fs.lockFile("/store/LOCK").unlock()
    }

    @Test func failNextFailsExactlyOneOperation() throws {
        let (fs, handle) = try storeWithFile()
        try handle.write([1], at: 0)

        fs.failNext(.sync, code: .other)
        let count = fs.operationCount
        #expect((#expect(throws: IOError.self) { try handle.sync() })?.code == .other)
        #expect(fs.operationCount == count)
        #expect(fs.durableContents(of: "/store/data") == [])
        try handle.sync()
        #expect(fs.durableContents(of: "/store/data") == [1])

        fs.failNext(.write, code: .noSpace)
        #expect((#expect(throws: IOError.self) { try handle.write([2, 2], at: 0) })?.code == .noSpace)
        #expect(fs.contents(of: "/store/data") == [1])
        try handle.write([3, 3], at: 0)
        #expect(fs.contents(of: "/store/data") == [3, 3])

        fs.failNext(.read)
        #expect((#expect(throws: IOError.self) { try handle.read(at: 0, count: 1) })?.code == .other)
        #expect(try handle.read(at: 0, count: 1) == [3])

        fs.failNext(.rename)
        #expect(throws: IOError.self) { try fs.rename("/store/data", to: "/store/moved") }
        #expect(try fs.kind(of: "/store/data") == .file)
        try fs.rename("/store/data", to: "/store/moved")
        #expect(try fs.kind(of: "/store/moved") == .file)
        #expect(!fs.hasCrashed)
    }

    @Test func recordedOperationsNameEveryOperation() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/store")
        let before = fs.totalOperationCount
        fs.recordOperations(true)
        let handle = try fs.openFile("/store/data", create: true)
        try handle.write([1, 2], at: 0)
        _ = try handle.read(at: 0, count: 2)
        try handle.sync()
        _ = try fs.openFile("/store/data", create: false)
        #expect((#expect(throws: IOError.self) { try fs.openFile("/store/missing", create: false) })?.code == .notFound)
        let records = fs.recordedOperations
        #expect(records.map(\.kind) == [.open, .write, .read, .sync, .open, .open])
        #expect(records.map(\.index) == Array(before..<before + 6))
        #expect(records.map(\.creates) == [true, false, false, false, false, false])
        #expect(records[1].path == "/store/data")
        #expect(records[0].applicableFaults == [.openError, .diskFull])
        #expect(records[4].applicableFaults == [.openError])
        #expect(records[1].applicableFaults == [.writeError, .diskFull, .shortWrite])
        // Failed operations count too.
        #expect(fs.totalOperationCount == before + 6)
        fs.recordOperations(false)
        #expect(fs.recordedOperations.isEmpty)
    }

    @Test func injectedFaultFailsTheAimedOperation() throws {
        let (fs, handle) = try storeWithFile()
        try handle.write([1, 1, 1, 1], at: 0)
        try handle.sync()

        // Counting only writes: the second write from now.
        fs.injectFault(.writeError, atOperation: 1, countingOnly: [.write])
        #expect(fs.faultOutcome == .waiting)
        try handle.write([2], at: 0)
        _ = try handle.read(at: 0, count: 1)
        #expect((#expect(throws: IOError.self) { try handle.write([3], at: 1) })?.code == .other)
        guard case .fired(let record) = fs.faultOutcome else {
            Issue.record("the fault did not fire: \(String(describing: fs.faultOutcome))")
            return
        }
        #expect(record.kind == .write && record.path == "/store/data")
        #expect(fs.contents(of: "/store/data") == [2, 1, 1, 1])
        try handle.write([3], at: 1)  // one-shot
        #expect(fs.contents(of: "/store/data") == [2, 3, 1, 1])

        // A short write keeps the first half, then reports a full disk.
        fs.injectFault(.shortWrite, atOperation: 0)
        #expect((#expect(throws: IOError.self) { try handle.write([9, 9, 9, 9, 9], at: 0) })?.code == .noSpace)
        #expect(fs.contents(of: "/store/data") == [9, 9, 1, 1])

        // A failed sync makes nothing durable; the changes stay pending.
        let durable = fs.durableContents(of: "/store/data")
        fs.injectFault(.syncError, atOperation: 0)
        #expect((#expect(throws: IOError.self) { try handle.sync() })?.code == .other)
        #expect(fs.durableContents(of: "/store/data") == durable)
        #expect(fs.contents(of: "/store/data") == [9, 9, 1, 1])
        try handle.sync()
        #expect(fs.durableContents(of: "/store/data") == [9, 9, 1, 1])

        // A full disk at an open fails only an open that creates; nothing is created.
        fs.injectFault(.diskFull, atOperation: 0, countingOnly: [.open])
        #expect((#expect(throws: IOError.self) { try fs.openFile("/store/new", create: true) })?.code == .noSpace)
        #expect(try fs.kind(of: "/store/new") == nil)
        fs.injectFault(.diskFull, atOperation: 0, countingOnly: [.open])
        _ = try fs.openFile("/store/data", create: true)
        guard case .missed(let missed) = fs.faultOutcome else {
            Issue.record("a full disk at an open of an existing file should miss: \(String(describing: fs.faultOutcome))")
            return
        }
        #expect(missed.kind == .open && !missed.creates)

        // A fault aimed at an operation that cannot have it misses; nothing fails.
        fs.injectFault(.renameError, atOperation: 0)
        _ = try handle.read(at: 0, count: 1)
        #expect({ if case .missed = fs.faultOutcome { true } else { false } }())

        // Cleared faults never fire.
        _ = try fs.openFile("/store/spare", create: true)
        fs.injectFault(.unlinkError, atOperation: 0)
        fs.failNext(.sync)
        fs.clearFaults()
        try fs.removeFile("/store/spare")
        try handle.sync()
        #expect(fs.faultOutcome == nil)
        #expect(!fs.hasCrashed)
    }

    // MARK: Threads

    @Test func concurrentUseFromManyTasks() async throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/store")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    let handle = try fs.openFile("/store/f\(task)", create: true)
                    for index in 0..<200 {
                        try handle.write([UInt8(task), UInt8(index)], at: Int64(index * 2))
                        if index % 10 == 0 { try handle.sync() }
                        _ = try handle.read(at: 0, count: 2)
                        _ = try fs.listDirectory("/store")
                    }
                    try handle.close()
                }
            }
            try await group.waitForAll()
        }
        for task in 0..<8 {
            let contents = try #require(fs.contents(of: "/store/f\(task)"))
            #expect(contents.count == 400)
            #expect(contents[398] == UInt8(task) && contents[399] == 199)
        }
        #expect(fs.operationCount == 1 + 8 * (1 + 200 + 20))
    }
}
