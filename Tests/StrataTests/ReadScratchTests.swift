import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Testing

/// A read transaction's record of scan errors is reused from read to read on a thread
/// (`ReadScratch`): an error one read's scan met must not surface in a later read, and a scan
/// kept past its transaction must not report into another's record.
@Suite struct ReadScratchTests {
    /// A store whose 50 keys are in a segment file read through the simulated file system,
    /// with no block cache, so every scan reads the file and a read fault reaches it.
    static func store() throws -> (Store, SimulatedFileSystem) {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.blockCacheBytes = 0
        options.durability = .buffered
        let store = try Store(path: "/store", options: options)
        try store.write { tx in
            for i in 0..<50 { try tx.put([UInt8(i)], [UInt8(i), 1]) }
        }
        try store.compact()
        return (store, fileSystem)
    }

    static func scanAll(_ tx: ReadTransaction) throws -> Int {
        try tx.scan(from: [], to: nil, reverse: false).reduce(0) { count, _ in count + 1 }
    }

    @Test("a read after one whose scan failed reports nothing of it")
    func errorDoesNotCarryOver() throws {
        let (store, fileSystem) = try Self.store()
        defer { try? store.close() }
        fileSystem.failNext(.read)
        #expect(throws: StoreError.self) { try store.read { tx in try Self.scanAll(tx) } }
        #expect(try store.read { tx in try Self.scanAll(tx) } == 50)
        #expect(try store.read { tx in try tx.get([7]) } == [7, 1])
    }

    @Test("a scan kept past its read reports into its own record, not a later read's")
    func keptScanKeepsItsRecord() throws {
        let (store, fileSystem) = try Self.store()
        defer { try? store.close() }
        let kept = try store.read { tx in try tx.scan(from: [], to: nil, reverse: false) }
        let value = try store.read { tx -> [UInt8]? in
            fileSystem.failNext(.read)
            // Ends early at the fault; it records the error in the first read's record.
            for _ in kept {}
            return try tx.get([9])
        }
        #expect(value == [9, 1])
    }

    @Test("nested reads each keep their own record")
    func nestedReads() throws {
        let (store, fileSystem) = try Self.store()
        defer { try? store.close() }
        var inner: Int? = nil
        #expect(throws: StoreError.self) {
            try store.read { outer in
                inner = try store.read { tx in try Self.scanAll(tx) }
                fileSystem.failNext(.read)
                return try Self.scanAll(outer)
            }
        }
        #expect(inner == 50)
        #expect(try store.read { tx in try Self.scanAll(tx) } == 50)
    }

    /// Threads that read at once each use their own scratch, and threads that end release
    /// theirs (the CI runs this suite under ThreadSanitizer).
    @Test("threads that read at once, then end, each keep their own scratch")
    func threadsReadingAtOnce() throws {
        let (store, _) = try Self.store()
        defer { try? store.close() }
        let done = DispatchSemaphore(value: 0)
        let failures = Locked(0)
        let threads = 4
        for t in 0..<threads {
            let thread = Thread {
                for round in 0..<300 {
                    let i = UInt8((t * 7 + round) % 50)
                    let ok =
                        (try? store.read { tx in
                            try tx.get([i]) == [i, 1] && Self.scanAll(tx) == 50
                                && tx.withUnsafeValue([i]) { $0.map(Array.init) } == [i, 1]
                        }) ?? false
                    if !ok { failures.withLock { $0 += 1 } }
                }
                done.signal()
            }
            thread.start()
        }
        for _ in 0..<threads { done.wait() }
        #expect(failures.withLock { $0 } == 0)
    }
}
