import Dispatch
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

/// A deterministic workload of a few hundred transactions with mixed durability: single
/// transactions, groups that commit together (one WAL write, one sync), explicit syncs, and
/// values large enough to fragment records and roll WAL segments; optionally explicit
/// `compact()` calls.
struct CrashWorkload {
    struct Transaction {
        var writes: [(key: [UInt8], value: [UInt8]?)]
        var durability: Durability
    }

    enum Step {
        case single(Transaction)
        case group([Transaction])
        case sync
        /// `store.compact()`: seal, flush, and merge every file into one level.
        case compact
    }

    static let markerKey = Array("~sequence".utf8)

    var steps: [Step] = []
    /// `states[i]` is the store's content after transaction i (1-based); `states[0]` is empty.
    var states: [[[UInt8]: [UInt8]]] = [[:]]

    /// The defaults make the original workload (40 keys, 1...4 writes, values up to 300 bytes
    /// and one in 12 of `largeValueBytes`); other values change its shape, not the stream the
    /// defaults draw. `compactAfter` lists transaction counts after which a `.compact` step
    /// comes.
    init(
        seed: UInt64, transactions: Int, largeValueBytes: ClosedRange<Int> = 20_000...70_000,
        keys: Int = 40, writesPerTransaction: ClosedRange<Int> = 1...4, smallValueBytes: ClosedRange<Int> = 0...300,
        largeValueOneIn: Int = 12, compactAfter: [Int] = []
    ) {
        var random = SeededRandom(seed: seed)
        var compactions = compactAfter.sorted()[...]
        var state: [[UInt8]: [UInt8]] = [:]
        var index = 0

        func makeTransaction() -> Transaction {
            index += 1
            var writes: [(key: [UInt8], value: [UInt8]?)] = []
            var touched = Set<[UInt8]>()
            for _ in 0..<Int.random(in: writesPerTransaction, using: &random) {
                let key = Array("key-\(Int.random(in: 0..<keys, using: &random))".utf8)
                guard touched.insert(key).inserted else { continue }
                if Int.random(in: 0..<5, using: &random) == 0 {
                    writes.append((key, nil))
                    state[key] = nil
                } else {
                    // Mostly small values; now and then one that spans several WAL blocks.
                    let length =
                        largeValueOneIn > 0 && Int.random(in: 0..<largeValueOneIn, using: &random) == 0
                        ? Int.random(in: largeValueBytes, using: &random)
                        : Int.random(in: smallValueBytes, using: &random)
                    let fill = UInt8(truncatingIfNeeded: index)
                    let value = [UInt8](repeating: fill, count: length)
                    writes.append((key, value))
                    state[key] = value
                }
            }
            let marker = Array(String(index).utf8)
            writes.append((CrashWorkload.markerKey, marker))
            state[CrashWorkload.markerKey] = marker
            states.append(state)
            let durability: Durability = Bool.random(using: &random) ? .synced : .buffered
            return Transaction(writes: writes, durability: durability)
        }

        while index < transactions {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                steps.append(.single(makeTransaction()))
            case 6..<9:
                let size = min(Int.random(in: 2...6, using: &random), transactions - index)
                steps.append(.group((0..<size).map { _ in makeTransaction() }))
            default:
                steps.append(.sync)
            }
            while let next = compactions.first, index >= next {
                steps.append(.compact)
                compactions.removeFirst()
            }
        }
    }
}

/// What one run of the workload got acknowledged before it stopped.
struct CrashOutcome {
    /// Every transaction up to this index was acknowledged as durable (`.synced`, or covered
    /// by a later synced commit or `sync()`): recovery must keep it.
    var durableThrough = 0
    /// The highest transaction index submitted: recovery may not go past it.
    var attempted = 0
}

/// `CrashOutcome` shared between the thread running the workload and the test.
final class SharedOutcome: Sendable {
    private let state = Locked(CrashOutcome())

    func withLock<R: Sendable>(_ body: (inout CrashOutcome) -> R) -> R {
        state.withLock { body(&$0) }
    }
}

/// Budgets small enough that a crash workload flushes and compacts, with that work run inline
/// (`runsBackgroundWorkInline`) so the file-system operations come in the same order on every
/// run and a crash point names the same moment each time.
struct LevelBudgets: Sendable {
    var memtableBytes = 64 << 10
    var segmentFileBytes = 64 << 10
    var level1Bytes = 256 << 10
    var level0CompactionTrigger = 2
    var blockCacheBytes = 32 << 10
    var compressionFromLevel: Int? = 1
    /// Flushes and merges write their files in stretches of this size (several per file),
    /// so crashes land between two stretches of one file too.
    var segmentWriteBytes = 16 << 10

    func apply(to options: inout StoreOptions) {
        options.memtableBytes = memtableBytes
        options.segmentFileBytes = segmentFileBytes
        options.level1Bytes = level1Bytes
        options.level0CompactionTrigger = level0CompactionTrigger
        options.blockCacheBytes = blockCacheBytes
        options.compressionFromLevel = compressionFromLevel
        options.segmentWriteBytes = segmentWriteBytes
        options.runsBackgroundWorkInline = true
    }
}

enum CrashHarness {
    static let storePath = "/crash/store"

    static func options(
        _ fileSystem: SimulatedFileSystem, failpoints: Failpoints? = nil,
        segmentBytes: Int = 64 * 1024, levels: LevelBudgets? = nil, manifestRollBytes: Int? = nil
    ) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.walSegmentBytes = segmentBytes
        options.logger.logLevel = .critical
        options.failpoints = failpoints
        options.manifestRollBytes = manifestRollBytes
        levels?.apply(to: &options)
        return options
    }

    static func apply(_ transaction: CrashWorkload.Transaction, to tx: WriteTransaction) throws {
        for write in transaction.writes {
            if let value = write.value { try tx.put(write.key, value) } else { try tx.delete(write.key) }
        }
    }

    /// Runs the workload until it ends or a call fails (after the simulated power loss every
    /// call fails). `outcome` is updated as acknowledgements arrive, so another thread can
    /// read it while the writer is frozen. `inspect` sees the store after the last step, when
    /// every step succeeded, before it closes.
    static func run(
        _ workload: CrashWorkload, on fileSystem: SimulatedFileSystem, failpoints: Failpoints? = nil,
        segmentBytes: Int = 64 * 1024, levels: LevelBudgets? = nil, manifestRollBytes: Int? = nil, outcome: SharedOutcome,
        inspect: ((Store) -> Void)? = nil
    ) {
        // The store's parent directory is durable before the workload starts, as an app's
        // container directory is.
        guard (try? fileSystem.createDirectory("/crash")) != nil, (try? fileSystem.syncDirectory("/")) != nil,
            let store = try? Store(
                path: storePath,
                options: options(fileSystem, failpoints: failpoints, segmentBytes: segmentBytes, levels: levels, manifestRollBytes: manifestRollBytes))
        else { return }
        defer { try? store.close() }
        var next = 1
        var lastAcknowledged = 0
        for step in workload.steps {
            switch step {
            case .single(let transaction):
                outcome.withLock { $0.attempted = next }
                do {
                    try store.write(durability: transaction.durability) { tx in try apply(transaction, to: tx) }
                } catch {
                    return
                }
                lastAcknowledged = next
                if transaction.durability == .synced { outcome.withLock { $0.durableThrough = next } }
                next += 1
            case .group(let transactions):
                // A gate transaction holds the writer until the whole group is queued, so the
                // group always commits in one round: the run is deterministic.
                let started = DispatchSemaphore(value: 0)
                let release = DispatchSemaphore(value: 0)
                store.asyncWrite({ _ in
                    started.signal()
                    release.wait()
                }) { result in
                    // A store that already failed completes the gate without running it.
                    if case .failure = result { started.signal() }
                }
                started.wait()
                let results = Locked<[Int: Bool]>([:])
                let done = DispatchSemaphore(value: 0)
                for (offset, transaction) in transactions.enumerated() {
                    let index = next + offset
                    store.asyncWrite(durability: transaction.durability, { tx in try apply(transaction, to: tx) }) { result in
                        let succeeded: Bool
                        if case .success = result { succeeded = true } else { succeeded = false }
                        results.withLock { $0[index] = succeeded }
                        done.signal()
                    }
                }
                outcome.withLock { $0.attempted = next + transactions.count - 1 }
                release.signal()
                for _ in transactions { done.wait() }
                let succeeded = results.withLock { $0 }
                for (offset, transaction) in transactions.enumerated() {
                    let index = next + offset
                    guard succeeded[index] == true else { return }
                    lastAcknowledged = index
                    if transaction.durability == .synced { outcome.withLock { $0.durableThrough = index } }
                }
                next += transactions.count
            case .sync:
                do { try store.sync() } catch { return }
                let durable = lastAcknowledged
                outcome.withLock { $0.durableThrough = max($0.durableThrough, durable) }
            case .compact:
                // It promises no durability of its own: `durableThrough` stays.
                do { try store.compact() } catch { return }
            }
        }
        inspect?(store)
    }

    /// Opens the crashed image and checks every recovery promise. Returns failure text, or nil.
    /// With `levels`, the recovered store also compacts everything and must still hold the
    /// same state; `context` names the case for the verifier hook.
    static func verify(
        image: SimulatedFileSystem, workload: CrashWorkload, outcome: CrashOutcome,
        segmentBytes: Int = 64 * 1024, levels: LevelBudgets? = nil, context: String = ""
    ) -> String? {
        do {
            try? image.createDirectory("/crash")
            let storeOptions = CrashHarness.options(image, segmentBytes: segmentBytes, levels: levels)
            let store = try Store(path: storePath, options: storeOptions)
            let recovered = store.version
            let state = try store.read { tx in
                Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) })
            }
            if recovered < UInt64(outcome.durableThrough) {
                return "recovered version \(recovered) lost durable commits up to \(outcome.durableThrough)"
            }
            if recovered > UInt64(outcome.attempted) {
                return "recovered version \(recovered) is past the last attempted commit \(outcome.attempted)"
            }
            if state != workload.states[Int(recovered)] {
                return "state at version \(recovered) is not the state after commit \(recovered) (a torn or partial transaction)"
            }
            if levels != nil {
                // What recovery opened must survive being merged: every file it listed is
                // read through and rewritten.
                try store.compact()
                let compacted = try store.read { tx in
                    Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) })
                }
                if compacted != state { return "compacting the recovered store changed its state" }
            }
            // The store must accept new writes, and keep them across a clean reopen.
            try store.write { tx in try tx.put(Array("~after".utf8), Array("yes".utf8)) }
            try store.close()
            let reopened = try Store(path: storePath, options: storeOptions)
            let newValue = try reopened.read { try $0.get(Array("~after".utf8)) }
            let kept = reopened.version == recovered + 1 && newValue == Array("yes".utf8) && reopened.recovery.truncatedTail == nil
            let afterState = try reopened.read { tx in
                Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) })
            }
            try reopened.close()
            guard kept else {
                return "the recovered store did not keep a new write across a clean reopen"
            }
            var expectedAfter = state
            expectedAfter[Array("~after".utf8)] = Array("yes".utf8)
            if afterState != expectedAfter {
                return "after a new write and a clean reopen the store no longer holds the recovered state"
            }
            try assertStoreIsClean(path: storePath, fileSystem: image, context: context)
            return nil
        } catch {
            return "reopening failed: \(error)"
        }
    }

    static func modes(seed: UInt64, point: Int) -> [SimulatedFileSystem.CrashMode] {
        let mixed = seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(point)
        return [.loseAllUnsynced, .keepAll, .random(seed: mixed), .random(seed: mixed ^ 0xDEAD_BEEF)]
    }
}

final class HitCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
    var value: Int { count.load(ordering: .relaxed) }
}

@Suite("Crash recovery on the simulated file system")
struct CrashRecoveryTests {
    static let seeds: [UInt64] = {
        if let text = ProcessInfo.processInfo.environment["STRATA_SEED"], let seed = UInt64(text) { return [seed] }
        return ProcessInfo.processInfo.environment["STRATA_LONG_TESTS"] == "1" ? Array(1...12) : [1, 2, 3, 4]
    }()

    static var transactions: Int {
        ProcessInfo.processInfo.environment["STRATA_LONG_TESTS"] == "1" ? 400 : 180
    }

    /// Power fails at every file-system operation of the workload; each failure point is
    /// reopened in four crash images (all unsynced lost, all kept, two random mixes with torn
    /// sectors and undone directory entries).
    @Test("crash at every file-system operation", arguments: seeds)
    func crashAtEveryOperation(seed: UInt64) throws {
        let workload = CrashWorkload(seed: seed, transactions: Self.transactions)

        // A clean run counts the operations and must itself verify.
        let clean = SimulatedFileSystem()
        let cleanOutcome = SharedOutcome()
        CrashHarness.run(workload, on: clean, outcome: cleanOutcome)
        let totalOperations = clean.operationCount
        #expect(cleanOutcome.withLock { $0.attempted } == Self.transactions, "seed \(seed): the clean run did not finish")

        var checked = 0
        var failures: [String] = []
        for point in 0...totalOperations {
            let fileSystem = SimulatedFileSystem()
            fileSystem.failAfter(operations: point)
            let outcome = SharedOutcome()
            CrashHarness.run(workload, on: fileSystem, outcome: outcome)
            let acknowledged = outcome.withLock { $0 }
            for mode in CrashHarness.modes(seed: seed, point: point) {
                checked += 1
                let context = "seed \(seed), crash at operation \(point) of \(totalOperations), \(mode)"
                if let problem = CrashHarness.verify(image: fileSystem.crashImage(mode), workload: workload, outcome: acknowledged, context: context) {
                    failures.append("\(context): \(problem)")
                }
            }
            if failures.count >= 5 { break }
        }
        print("crash recovery, seed \(seed): \(checked) crash states checked over \(totalOperations + 1) failure points")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n")) (replay with STRATA_SEED=\(seed))")
        #expect(checked >= 4 * totalOperations || !failures.isEmpty)
    }

    /// With the default 64 MiB segments the log grows in 1 MiB preallocation steps; power
    /// fails at every operation of a workload that crosses several steps.
    @Test("crash while the log grows past preallocation steps")
    func crashAcrossPreallocationSteps() throws {
        let seed: UInt64 = 11
        let segmentBytes = StoreOptions().walSegmentBytes
        let workload = CrashWorkload(seed: seed, transactions: 60, largeValueBytes: 200_000...400_000)
        let clean = SimulatedFileSystem()
        CrashHarness.run(workload, on: clean, segmentBytes: segmentBytes, outcome: SharedOutcome())
        let walSize = clean.contents(of: CrashHarness.storePath + "/wal-0000000001.log")?.count ?? 0
        #expect(walSize > 2 << 20, "the workload should cross several preallocation steps")

        var failures: [String] = []
        for point in 0...clean.operationCount {
            let fileSystem = SimulatedFileSystem()
            fileSystem.failAfter(operations: point)
            let outcome = SharedOutcome()
            CrashHarness.run(workload, on: fileSystem, segmentBytes: segmentBytes, outcome: outcome)
            let acknowledged = outcome.withLock { $0 }
            for mode in CrashHarness.modes(seed: seed, point: point) {
                if let problem = CrashHarness.verify(
                    image: fileSystem.crashImage(mode), workload: workload, outcome: acknowledged,
                    segmentBytes: segmentBytes, context: "crash at operation \(point), \(mode)")
                {
                    failures.append("crash at operation \(point), \(mode): \(problem)")
                }
            }
            if failures.count >= 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// The writer is frozen at each named point of the write path, as a suspended app is
    /// frozen mid-write, and the process is "killed" there: the disk's state at that moment
    /// must recover like any crash.
    @Test(
        "freeze the writer at each failpoint, then lose power",
        arguments: [Failpoints.Point.beforeWALWrite, .afterWALWriteBeforeSync, .beforePublish, .beforeSegmentRoll])
    func freezeAtFailpoint(point: Failpoints.Point) throws {
        let seed: UInt64 = 7
        let workload = CrashWorkload(seed: seed, transactions: 60)
        var frozenStates = 0
        for hit in [1, 3, 10, 25] {
            let fileSystem = SimulatedFileSystem()
            let outcome = SharedOutcome()
            let hits = HitCounter()
            let frozen = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let failpoints = Failpoints { reached in
                guard reached == point, hits.increment() == hit else { return }
                frozen.signal()
                release.wait()
            }
            let finished = DispatchSemaphore(value: 0)
            let runner = Thread {
                CrashHarness.run(workload, on: fileSystem, failpoints: failpoints, outcome: outcome)
                finished.signal()
                frozen.signal()
            }
            runner.start()
            frozen.wait()
            if hits.value >= hit {
                // Frozen at the point: what the disk holds now is all a kill would leave.
                let acknowledged = outcome.withLock { $0 }
                for mode in CrashHarness.modes(seed: seed, point: hit) {
                    frozenStates += 1
                    let problem = CrashHarness.verify(
                        image: fileSystem.crashImage(mode), workload: workload, outcome: acknowledged,
                        context: "failpoint \(point), hit \(hit), \(mode)")
                    #expect(problem == nil, "failpoint \(point), hit \(hit), \(mode): \(problem ?? "")")
                }
                release.signal()
            }
            finished.wait()
        }
        #expect(frozenStates > 0, "failpoint \(point) was never reached")
    }
}
