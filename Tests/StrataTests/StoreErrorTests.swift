import Dispatch
import Foundation
@_spi(Testing) import Strata
import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

/// Expects `body` to throw a `StoreError` with `code` and a message, and returns it.
@discardableResult
private func expectStoreError(
    _ code: StoreError.Code, _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> StoreError? {
    let error = #expect(throws: StoreError.self, comment, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, "got \(String(describing: error))", sourceLocation: sourceLocation)
    #expect(error?.message.isEmpty == false, sourceLocation: sourceLocation)
    return error
}

@discardableResult
private func expectStoreErrorAsync(
    _ code: StoreError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> StoreError? {
    let error = await #expect(throws: StoreError.self, sourceLocation: sourceLocation) { try await body() }
    #expect(error?.code == code, "got \(String(describing: error))", sourceLocation: sourceLocation)
    #expect(error?.message.isEmpty == false, sourceLocation: sourceLocation)
    return error
}

/// The outcome of an `asyncWrite`, waited for.
private func asyncWriteResult(_ store: Store, _ body: @escaping @Sendable (WriteTransaction) throws -> Void) -> (any Error)? {
    let errors = APITestCollector<any Error>()
    let done = DispatchSemaphore(value: 0)
    store.asyncWrite(
        body,
        completion: { result in
            if case .failure(let error) = result { errors.append(error) }
            done.signal()
        })
    done.wait()
    return errors.values.first
}

private func writeFile(_ fs: SimulatedFileSystem, _ path: String, _ bytes: [UInt8]) throws {
    let handle = try fs.openFile(path, create: true)
    try handle.truncate(to: 0)
    try handle.write(bytes, at: 0)
    try handle.sync()
    try handle.close()
}

@Suite struct StoreErrorTests {
    // MARK: Arguments

    @Test func emptyKeyIsRefusedEverywhere() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        expectStoreError(.invalidArgument) { _ = try store.read { try $0.get([]) } }
        expectStoreError(.invalidArgument) { _ = try store.read { try $0.get("") } }
        expectStoreError(.invalidArgument) { try store.write { tx in try tx.put([], apiBytes("v")) } }
        expectStoreError(.invalidArgument) { try store.write { tx in try tx.put("", "v") } }
        expectStoreError(.invalidArgument) { try store.write { tx in try tx.delete([]) } }
        expectStoreError(.invalidArgument) { try store.write { tx in _ = try tx.get([]) } }
        // Nothing was committed.
        #expect(store.version == 0)
        #expect(try apiAllEntries(store).isEmpty)
    }

    @Test func oversizedKeyIsRefused() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let longest = [UInt8](repeating: 0x61, count: StoreLimits.maxKeyBytes)
        let tooLong = longest + [0x61]
        let error = expectStoreError(.invalidArgument) { try store.write { tx in try tx.put(tooLong, apiBytes("v")) } }
        #expect(error?.message.contains("\(StoreLimits.maxKeyBytes)") == true)
        expectStoreError(.invalidArgument) { try store.write { tx in try tx.delete(tooLong) } }
        expectStoreError(.invalidArgument) { _ = try store.read { try $0.get(tooLong) } }
        expectStoreError(.invalidArgument) { _ = try store.write { tx in try tx.get(tooLong) } }
        expectStoreError(.invalidArgument) { _ = try store.read { try $0.scan(from: tooLong) } }
        expectStoreError(.invalidArgument) { _ = try store.read { try $0.scan(from: [], to: tooLong) } }
        expectStoreError(.invalidArgument) { _ = try store.write { tx in try tx.deleteRange(from: tooLong, to: nil) } }
        #expect(store.version == 0)
        // The longest allowed key works.
        try store.write { tx in try tx.put(longest, apiBytes("v")) }
        #expect(try store.read { try $0.get(longest) } == apiBytes("v"))
    }

    @Test func oversizedValueIsRefused() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        let largest = [UInt8](repeating: 0x5A, count: StoreLimits.maxValueBytes)
        let error = expectStoreError(.invalidArgument) {
            try store.write { tx in try tx.put(apiBytes("big"), largest + [0]) }
        }
        #expect(error?.message.contains("\(StoreLimits.maxValueBytes)") == true)
        #expect(store.version == 0)
        // Exactly the limit is allowed, and replays.
        try store.write { tx in try tx.put(apiBytes("big"), largest) }
        #expect(try store.read { try $0.get(apiBytes("big"))?.count } == StoreLimits.maxValueBytes)
        try store.close()
        let reopened = try APITestSimulated.open(fs)
        defer { try? reopened.close() }
        #expect(try reopened.read { try $0.get(apiBytes("big")) } == largest)
    }

    @Test func refusedPutLeavesTheTransactionUsable() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let caught = try store.write { tx -> StoreError? in
            try tx.put(apiBytes("ok"), apiBytes("1"))
            do {
                try tx.put([], apiBytes("bad"))
                return nil
            } catch let error as StoreError {
                try tx.put(apiBytes("also-ok"), apiBytes("2"))
                return error
            }
        }
        #expect(caught?.code == .invalidArgument)
        #expect(try apiAllEntries(store).map(\.key) == [apiBytes("also-ok"), apiBytes("ok")])
    }

    // MARK: Lifecycle

    @Test func useAfterCloseThrowsClosed() async throws {
        let store = try APITestSimulated.open()
        try await store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        let snapshot = store.snapshot()
        try store.close()
        expectStoreError(.closed) { _ = try store.read { try $0.get(apiBytes("a")) } }
        expectStoreError(.closed) { try store.write { tx in try tx.put(apiBytes("b"), apiBytes("2")) } }
        expectStoreError(.closed) { _ = try store.snapshot().read { _ in } }
        expectStoreError(.closed) { try store.sync() }
        expectStoreError(.closed) { _ = try store.stats() }
        expectStoreError(.closed) { try snapshot.read { _ in } }
        await expectStoreErrorAsync(.closed) { _ = try await store.read { try $0.get(apiBytes("a")) } }
        await expectStoreErrorAsync(.closed) { try await store.write { tx in try tx.put(apiBytes("b"), apiBytes("2")) } }
        await expectStoreErrorAsync(.closed) { try await store.sync() }
        let asyncError = asyncWriteResult(store) { tx in try tx.put(apiBytes("b"), apiBytes("2")) }
        #expect((asyncError as? StoreError)?.code == .closed)
        // Closing again is fine.
        try store.close()
        try store.close()
    }

    @Test func closeMakesBufferedWritesDurable() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try store.write(durability: .buffered) { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        try store.close()
        let reopened = try Store(path: APITestSimulated.path, options: APITestSimulated.options(fs.crashImage(.loseAllUnsynced)))
        defer { try? reopened.close() }
        #expect(try reopened.read { try $0.get(apiBytes("a")) } == apiBytes("1"))
    }

    @Test func writeTransactionUsedAfterItsClosureReturned() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        var leaked: WriteTransaction?
        try store.write { tx in
            try tx.put(apiBytes("a"), apiBytes("1"))
            leaked = tx
        }
        let tx = try #require(leaked)
        expectStoreError(.invalidArgument) { _ = try tx.get(apiBytes("a")) }
        expectStoreError(.invalidArgument) { try tx.put(apiBytes("b"), apiBytes("2")) }
        expectStoreError(.invalidArgument) { try tx.delete(apiBytes("a")) }
        expectStoreError(.invalidArgument) { _ = try tx.scan(from: []) }
        expectStoreError(.invalidArgument) { _ = try tx.deleteRange(from: [], to: nil) }
        // Nothing the stale transaction tried reached the store.
        #expect(try apiAllEntries(store) == [Entry(key: apiBytes("a"), value: apiBytes("1"))])
        #expect(store.version == 1)

        // A transaction whose closure threw is dead too.
        var failed: WriteTransaction?
        _ = try? store.write { tx in
            failed = tx
            throw CancellationError()
        }
        let dead = try #require(failed)
        expectStoreError(.invalidArgument) { try dead.put(apiBytes("c"), apiBytes("3")) }
    }

    @Test func nestedSynchronousCallsFromAWriteClosureAreRefused() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let errors = try store.write { tx -> [StoreError?] in
            try tx.put(apiBytes("outer"), apiBytes("1"))
            var errors: [StoreError?] = []
            do {
                try store.write { inner in try inner.put(apiBytes("inner"), apiBytes("2")) }
                errors.append(nil)
            } catch { errors.append(error as? StoreError) }
            do {
                try store.sync()
                errors.append(nil)
            } catch { errors.append(error as? StoreError) }
            do {
                try store.close()
                errors.append(nil)
            } catch { errors.append(error as? StoreError) }
            return errors
        }
        #expect(errors.count == 3)
        for error in errors {
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.isEmpty == false)
        }
        // The outer transaction committed; the store is still open and working.
        #expect(try store.read { try $0.get(apiBytes("outer")) } == apiBytes("1"))
        #expect(try store.read { try $0.get(apiBytes("inner")) } == nil)
        try store.write { tx in try tx.put(apiBytes("later"), apiBytes("3")) }
        try store.sync()
        #expect(store.version == 2)
    }

    @Test func asyncWriteFromAWriteClosureRunsAfterIt() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let done = DispatchSemaphore(value: 0)
        let collector = APITestCollector<UInt64>()
        try store.write { tx in
            try tx.put(apiBytes("outer"), apiBytes("1"))
            store.asyncWrite(
                { inner -> UInt64 in
                    try inner.put(apiBytes("inner"), apiBytes("2"))
                    return inner.version
                },
                completion: { result in
                    collector.append((try? result.get()) ?? 999)
                    done.signal()
                })
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        // The queued transaction ran after the outer one committed, and saw it.
        #expect(collector.values == [1])
        #expect(try store.read { try $0.get(apiBytes("inner")) } == apiBytes("2"))
    }

    @Test func secondStoreOnTheSamePathIsLocked() throws {
        try APITestDirectory.with { directory in
            let path = directory + "/store"
            let first = try Store(path: path, options: APITestDirectory.options())
            try first.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
            let error = expectStoreError(.locked) { _ = try Store(path: path, options: APITestDirectory.options()) }
            #expect(error?.file != nil)
            // Refused again; the first store is unaffected.
            expectStoreError(.locked) { _ = try Store(path: path, options: APITestDirectory.options()) }
            try first.write { tx in try tx.put(apiBytes("b"), apiBytes("2")) }
            try first.close()
            let second = try Store(path: path, options: APITestDirectory.options())
            defer { try? second.close() }
            #expect(try apiAllEntries(second).count == 2)
        }
    }

    @Test func secondStoreOnTheSameSimulatedPathIsLocked() throws {
        let fs = SimulatedFileSystem()
        let first = try APITestSimulated.open(fs)
        expectStoreError(.locked) { _ = try APITestSimulated.open(fs) }
        try first.close()
        let second = try APITestSimulated.open(fs)
        try second.close()
    }

    // MARK: Not a store

    @Test func regularFileIsNotAStore() throws {
        try APITestDirectory.with { directory in
            let path = directory + "/file.txt"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("hello".utf8)))
            let error = expectStoreError(.notAStore) { _ = try Store(path: path, options: APITestDirectory.options()) }
            #expect(error?.file == path)
            // The file is untouched.
            #expect(FileManager.default.contents(atPath: path) == Data("hello".utf8))
        }
    }

    @Test func directoryOfOtherFilesIsNotAStore() throws {
        try APITestDirectory.with { directory in
            try Data("notes".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
            try FileManager.default.createDirectory(atPath: directory + "/photos", withIntermediateDirectories: false)
            let error = expectStoreError(.notAStore) { _ = try Store(path: directory, options: APITestDirectory.options()) }
            #expect(error?.file == directory)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(names.contains("notes.txt"))
            #expect(!names.contains(StoreIdentityFormat.fileName))
            #expect(!names.contains { $0.hasPrefix("wal-") })
        }
    }

    @Test func storeFilesWithoutTheIdentityFileAreNotAStore() throws {
        let fs = SimulatedFileSystem()
        try APITestSimulated.open(fs).close()
        try fs.removeFile(APITestSimulated.path + "/" + StoreIdentityFormat.fileName)
        expectStoreError(.notAStore) { _ = try APITestSimulated.open(fs) }
    }

    @Test func missingPathWithoutCreateIfMissing() throws {
        try APITestDirectory.with { directory in
            let path = directory + "/absent"
            var options = APITestDirectory.options()
            options.createIfMissing = false
            expectStoreError(.notAStore) { _ = try Store(path: path, options: options) }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func missingParentDirectory() throws {
        try APITestDirectory.with { directory in
            let error = #expect(throws: StoreError.self) {
                _ = try Store(path: directory + "/no/such/parent", options: APITestDirectory.options())
            }
            #expect(error?.message.isEmpty == false)
        }
    }

    @Test func tooSmallSegmentSizeIsAnInvalidArgument() {
        expectStoreError(.invalidArgument) { _ = try APITestSimulated.open(walSegmentBytes: 4096) }
    }

    // MARK: Damaged or foreign files

    @Test(arguments: [false, true])
    func walSegmentFromANewerMajorVersion(withRecords: Bool) throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        if withRecords { try store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) } }
        try store.close()
        let segment = APITestSimulated.segment(1)
        let handle = try fs.openFile(segment, create: false)
        try handle.write(WALFormat.SegmentHeader(segmentNumber: 1, majorVersion: 3, minorVersion: 5).encoded(), at: 0)
        try handle.sync()
        try handle.close()
        let error = expectStoreError(.formatVersion) { _ = try APITestSimulated.open(fs) }
        #expect(error?.message.contains("3.5") == true, "message: \(error?.message ?? "")")
        #expect(error?.file == segment)
        // The file was left alone for a newer Strata to read.
        #expect(fs.contents(of: segment) != nil)
    }

    @Test func walSegmentWithWrongMagic() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        try store.close()
        let segment = APITestSimulated.segment(1)
        let handle = try fs.openFile(segment, create: false)
        try handle.write(Array("NOTAWAL!".utf8), at: 0)
        try handle.sync()
        try handle.close()
        let error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs) }
        // The engine reports another kind of file as .notAStore; .corruption would do too.
        #expect(error?.code == .notAStore || error?.code == .corruption, "got \(String(describing: error))")
        #expect(error?.file == segment)
        #expect(error?.message.isEmpty == false)
    }

    @Test func walSegmentWithDamagedHeader() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        try store.close()
        let segment = APITestSimulated.segment(1)
        try fs.corrupt(path: segment, offset: 20, xor: 0x04)
        let error = expectStoreError(.corruption) { _ = try APITestSimulated.open(fs) }
        #expect(error?.file == segment)
        #expect(error?.offset == 28)
    }

    @Test func walSegmentWhoseHeaderNamesAnotherNumber() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        try store.close()
        let segment = APITestSimulated.segment(1)
        let handle = try fs.openFile(segment, create: false)
        try handle.write(WALFormat.SegmentHeader(segmentNumber: 7).encoded(), at: 0)
        try handle.sync()
        try handle.close()
        let error = expectStoreError(.corruption) { _ = try APITestSimulated.open(fs) }
        #expect(error?.file == segment)
    }

    @Test func damagedIdentityFile() throws {
        let identity = APITestSimulated.path + "/" + StoreIdentityFormat.fileName
        func freshStore() throws -> SimulatedFileSystem {
            let fs = SimulatedFileSystem()
            try APITestSimulated.open(fs).close()
            #expect(fs.contents(of: identity) == StoreIdentityFormat.encode())
            return fs
        }

        // A flipped bit: the checksum catches it.
        var fs = try freshStore()
        try fs.corrupt(path: identity, offset: 13, xor: 0x80)
        var error = expectStoreError(.corruption) { _ = try APITestSimulated.open(fs) }
        #expect(error?.file == identity)
        #expect(error?.offset == 16)

        // Another file's magic.
        fs = try freshStore()
        try fs.corrupt(path: identity, offset: 0, xor: 0x20)
        error = expectStoreError(.notAStore) { _ = try APITestSimulated.open(fs) }
        #expect(error?.file == identity)

        // Cut short.
        fs = try freshStore()
        try writeFile(fs, identity, Array(StoreIdentityFormat.encode().prefix(12)))
        error = expectStoreError(.corruption) { _ = try APITestSimulated.open(fs) }
        #expect(error?.file == identity)

        // Empty.
        fs = try freshStore()
        try writeFile(fs, identity, [])
        error = #expect(throws: StoreError.self) { _ = try APITestSimulated.open(fs) }
        #expect(error?.code == .notAStore || error?.code == .corruption, "got \(String(describing: error))")
        #expect(error?.file == identity)

        // A newer major version.
        fs = try freshStore()
        var newer = StoreIdentityFormat.magic
        newer.appendLittleEndian(UInt16(3))
        newer.appendLittleEndian(UInt16(1))
        newer.appendLittleEndian(UInt32(0))
        newer.appendLittleEndian(Checksum.crc32(newer))
        try writeFile(fs, identity, newer)
        error = expectStoreError(.formatVersion) { _ = try APITestSimulated.open(fs) }
        #expect(error?.message.contains("3.1") == true)
        #expect(error?.file == identity)
    }

    @Test func failedOpenReleasesTheLock() throws {
        let fs = SimulatedFileSystem()
        try APITestSimulated.open(fs).close()
        let identity = APITestSimulated.path + "/" + StoreIdentityFormat.fileName
        try fs.corrupt(path: identity, offset: 13, xor: 0x01)
        expectStoreError(.corruption) { _ = try APITestSimulated.open(fs) }
        // Repaired, the store opens: the failed open did not keep the lock.
        try fs.corrupt(path: identity, offset: 13, xor: 0x01)
        try APITestSimulated.open(fs).close()
    }

    // MARK: I/O failures

    @Test func failedSyncMakesTheStoreReadOnlyUntilReopened() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        let snapshot = store.snapshot()

        fs.failNext(.sync, code: .other)
        let failed = expectStoreError(.io) { try store.write { tx in try tx.put(apiBytes("b"), apiBytes("2")) } }
        #expect(failed?.underlying != nil)

        // Every later write, and sync, is refused.
        expectStoreError(.readOnly) { try store.write { tx in try tx.put(apiBytes("c"), apiBytes("3")) } }
        expectStoreError(.readOnly) { try store.write(durability: .buffered) { tx in try tx.put(apiBytes("c"), apiBytes("3")) } }
        expectStoreError(.readOnly) { try store.sync() }
        #expect((asyncWriteResult(store) { tx in try tx.put(apiBytes("c"), apiBytes("3")) } as? StoreError)?.code == .readOnly)

        // Reads still work and show only what was committed before the failure.
        #expect(store.version == 1)
        #expect(try apiAllEntries(store) == [Entry(key: apiBytes("a"), value: apiBytes("1"))])
        #expect(try snapshot.read { try $0.get(apiBytes("a")) } == apiBytes("1"))
        #expect(try store.snapshot().read { try $0.get(apiBytes("b")) } == nil)
        #expect(try store.stats().version == 1)

        try store.close()

        // Whatever survives, the failed commit is whole or absent, and the store takes writes again.
        for (name, image) in [("live", fs), ("lose unsynced", fs.crashImage(.loseAllUnsynced))] {
            let reopened = try APITestSimulated.open(image)
            let entries = try apiAllEntries(reopened)
            #expect(
                entries == [Entry(key: apiBytes("a"), value: apiBytes("1"))]
                    || entries == [Entry(key: apiBytes("a"), value: apiBytes("1")), Entry(key: apiBytes("b"), value: apiBytes("2"))],
                "\(name): \(entries)")
            #expect(!entries.contains { $0.key == apiBytes("c") })
            try reopened.write { tx in try tx.put(apiBytes("d"), apiBytes("4")) }
            #expect(try reopened.read { try $0.get(apiBytes("d")) } == apiBytes("4"))
            try reopened.close()
            let again = try APITestSimulated.open(image)
            #expect(try again.read { try $0.get(apiBytes("d")) } == apiBytes("4"))
            #expect(again.recovery.truncatedTail == nil)
            try again.close()
        }
    }

    @Test func failedSyncFailsAsyncCallersToo() async throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        defer { try? store.close() }
        fs.failNext(.sync)
        await expectStoreErrorAsync(.io) { try await store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) } }
        await expectStoreErrorAsync(.readOnly) { try await store.write { tx in try tx.put(apiBytes("b"), apiBytes("2")) } }
        await expectStoreErrorAsync(.readOnly) { try await store.sync() }
        #expect(try await store.read { try $0.get(apiBytes("a")) } == nil)
    }

    @Test func failedExplicitSyncOfBufferedWrites() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        try store.write(durability: .buffered) { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        fs.failNext(.sync)
        expectStoreError(.io) { try store.sync() }
        expectStoreError(.readOnly) { try store.write { tx in try tx.put(apiBytes("b"), apiBytes("2")) } }
        // The buffered commit was already visible; it stays visible.
        #expect(try store.read { try $0.get(apiBytes("a")) } == apiBytes("1"))
        try store.close()
        let reopened = try APITestSimulated.open(fs)
        defer { try? reopened.close() }
        try reopened.write { tx in try tx.put(apiBytes("c"), apiBytes("3")) }
        #expect(try reopened.read { try $0.get(apiBytes("c")) } == apiBytes("3"))
    }

    @Test func fullDiskFailsTheCommitWithDiskFull() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        for index in 0..<5 {
            try store.write { tx in try tx.put(apiKey(index), apiValue(index)) }
        }
        fs.failNext(.write, code: .noSpace)
        let error = expectStoreError(.diskFull) { try store.write { tx in try tx.put(apiBytes("full"), apiBytes("x")) } }
        #expect(error?.underlying?.code == .noSpace)
        // Nothing lost: every earlier commit is readable, the failed one is not.
        let expected = (0..<5).map { Entry(key: apiKey($0), value: apiValue($0)) }
        #expect(try apiAllEntries(store) == expected)
        #expect(store.version == 5)
        // The log's state is unknown after a failed write: later writes are refused.
        expectStoreError(.readOnly) { try store.write { tx in try tx.put(apiBytes("later"), apiBytes("y")) } }
        try store.close()

        let reopened = try APITestSimulated.open(fs)
        defer { try? reopened.close() }
        #expect(try apiAllEntries(reopened) == expected)
        #expect(reopened.version == 5)
        try reopened.write { tx in try tx.put(apiBytes("after"), apiBytes("z")) }
        #expect(reopened.version == 6)
    }

    @Test func fullDiskWhileRollingToANewSegmentFailsTheCommitWithDiskFull() throws {
        let fs = SimulatedFileSystem()
        var options = APITestSimulated.options(fs, walSegmentBytes: 64 * 1024)
        // Inline, so the next segment's creation ahead of the roll comes at a known point.
        options.runsBackgroundWorkInline = true
        let store = try Store(path: APITestSimulated.path, options: options)
        let value = [UInt8](repeating: 0x42, count: 8 * 1024)
        var count = 0
        // The disk is already full when the next segment is to be made ahead of the roll (the
        // first open from here on): that is no error, and the roll must make it itself.
        fs.failNext(.open, code: .noSpace)
        // Fill the first segment to its limit; the next commit must start a new segment.
        while try store.stats().walBytes < 64 * 1024 {
            try store.write { tx in try tx.put(apiKey(count), value) }
            count += 1
        }
        #expect(try store.stats().walSegments == 1)
        #expect(try fs.kind(of: APITestSimulated.segment(2)) == nil, "the creation ahead failed")
        fs.failNext(.write, code: .noSpace)
        let error = expectStoreError(.diskFull, "the commit that found the disk full should say so") {
            try store.write { tx in try tx.put(apiBytes("full"), apiBytes("x")) }
        }
        #expect(error?.underlying?.code == .noSpace)
        expectStoreError(.readOnly) { try store.write { tx in try tx.put(apiBytes("later"), apiBytes("y")) } }
        #expect(try store.read { try $0.scan(from: []).count } == count)
        try store.close()

        let reopened = try Store(path: APITestSimulated.path, options: options)
        defer { try? reopened.close() }
        #expect(try reopened.read { try $0.scan(from: []).count } == count)
        #expect(try reopened.read { try $0.get(apiBytes("full")) } == nil)
        try reopened.write { tx in try tx.put(apiBytes("after"), apiBytes("z")) }
        #expect(reopened.version == UInt64(count + 1))
    }

    @Test func fullDiskWhileCreatingAStore() throws {
        let fs = SimulatedFileSystem()
        fs.failNext(.write, code: .noSpace)
        expectStoreError(.diskFull) { _ = try APITestSimulated.open(fs) }
        // Once there is space, creating it again works.
        let store = try APITestSimulated.open(fs)
        try store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        try store.close()
    }
}
