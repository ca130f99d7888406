import Dispatch
import Foundation
// The store's background threads (flush and compaction): jobs run one at a time in order,
// `sync` hands back values and typed errors, and a job may `sync` onto its own thread; a
// close lets the merge it finds running finish; a flush that makes a merge due starts it.
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

@_spi(Testing) @testable import Strata

@Suite struct BackgroundThreadTests {
    struct Refused: Error, Equatable { let code: Int }

    @Test("jobs run in the order they were queued, one at a time")
    func jobsRunInOrder() {
        let thread = BackgroundThread(name: "strata.test")
        let seen = Locked<[Int]>([])
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        for i in 0..<200 {
            thread.async {
                if running.wrappingAdd(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                seen.withLock { $0.append(i) }
                running.wrappingSubtract(1, ordering: .relaxed)
            }
        }
        thread.sync {}
        #expect(seen.withLock { $0 } == Array(0..<200))
        let overlaps = overlapped.load(ordering: .relaxed)
        #expect(!overlaps)
    }

    @Test("sync returns the job's value and rethrows its error with its type")
    func syncCarriesResults() {
        let thread = BackgroundThread(name: "strata.test")
        #expect(thread.sync { 6 * 7 } == 42)
        #expect(!thread.isCurrent)
        #expect(thread.sync { thread.isCurrent })
        #expect(throws: Refused(code: 3)) {
            try thread.sync { () throws(Refused) -> Int in throw Refused(code: 3) }
        }
        // The thread goes on after a job that threw.
        #expect(thread.sync { "after" } == "after")
    }

    @Test("a job that calls sync on its own thread runs the body directly instead of waiting for itself")
    func reentrantSyncDoesNotDeadlock() {
        let thread = BackgroundThread(name: "strata.test")
        let inner = thread.sync { thread.sync { thread.isCurrent ? 1 : 0 } }
        #expect(inner == 1)
    }

    @Test("jobs queued before the last reference goes still run")
    func queuedJobsRunAfterRelease() {
        let done = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        do {
            let thread = BackgroundThread(name: "strata.test")
            for _ in 0..<10 { thread.async { ran.wrappingAdd(1, ordering: .relaxed) } }
            thread.async { done.signal() }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let count = ran.load(ordering: .relaxed)
        #expect(count == 10)
    }
}

@Suite struct MaintenanceThreadTests {
    @Test("a store's flush and compaction threads end when the store is closed and released")
    func threadsEndWithTheStore() async throws {
        try await TestEnvironment.withTemporaryDirectory("threads") { path in
            var ended: [DispatchSemaphore] = []
            for _ in 0..<3 {
                let store = try Store(path: path)
                ended += store.maintenanceThreadsEnded
                try await store.write { tx in try tx.put(Array("k".utf8), Array("v".utf8)) }
                try await store.compact()
                try store.close()
            }
            // Each thread ends once its store is gone and its last job has run.
            let deadline = DispatchTime.now() + 30
            let running = ended.filter { $0.wait(timeout: deadline) != .success }.count
            #expect(running == 0, "\(running) of \(ended.count) threads still run after their stores were closed and released")
        }
    }
}

@Suite struct CloseDuringCompactionTests {
    /// A merge already running when the store closes is finished and installed. It used to
    /// be abandoned, so a store opened briefly and often restarted the same merge at every
    /// open and never finished it.
    @Test func closeFinishesTheRunningCompaction() async throws {
        try await TestEnvironment.withTemporaryDirectory("close-compaction") { path in
            let started = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let first = Atomic<Bool>(true)
            var options = StoreOptions()
            options.durability = .buffered
            options.memtableBytes = 512 << 10
            options.level0CompactionTrigger = 2
            options.level0StopWritesTrigger = 100
            options.failpoints = Failpoints { point in
                // Hold the first merge at its start until the store is closing.
                if point == .beforeCompaction, first.exchange(false, ordering: .relaxed) {
                    started.signal()
                    release.wait()
                }
            }
            let store = try Store(path: path, options: options)
            // Random keys, so level-0 files overlap and must be merged (not moved), with
            // more entries than the merge runs between checks for a close.
            var random = SeededRandom(seed: 0xC105E)
            let value = [UInt8](repeating: 7, count: 100)
            for _ in 0..<20 {
                let keys = (0..<1_000).map { _ in Array(String(random.next() % 1_000_000_000).utf8) }
                try await store.write { tx in
                    for key in keys { try tx.put(key, value) }
                }
            }
            #expect(started.wait(timeout: .now() + 30) == .success, "no compaction started")
            let closed = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                try? store.close()
                closed.signal()
            }
            // Let close() begin waiting for the merge, then let the merge run.
            try await Task.sleep(for: .milliseconds(300))
            release.signal()
            #expect(closed.wait(timeout: .now() + 60) == .success, "close() did not return")

            var quiet = StoreOptions()
            quiet.level0CompactionTrigger = 100
            quiet.level0StopWritesTrigger = 200
            let reopened = try Store(path: path, options: quiet)
            defer { try? reopened.close() }
            let levels = try reopened.stats().levels
            let belowZero = levels.dropFirst().reduce(0) { $0 + $1.files }
            #expect(belowZero > 0, "the merge running at close was not installed: level 0 holds \(levels.first?.files ?? 0) files, deeper levels none")
        }
    }
}

@Suite struct CompactionUnderSteadyWritesTests {
    /// A compaction that a flush makes due starts while later flushes are still queued. It
    /// used to be asked for only once the flush queue was empty, which a steady writer never
    /// lets happen: level 0 grew until writes stopped.
    @Test func aFlushThatMakesACompactionDueStartsItBeforeTheQueueEmpties() async throws {
        try await TestEnvironment.withTemporaryDirectory("compaction-steady") { path in
            let secondFlushMayRun = DispatchSemaphore(value: 0)
            let thirdFlushMayRun = DispatchSemaphore(value: 0)
            let compactionStarted = DispatchSemaphore(value: 0)
            let flushes = Atomic<Int>(0)
            var options = StoreOptions()
            options.durability = .buffered
            options.memtableBytes = 64 << 10
            options.memtableHardLimitBytes = 1 << 20
            options.level0CompactionTrigger = 2
            options.level0StopWritesTrigger = 100
            options.failpoints = Failpoints { point in
                switch point {
                case .beforeFlush:
                    // The second flush waits until a third memtable is queued behind it; the
                    // third waits for the end of the test.
                    let n = flushes.add(1, ordering: .relaxed).newValue
                    if n == 2 { secondFlushMayRun.wait() }
                    if n == 3 { thirdFlushMayRun.wait() }
                case .beforeCompaction:
                    compactionStarted.signal()
                default:
                    break
                }
            }
            let store = try Store(path: path, options: options)
            let value = [UInt8](repeating: 1, count: 100)
            // Each transaction fills a memtable; the next one seals it.
            for batch in 0..<4 {
                try await store.write { tx in
                    for i in 0..<700 { try tx.put(Array("k\(i)-\(batch)".utf8), value) }
                }
            }
            // Memtables 2 and 3 are queued; the first is flushed.
            let deadline = ContinuousClock.now + .seconds(30)
            while try store.stats().sealedMemtables < 2 || store.stats().flushes < 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            secondFlushMayRun.signal()
            // Level 0 now holds two files, which makes a compaction due, while the third
            // flush is still waiting.
            let started = compactionStarted.wait(timeout: .now() + 20) == .success
            thirdFlushMayRun.signal()
            #expect(started, "no compaction started while a flush was still queued")
            try store.close()
        }
    }
}
