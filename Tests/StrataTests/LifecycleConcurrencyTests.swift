// Threads calling every API of one store while others suspend, resume, send it to the
// background and close it, at random. Every call must end (none left waiting) in success or
// a typed error; every acknowledged write must be there after reopening and every failed one
// absent; and whenever the store says it is suspended, it holds no lock: another Store opens
// the same path (and sometimes writes, which the next resume must reload).
//
// Seeded: STRATA_SEED=<seed> replays a run's choices (thread timing still varies);
// STRATA_LONG_TESTS=1 runs more rounds. scripts/tsan and CI run it under ThreadSanitizer.
import Dispatch
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

/// What every write call came to, and every unexpected outcome.
private final class CallLog: Sendable {
    private struct State {
        /// Key -> value of every acknowledged write.
        var committed: [[UInt8]: [UInt8]] = [:]
        /// Keys whose write failed.
        var failed: Set<[UInt8]> = []
        var calls = 0
        var problems: [String] = []
        var codes: [String: Int] = [:]
    }

    private let state = Locked(State())

    func committed(_ key: [UInt8], _ value: [UInt8]) { state.withLock { $0.committed[key] = value } }
    func failed(_ key: [UInt8]) { state.withLock { _ = $0.failed.insert(key) } }

    /// Counts a call that ended; an error must be a `StoreError` a caller can act on here.
    func ended(_ name: String, _ error: (any Error)?) {
        state.withLock { state in
            state.calls += 1
            guard let error else { return }
            guard let storeError = error as? StoreError else {
                state.problems.append("\(name) threw a non-StoreError: \(error)")
                return
            }
            state.codes["\(storeError.code)", default: 0] += 1
            if storeError.code != .suspended && storeError.code != .closed {
                state.problems.append("\(name) failed with \(storeError)")
            }
        }
    }

    func problem(_ text: String) { state.withLock { $0.problems.append(text) } }

    var committed: [[UInt8]: [UInt8]] { state.withLock { $0.committed } }
    var failed: Set<[UInt8]> { state.withLock { $0.failed } }
    var calls: Int { state.withLock { $0.calls } }
    var problems: [String] { state.withLock { $0.problems } }
    var codes: [String: Int] { state.withLock { $0.codes } }
}

/// Runs the async writers' tasks on a queue of their own. On the shared cooperative pool (two
/// threads on a two-core machine) they waited minutes whenever other suites' synchronous tests
/// held both threads, and the round took that for a call left waiting.
final class QueueTaskExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "strata.tests.async-writers", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

@Suite("Every API racing suspend, resume, background and close")
struct LifecycleConcurrencyTests {
    static var rounds: Int { TestEnvironment.longTests ? 60 : 10 }
    static let workers = 4
    static let operationsPerWorker = 400

    @Test("seeded rounds: every call ends typed, every success survives, every failure leaves nothing, no lock while suspended")
    func racingLifecycle() async throws {
        let seed = TestEnvironment.seed(0x11FE_C7C1E, test: "LifecycleConcurrencyTests")
        var totals = (calls: 0, suspends: 0, reloads: 0)
        for round in 0..<Self.rounds {
            let path = try APITestDirectory.make()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try await Self.round(seed: seed &+ UInt64(round), path: path, context: "seed \(seed), round \(round) (STRATA_SEED=\(seed) replays)")
            totals.calls += result.calls
            totals.suspends += result.suspends
            totals.reloads += result.reloads
        }
        print("LifecycleConcurrencyTests: \(Self.rounds) rounds, \(totals.calls) calls, \(totals.suspends) suspensions, \(totals.reloads) reloads")
    }

    private static func round(seed: UInt64, path: String, context: String) async throws -> (calls: Int, suspends: Int, reloads: Int) {
        let options = {
            var options = APITestDirectory.options()
            options.memtableBytes = 64 << 10
            options.logger.logLevel = .critical
            return options
        }()
        let store = try Store(path: path, options: options)
        let log = CallLog()
        let group = DispatchGroup()
        let workersDone = Atomic<Int>(0)
        let suspends = Atomic<Int>(0)
        let reloads = Atomic<Int>(0)
        /// Held around every suspend-and-check and every resume, so a check sees the store
        /// suspended (another lifecycle thread would otherwise resume it in between). Close
        /// and enterBackground still race with both.
        /// (The count is only there so the lock guards a value.)
        let checking = Locked(0)
        let asyncWriters = QueueTaskExecutor()

        for worker in 0..<workers {
            let workerSeed = seed &+ UInt64(worker) &* 0x9E37_79B9
            group.enter()
            Thread.detachNewThread {
                defer {
                    workersDone.add(1, ordering: .relaxed)
                    group.leave()
                }
                var random = SeededRandom(seed: workerSeed)
                for n in 0..<operationsPerWorker {
                    // Now and then a pause, so lifecycle changes land between calls as well as
                    // inside them.
                    if Int.random(in: 0..<4, using: &random) == 0 { usleep(UInt32.random(in: 10...300, using: &random)) }
                    let key = Array("w\(worker)-\(n)".utf8)
                    let value = Array("value-\(worker)-\(n)-\(String(repeating: "x", count: Int.random(in: 0...200, using: &random)))".utf8)
                    let durability: Durability = Bool.random(using: &random) ? .synced : .buffered
                    switch Int.random(in: 0..<8, using: &random) {
                    case 0, 1:
                        do {
                            try store.write(durability: durability) { tx in try tx.put(key, value) }
                            log.committed(key, value)
                            log.ended("write", nil)
                        } catch {
                            log.failed(key)
                            log.ended("write", error)
                        }
                    case 2:
                        let done = DispatchSemaphore(value: 0)
                        Task.detached(executorPreference: asyncWriters) {
                            do {
                                try await store.write(durability: durability) { tx in try tx.put(key, value) }
                                log.committed(key, value)
                                log.ended("async write", nil)
                            } catch {
                                log.failed(key)
                                log.ended("async write", error)
                            }
                            done.signal()
                        }
                        done.wait()
                    case 3:
                        let done = DispatchSemaphore(value: 0)
                        store.asyncWrite(durability: durability, { tx in try tx.put(key, value) }) { result in
                            switch result {
                            case .success:
                                log.committed(key, value)
                                log.ended("asyncWrite", nil)
                            case .failure(let error):
                                log.failed(key)
                                log.ended("asyncWrite", error)
                            }
                            done.signal()
                        }
                        done.wait()
                    case 4:
                        // A read sees only acknowledged or in-flight writes of this worker.
                        do {
                            let count = try store.read { tx in try tx.scan(prefix: Array("w\(worker)-".utf8)).count }
                            if count > n { log.problem("\(context): worker \(worker) read \(count) of its keys after \(n) writes") }
                            log.ended("read", nil)
                        } catch {
                            log.ended("read", error)
                        }
                    case 5:
                        let snapshot = store.snapshot()
                        do {
                            _ = try snapshot.read { tx in try tx.get(key) }
                            log.ended("snapshot read", nil)
                        } catch {
                            log.ended("snapshot read", error)
                        }
                        snapshot.close()
                    case 6:
                        do {
                            try store.sync()
                            log.ended("sync", nil)
                        } catch {
                            log.ended("sync", error)
                        }
                    default:
                        do {
                            _ = try store.stats()
                            log.ended("stats", nil)
                        } catch {
                            log.ended("stats", error)
                        }
                    }
                }
            }
        }

        // Two lifecycle threads; one of them closes the store at a random moment near the end.
        for driver in 0..<2 {
            let driverSeed = seed ^ (0xD1 &+ UInt64(driver))
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var random = SeededRandom(seed: driverSeed)
                let closeAfter =
                    driver == 0 ? Int.random(in: (workers * operationsPerWorker * 3 / 4)...(workers * operationsPerWorker), using: &random) : Int.max
                var otherWrites = 0
                while workersDone.load(ordering: .relaxed) < workers {
                    if log.calls >= closeAfter {
                        do { try store.close() } catch { log.problem("\(context): close failed: \(error)") }
                        return
                    }
                    usleep(UInt32.random(in: 50...800, using: &random))
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        store.enterBackground()
                    case 1:
                        // Under `checking`, so it never lands between another thread's
                        // suspend() and its lock check.
                        checking.withLock { checks in
                            checks += 1
                            do { _ = try store.resume() } catch let error as StoreError where error.code == .closed || error.code == .locked {
                            } catch { log.problem("\(context): resume failed: \(error)") }
                        }
                    default:
                        checking.withLock { checks in
                            checks += 1
                            do {
                                try store.suspend()
                            } catch {
                                log.problem("\(context): suspend failed: \(error)")
                                return
                            }
                            suspends.add(1, ordering: .relaxed)
                            // Suspended (or closed by the other thread): no lock is held.
                            let lifecycle = store.lifecycle
                            guard lifecycle == .suspended || lifecycle == .closed else {
                                log.problem("\(context): after suspend() the store is \(lifecycle)")
                                return
                            }
                            do {
                                let other = try Store(path: path, options: options)
                                if Int.random(in: 0..<3, using: &random) == 0 {
                                    otherWrites += 1
                                    let key = Array("other-\(driver)-\(otherWrites)".utf8)
                                    try other.write { tx in try tx.put(key, Array("from another store".utf8)) }
                                    log.committed(key, Array("from another store".utf8))
                                }
                                try other.close()
                            } catch {
                                log.problem("\(context): store reported \(lifecycle), but another Store could not open the path: \(error)")
                            }
                            do {
                                if case .reloaded = try store.resume() { reloads.add(1, ordering: .relaxed) }
                            } catch let error as StoreError where error.code == .closed {
                            } catch {
                                log.problem("\(context): resume after the check failed: \(error)")
                            }
                        }
                    }
                }
            }
        }

        // No call may be left waiting. The wait is on a thread of its own, so this task does
        // not hold a cooperative thread that the workers' async writes need.
        let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread { continuation.resume(returning: group.wait(timeout: .now() + .seconds(300)) == .success) }
        }
        if !finished {
            Issue.record("\(context): calls still waiting after 300 s: a call was never completed")
            return (0, 0, 0)
        }
        try store.close()

        let reopened = try Store(path: path, options: options)
        let stored = try await reopened.read { tx in
            Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) })
        }
        try reopened.close()
        let committed = log.committed
        for (key, value) in committed where stored[key] != value {
            Issue.record("\(context): acknowledged write of \(String(decoding: key, as: UTF8.self)) is missing after reopen")
        }
        for key in log.failed where stored[key] != nil {
            Issue.record("\(context): failed write of \(String(decoding: key, as: UTF8.self)) is present after reopen")
        }
        for problem in log.problems.prefix(10) { Issue.record(Comment(rawValue: problem)) }
        return (log.calls, suspends.load(ordering: .relaxed), reloads.load(ordering: .relaxed))
    }
}
