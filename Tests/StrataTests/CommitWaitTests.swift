// How a caller blocked on a synced commit waits for it: polling for a budget the writer sets
// from its last fdatasync, then sleeping (CommitWaiter, Polling, Writer invariant 8).
import Dispatch
import Foundation
import StrataTestSupport
import Synchronization
import Testing

@_spi(Testing) @testable import Strata

@Suite struct CommitWaitTests {
    @Test func theBudgetIsTwiceAShortSyncAndNoneAfterASlowOne() {
        #expect(Writer.pollBudget(forSyncOf: 0) == 0)
        #expect(Writer.pollBudget(forSyncOf: 60_000) == 120_000)
        #expect(Writer.pollBudget(forSyncOf: 200_000) == Writer.maxPoll)
        #expect(Writer.pollBudget(forSyncOf: Writer.pollSyncLimit) == Writer.maxPoll)
        // A disk whose fdatasync takes longer: the wake-up is a small share of the wait.
        #expect(Writer.pollBudget(forSyncOf: Writer.pollSyncLimit + 1) == 0)
        #expect(Writer.pollBudget(forSyncOf: 5_000_000) == 0)
    }

    @Test func aPollSeesWhatAnotherThreadSets() {
        let flag = Atomic<Bool>(false)
        let contention = Contention()
        let setter = Thread { flag.store(true, ordering: .releasing) }
        setter.start()
        // A budget far longer than the other thread needs: the poll ends when it sees the flag,
        // or early when a yield finds the machine busy (it then answers what it sees at once,
        // which may be before the setter ran): poll again, as a waiter goes on to sleep.
        var seen = false
        for _ in 0..<1000 where !seen {
            seen = Polling.poll(for: 10_000_000_000, contention: contention) { flag.load(ordering: .acquiring) }
        }
        #expect(seen)
    }

    @Test func aPollGivesUpAfterItsBudget() {
        let contention = Contention()
        let start = DispatchTime.now().uptimeNanoseconds
        // Yields that return at once: the poll runs out its budget, unless the thread lost its
        // core for longer than `busyYieldNanoseconds` between two looks (a machine busy with
        // other tests), which counts as a busy yield and is noted.
        let seen = Polling.poll(for: 2_000_000, contention: contention, yielding: {}) { false }
        #expect(!seen)
        #expect(DispatchTime.now().uptimeNanoseconds - start >= 2_000_000 || contention.isRecent)
    }

    /// On a busy machine a yield gives the core to another thread for a time slice: the poll
    /// stops at the first such yield and notes it, before its budget. (With `sched_yield`, a
    /// machine busy with other tests did this to the test above: CI saw it end after 1.78 ms
    /// of a 2 ms budget.)
    @Test func aPollStopsEarlyWhenAYieldShowsTheMachineBusy() {
        let contention = Contention()
        var looks = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let seen = Polling.poll(
            for: 10_000_000_000, contention: contention,
            yielding: { usleep(useconds_t(Polling.busyYieldNanoseconds / 1000 + 200)) }
        ) {
            looks += 1
            return false
        }
        #expect(!seen)
        #expect(looks == 2)  // before the yield, and once after it
        #expect(contention.isRecent)
        #expect(DispatchTime.now().uptimeNanoseconds - start < 10_000_000_000)
    }

    @Test(arguments: [UInt64(0), 250_000, 10_000_000_000])
    func aWaiterReturnsOnceSignalled(pollNanoseconds: UInt64) {
        let contention = Contention()
        // Signalled before the wait starts.
        let early = CommitWaiter()
        early.signal()
        early.wait(pollNanoseconds: pollNanoseconds, contention: contention)
        // Signalled by another thread while it polls or sleeps.
        for delay in [0, 1_000, 2_000] {
            let waiter = CommitWaiter()
            let signaller = Thread {
                if delay > 0 { usleep(useconds_t(delay)) }
                waiter.signal()
            }
            signaller.start()
            waiter.wait(pollNanoseconds: pollNanoseconds, contention: contention)
        }
    }

    @Test func nobodyPollsForASecondAfterAPollFoundTheMachineBusy() throws {
        let contention = Contention()
        #expect(!contention.isRecent)
        contention.note()
        #expect(contention.isRecent)

        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let writer = try #require(store.engine.writing?.writer)
        try store.write(durability: .synced) { tx in try tx.put(Array("k".utf8), Array("v".utf8)) }
        writer.contention.note()
        #expect(writer.pollBudget == 0)
    }

    /// Eight threads committing synced one-put transactions on a real disk at once, with
    /// `sync()` calls among them, as syncconc8 does: every commit is found afterwards. On a
    /// disk that syncs fast, the waits poll; under ThreadSanitizer (CI) this is the suite
    /// that races pollers against the writer's completions.
    @Test func concurrentSyncedWritersAllCommit() async throws {
        try await TestEnvironment.withTemporaryDirectory("commit-wait") { path in
            var options = StoreOptions()
            options.durability = .synced
            let store = try Store(path: path, options: options)
            let threads = 8
            let perThread = 40
            let failures = Mutex<[String]>([])
            let done = DispatchGroup()
            for t in 0..<threads {
                done.enter()
                let thread = Thread {
                    defer { done.leave() }
                    for i in 0..<perThread {
                        do {
                            try store.write { tx in try tx.put(Array("t\(t)-\(i)".utf8), Array("v\(i)".utf8)) }
                            if i % 10 == 9 { try store.sync() }
                        } catch {
                            failures.withLock { $0.append("thread \(t) commit \(i): \(error)") }
                        }
                    }
                }
                thread.start()
            }
            done.wait()
            #expect(failures.withLock { $0 } == [])
            try store.close()

            let reopened = try Store(path: path)
            defer { try? reopened.close() }
            for t in 0..<threads {
                for i in 0..<perThread {
                    #expect(try reopened.get(Array("t\(t)-\(i)".utf8)) == Array("v\(i)".utf8), "thread \(t) commit \(i) lost")
                }
            }
        }
    }
}
