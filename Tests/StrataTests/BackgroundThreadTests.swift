// The store's background threads (flush and compaction): jobs run one at a time in order,
// `sync` hands back values and typed errors, and a job may `sync` onto its own thread.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Strata

@Suite struct BackgroundThreadTests {
    struct Refused: Error, Equatable { let code: Int }

    @Test("jobs run in the order they were queued, one at a time")
    func jobsRunInOrder() {
        let thread = BackgroundThread(name: "strata.test")
        let seen = Mutex<[Int]>([])
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
    #if os(Linux)
    /// Threads of this process, from /proc.
    static func threadCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count
    }

    @Test("a store's flush and compaction threads end when the store is closed and released")
    func threadsEndWithTheStore() async throws {
        try await TestEnvironment.withTemporaryDirectory("threads") { path in
            // Warm up whatever threads the runtime keeps for itself.
            try Store(path: path).close()
            let before = try Self.threadCount()
            for _ in 0..<20 {
                let store = try Store(path: path)
                try await store.write { tx in try tx.put(Array("k".utf8), Array("v".utf8)) }
                try store.close()
            }
            // The threads leave once their last job is done; give them a moment.
            var after = try Self.threadCount()
            for _ in 0..<100 where after > before + 2 {
                try await Task.sleep(nanoseconds: 20_000_000)
                after = try Self.threadCount()
            }
            #expect(after <= before + 2, "20 stores opened and closed left \(after - before) more threads")
        }
    }
    #endif
}
