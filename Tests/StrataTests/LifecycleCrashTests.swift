// Simulated suspension in the crash-injection suite. One store (the app) writes through all
// three write APIs, syncs, compacts, and goes through suspend/resume cycles; while it is
// suspended, a second store on the same path (another process: an app extension) opens,
// writes and closes, and the app's resume() reloads. The process may be frozen at any
// file-system operation of that workload (in the writer, a flush, a compaction, suspend's
// own sync, the other process, the reload) and then killed, or lose power: power fails at
// every operation in turn, and each crash point is reopened in several crash images.
//
// Flushes and compactions run inline (`runsBackgroundWorkInline`), so the operations come in
// the same order on every run and "crash at operation k" names the same moment in each.
// Replay a seed with STRATA_SEED=<seed>; STRATA_LONG_TESTS=1 checks more seeds and images.
import Dispatch
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

/// The workload's transactions in commit order, each with who writes it and how, and the
/// lifecycle events between them.
struct SuspensionWorkload {
    enum WriteAPI: CaseIterable {
        case sync, async, callback
    }

    enum Action {
        /// The app commits transaction `index` (1-based) through `api`.
        case write(index: Int, api: WriteAPI)
        case sync
        case compact
        /// The app suspends; another process commits `otherProcess` (maybe none) while it is
        /// suspended; the app resumes.
        case suspendCycle(otherProcess: ClosedRange<Int>?)
    }

    let base: CrashWorkload
    let transactions: [CrashWorkload.Transaction]
    var actions: [Action] = []

    init(seed: UInt64, transactions count: Int) {
        base = CrashWorkload(
            seed: seed, transactions: count, keys: 120, writesPerTransaction: 2...7, smallValueBytes: 50...400,
            largeValueOneIn: 0, compactAfter: [count / 3])
        var flat: [CrashWorkload.Transaction] = []
        var steps: [CrashWorkload.Step] = []
        for step in base.steps {
            switch step {
            case .single(let transaction): flat.append(transaction)
            case .group(let group): flat.append(contentsOf: group)
            case .sync, .compact: break
            }
            steps.append(step)
        }
        transactions = flat

        var random = SeededRandom(seed: seed ^ 0x5A5A_5A5A)
        var index = 1
        var sinceCycle = 0
        var cycles = 0
        for step in steps {
            switch step {
            case .sync:
                actions.append(.sync)
            case .compact:
                actions.append(.compact)
            case .single, .group:
                let size: Int
                if case .group(let group) = step { size = group.count } else { size = 1 }
                for _ in 0..<size where index <= flat.count {
                    // A suspension every 10 to 30 commits; every other one lets the other
                    // process take the next one to three commits.
                    if sinceCycle >= Int.random(in: 10...30, using: &random) {
                        cycles += 1
                        sinceCycle = 0
                        if cycles % 2 == 0 {
                            let last = min(index + Int.random(in: 0...2, using: &random), flat.count)
                            actions.append(.suspendCycle(otherProcess: index...last))
                            index = last + 1
                            continue
                        }
                        actions.append(.suspendCycle(otherProcess: nil))
                    }
                    guard index <= flat.count else { break }
                    let api = WriteAPI.allCases.randomElement(using: &random)!
                    actions.append(.write(index: index, api: api))
                    index += 1
                    sinceCycle += 1
                }
            }
        }
        precondition(index == flat.count + 1, "SuspensionWorkload: \(index - 1) of \(flat.count) transactions placed")
    }

    var suspendCycles: Int {
        actions.filter { if case .suspendCycle = $0 { true } else { false } }.count
    }

    var otherProcessCommits: Int {
        actions.reduce(0) { count, action in
            if case .suspendCycle(let range?) = action { count + range.count } else { count }
        }
    }
}

/// Runs the workload on a simulated file system until it ends or a call fails.
enum SuspensionHarness {
    static let budgets = LevelBudgets()

    /// What the clean run saw, for the test to check it did what it is about.
    struct Figures {
        var reloads = 0
        var unchangedResumes = 0
    }

    static func run(_ workload: SuspensionWorkload, on fileSystem: SimulatedFileSystem, outcome: SharedOutcome) async -> Figures {
        var figures = Figures()
        guard (try? fileSystem.createDirectory("/crash")) != nil, (try? fileSystem.syncDirectory("/")) != nil else { return figures }
        let options = CrashHarness.options(fileSystem, levels: budgets)
        guard let app = try? Store(path: CrashHarness.storePath, options: options) else { return figures }
        defer { try? app.close() }
        var lastAcknowledged = 0

        func acknowledge(_ index: Int, _ durability: Durability) {
            lastAcknowledged = index
            if durability == .synced { outcome.withLock { $0.durableThrough = index } }
        }
        func everythingDurable() {
            let durable = lastAcknowledged
            outcome.withLock { $0.durableThrough = max($0.durableThrough, durable) }
        }

        for action in workload.actions {
            switch action {
            case .write(let index, let api):
                let transaction = workload.transactions[index - 1]
                outcome.withLock { $0.attempted = index }
                guard await write(transaction, to: app, through: api) else { return figures }
                acknowledge(index, transaction.durability)
            case .sync:
                guard (try? await app.sync()) != nil else { return figures }
                everythingDurable()
            case .compact:
                guard (try? await app.compact()) != nil else { return figures }
            case .suspendCycle(let otherProcess):
                // When suspend() returns, every acknowledged commit is durable.
                guard (try? await app.suspend()) != nil else { return figures }
                everythingDurable()
                if let otherProcess {
                    guard let other = try? Store(path: CrashHarness.storePath, options: options) else { return figures }
                    for index in otherProcess {
                        let transaction = workload.transactions[index - 1]
                        outcome.withLock { $0.attempted = index }
                        let box = TransactionBox(transaction)
                        guard (try? await other.write(durability: transaction.durability, { tx in try CrashHarness.apply(box.transaction, to: tx) })) != nil
                        else {
                            try? other.close()
                            return figures
                        }
                        acknowledge(index, transaction.durability)
                    }
                    guard (try? other.close()) != nil else { return figures }
                    everythingDurable()
                }
                guard let resumed = try? app.resume() else { return figures }
                if case .reloaded = resumed { figures.reloads += 1 } else { figures.unchangedResumes += 1 }
            }
        }
        return figures
    }

    /// Commits one transaction through one of the three write APIs; true when acknowledged.
    /// The sync and callback forms block this (cooperative) thread only while the writer,
    /// which runs on a queue of its own, commits.
    private static func write(_ transaction: CrashWorkload.Transaction, to store: Store, through api: SuspensionWorkload.WriteAPI) async -> Bool {
        switch api {
        case .sync:
            return blockingWrite(transaction, to: store)
        case .callback:
            let done = DispatchSemaphore(value: 0)
            let succeeded = Atomic<Bool>(false)
            store.asyncWrite(durability: transaction.durability, { tx in try CrashHarness.apply(transaction, to: tx) }) { result in
                if case .success = result { succeeded.store(true, ordering: .relaxed) }
                done.signal()
            }
            done.wait()
            return succeeded.load(ordering: .relaxed)
        case .async:
            let box = TransactionBox(transaction)
            return (try? await store.write(durability: transaction.durability) { tx in try CrashHarness.apply(box.transaction, to: tx) }) != nil
        }
    }
}

/// The synchronous write API (from async code the compiler would pick the async one).
private func blockingWrite(_ transaction: CrashWorkload.Transaction, to store: Store) -> Bool {
    (try? store.write(durability: transaction.durability) { tx in try CrashHarness.apply(transaction, to: tx) }) != nil
}

/// A workload transaction handed to an async write. @unchecked Sendable: it is immutable
/// once built, and the test thread waits while the task reads it.
private final class TransactionBox: @unchecked Sendable {
    let transaction: CrashWorkload.Transaction
    init(_ transaction: CrashWorkload.Transaction) { self.transaction = transaction }
}

@Suite("Crash recovery across suspension, another process's writes and reloads")
struct LifecycleCrashTests {
    static let seeds: [UInt64] = {
        if let seed = TestEnvironment.replaySeed { return [seed] }
        return TestEnvironment.longTests ? [31, 32, 33, 34, 35, 36] : [31, 32]
    }()

    static var transactions: Int { TestEnvironment.longTests ? 400 : 160 }

    /// The crash images each point is reopened in: a frozen-then-killed process (every
    /// write reached the page cache: `.keepAll`), power loss of everything unsynced, and
    /// seeded mixes with torn sectors and undone directory entries. Normal runs check one
    /// of the two mixes per point, alternating, to stay inside CI's time.
    static func modes(seed: UInt64, point: Int) -> [SimulatedFileSystem.CrashMode] {
        let all = CrashHarness.modes(seed: seed, point: point)
        if TestEnvironment.longTests { return all }
        return [.keepAll, .loseAllUnsynced, all[2 + point % 2]]
    }

    /// Each seed's crash points are split between this many test cases (point k goes to case
    /// k % parts), which run side by side: one case per seed took a whole core for the
    /// last minute of `swift test`, after every other test had finished.
    static let parts = 2

    @Test("freeze and crash at every file-system operation of a workload with suspensions", arguments: seeds, 0..<parts)
    func crashAcrossSuspensions(seed: UInt64, part: Int) async throws {
        let started = Date()
        let workload = SuspensionWorkload(seed: seed, transactions: Self.transactions)

        // A clean run must finish and verify; it shows the workload did what it is about.
        let clean = SimulatedFileSystem()
        let cleanOutcome = SharedOutcome()
        let figures = await SuspensionHarness.run(workload, on: clean, outcome: cleanOutcome)
        let totalOperations = clean.operationCount
        try #require(cleanOutcome.withLock { $0.attempted } == Self.transactions, "seed \(seed): the clean run did not finish")
        #expect(
            figures.reloads >= 3 && figures.unchangedResumes >= 3, "seed \(seed): \(figures.reloads) reloads, \(figures.unchangedResumes) unchanged resumes")
        #expect(workload.otherProcessCommits >= 3, "seed \(seed): the other process committed \(workload.otherProcessCommits) transactions")
        if let failure = CrashHarness.verify(
            image: clean.crashImage(.loseAllUnsynced), workload: workload.base,
            outcome: cleanOutcome.withLock { $0 }, levels: SuspensionHarness.budgets, context: "seed \(seed), clean run")
        {
            Issue.record("seed \(seed): the clean run does not verify: \(failure)")
            return
        }

        var states = 0
        var failures: [String] = []
        for point in stride(from: part, through: totalOperations, by: Self.parts) {
            let fileSystem = SimulatedFileSystem()
            fileSystem.failAfter(operations: point)
            let outcome = SharedOutcome()
            _ = await SuspensionHarness.run(workload, on: fileSystem, outcome: outcome)
            let acknowledged = outcome.withLock { $0 }
            for mode in Self.modes(seed: seed, point: point) {
                states += 1
                let context = "seed \(seed) (STRATA_SEED=\(seed) replays it), crash at operation \(point) of \(totalOperations), image \(mode)"
                if let failure = CrashHarness.verify(
                    image: fileSystem.crashImage(mode), workload: workload.base, outcome: acknowledged, levels: SuspensionHarness.budgets,
                    context: context)
                {
                    failures.append("\(context): \(failure)")
                }
            }
            if failures.count >= 5 { break }
        }
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        let seconds = Date().timeIntervalSince(started)
        print(
            "LifecycleCrashTests seed \(seed), part \(part + 1) of \(Self.parts): \(states) crash states at the points k % \(Self.parts) == \(part) of \(totalOperations + 1) crash points, \(workload.suspendCycles) suspensions (\(figures.reloads) reloads), \(workload.otherProcessCommits) commits by the other process, in \(String(format: "%.1f", seconds)) s"
        )
    }
}
