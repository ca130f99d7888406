import Dispatch
import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

/// Regression tests for the writer queue's handling of close and segment rolls.
struct WriterLifecycleTests {
    static func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.walSegmentBytes = 64 * 1024
        options.logger.logLevel = .critical
        return options
    }

    /// A close (or a sync) writes nothing, so it must not start a new WAL segment even when
    /// the current one is past its size limit.
    @Test func closeDoesNotRollAnEmptySegment() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/store", options: Self.options(fileSystem))
        try store.write { tx in try tx.put(Array("big".utf8), [UInt8](repeating: 7, count: 70_000)) }
        try store.sync()
        try store.close()
        let segments = try fileSystem.listDirectory("/store").filter { $0.hasPrefix("wal-") }
        #expect(segments == ["wal-0000000001.log"])

        // The next write does roll, and the data reads back after reopening.
        let reopened = try Store(path: "/store", options: Self.options(fileSystem))
        try reopened.write { tx in try tx.put(Array("small".utf8), Array("x".utf8)) }
        try reopened.close()
        let after = try fileSystem.listDirectory("/store").filter { $0.hasPrefix("wal-") }.sorted()
        #expect(after == ["wal-0000000001.log", "wal-0000000002.log"])
        let third = try Store(path: "/store", options: Self.options(fileSystem))
        defer { try? third.close() }
        #expect(try third.read { try $0.get(Array("big".utf8))?.count } == 70_000)
        #expect(try third.read { try $0.get(Array("small".utf8)) } == Array("x".utf8))
    }

    /// A second close() returns only once the first has finished and released the lock.
    @Test func secondCloseWaitsForTheFirst() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/store", options: Self.options(fileSystem))
        // Hold the writer so the first close stays in progress.
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        store.asyncWrite({ _ in
            started.signal()
            release.wait()
        })
        started.wait()

        let firstDone = DispatchSemaphore(value: 0)
        Thread {
            try? store.close()
            firstDone.signal()
        }.start()
        // Wait until the first close has marked the store closing.
        while (try? store.read({ _ in })) != nil { usleep(1000) }

        let secondDone = DispatchSemaphore(value: 0)
        Thread {
            try? store.close()
            secondDone.signal()
        }.start()
        #expect(
            secondDone.wait(timeout: .now() + .milliseconds(200)) == .timedOut,
            "the second close returned while the first was still waiting for the writer")
        release.signal()
        firstDone.wait()
        secondDone.wait()
        // Both have returned: the lock is free.
        let reopened = try Store(path: "/store", options: Self.options(fileSystem))
        try reopened.close()
    }

    /// The log grows in preallocation steps, so a small store's WAL file is small and
    /// opening it reads little, instead of a whole preallocated segment.
    @Test func walFileGrowsInPreallocationSteps() throws {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        let store = try Store(path: "/store", options: options)
        try store.write { tx in try tx.put(Array("a".utf8), Array("b".utf8)) }
        try store.close()
        let size = fileSystem.contents(of: "/store/wal-0000000001.log")?.count ?? 0
        #expect(size == 1 << 20, "a WAL holding one small record should be one 1 MiB step, not \(size) bytes")

        let reopened = try Store(path: "/store", options: options)
        #expect(try reopened.read { try $0.get(Array("a".utf8)) } == Array("b".utf8))
        try reopened.write { tx in try tx.put(Array("big".utf8), [UInt8](repeating: 1, count: 1_500_000)) }
        try reopened.close()
        #expect(fileSystem.contents(of: "/store/wal-0000000001.log")?.count == 2 << 20)
    }

    /// When the last reference to a store goes away inside one of its own transactions,
    /// deinit runs on the writer queue; it must still close the store and release the lock.
    @Test func storeReleasedInsideItsOwnTransactionStillCloses() throws {
        let fileSystem = SimulatedFileSystem()
        do {
            let store = try Store(path: "/store", options: Self.options(fileSystem))
            store.asyncWrite({ tx in
                _ = store  // the queued body holds the last reference
                try tx.put(Array("k".utf8), Array("v".utf8))
            })
        }
        var reopened: Store? = nil
        for _ in 0..<500 where reopened == nil {
            reopened = try? Store(path: "/store", options: Self.options(fileSystem))
            if reopened == nil { usleep(10_000) }
        }
        let store = try #require(reopened, "the lock was never released")
        defer { try? store.close() }
        #expect(try store.read { try $0.get(Array("k".utf8)) } == Array("v".utf8))
    }
}
