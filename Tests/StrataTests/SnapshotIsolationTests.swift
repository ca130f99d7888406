// Snapshot isolation under a live writer ("bank" test), and many concurrent writers.
// Replay with STRATA_SEED=<seed>; run longer with STRATA_LONG_TESTS=1. Thread timing is not
// deterministic, but every random choice is, and every failure names the seed.
import Dispatch
import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

// MARK: - The bank

/// Accounts "acct-0000"... with 8-byte big-endian two's-complement balances; the total never
/// changes.
enum IsolationBank {
    static let accounts = 50
    static let initialBalance: Int64 = 1000
    static let total = Int64(accounts) * initialBalance
    static let prefix = Array("acct-".utf8)

    static func key(_ index: Int) -> [UInt8] {
        let digits = String(index)
        return prefix + Array((String(repeating: "0", count: max(0, 4 - digits.count)) + digits).utf8)
    }

    static func encode(_ balance: Int64) -> [UInt8] {
        let bits = UInt64(bitPattern: balance)
        return (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * $0)) }
    }

    static func decode(_ bytes: [UInt8]?) -> Int64? {
        guard let bytes, bytes.count == 8 else { return nil }
        return Int64(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// Every balance, by one prefix scan; nil when the keys or values are not exactly the
    /// accounts'.
    static func scanBalances(_ tx: some ReadableTransaction, reverse: Bool = false) throws -> [Int64]? {
        var entries = Array(try tx.scan(prefix: prefix, reverse: reverse))
        if reverse { entries.reverse() }
        guard entries.count == accounts else { return nil }
        var balances: [Int64] = []
        for (index, entry) in entries.enumerated() {
            guard entry.key == key(index), let balance = decode(entry.value) else { return nil }
            balances.append(balance)
        }
        return balances
    }

    /// Every balance, by one get per account.
    static func getBalances(_ tx: some ReadableTransaction) throws -> [Int64]? {
        var balances: [Int64] = []
        for index in 0..<accounts {
            guard let balance = decode(try tx.get(key(index))) else { return nil }
            balances.append(balance)
        }
        return balances
    }

    static func describe(_ balances: [Int64]?) -> String {
        guard let balances else { return "unreadable accounts" }
        return "sum \(balances.reduce(0, +)) \(balances.prefix(6))…"
    }
}

/// The balances one snapshot saw.
struct IsolationReading: Sendable, Equatable {
    var version: UInt64
    var balances: [Int64]
}

/// Reads a snapshot by scan and by gets, checks the two agree and keep the total, and
/// returns the reading; problems go to `log`.
func isolationRead(_ snapshot: Snapshot, log: TestEnvironment.FailureLog, context: String) throws -> IsolationReading? {
    try snapshot.read { tx -> IsolationReading? in
        if tx.version != snapshot.version {
            log.record("\(context): snapshot.version \(snapshot.version), but its read is at \(tx.version)")
        }
        let byScan = try IsolationBank.scanBalances(tx)
        let byGets = try IsolationBank.getBalances(tx)
        guard let byScan, byScan.reduce(0, +) == IsolationBank.total else {
            log.record(
                "\(context): snapshot at version \(snapshot.version) by prefix scan: \(IsolationBank.describe(byScan)), expected total \(IsolationBank.total)")
            return nil
        }
        if byGets != byScan {
            log.record(
                "\(context): snapshot at version \(snapshot.version): gets give \(IsolationBank.describe(byGets)), the scan \(IsolationBank.describe(byScan))")
            return nil
        }
        return IsolationReading(version: snapshot.version, balances: byScan)
    }
}

/// Another isolation domain to send snapshots to.
actor IsolationAuditor {
    private(set) var audits = 0

    func read(_ snapshot: Snapshot, log: TestEnvironment.FailureLog, context: String) throws -> IsolationReading? {
        audits += 1
        return try isolationRead(snapshot, log: log, context: context + " (on the auditor actor)")
    }
}

/// State shared by the bank test's threads.
final class IsolationShared: Sendable {
    let log = TestEnvironment.FailureLog()
    let writerDone = Atomic<Bool>(false)
    /// Every reading a reader thread made.
    let observations = Locked<[IsolationReading]>([])
    /// Snapshots the readers kept open, with what they saw the first time.
    let kept = Locked<[(snapshot: Snapshot, reading: IsolationReading)]>([])
    /// The writer's own record: balances after each commit, indexed by version.
    let history = Locked<[[Int64]]>([])
    let readerPasses = Atomic<Int>(0)
}

enum IsolationThreads {
    /// Runs `body` on a new thread; `group` is left when it returns.
    static func spawn(_ name: String, group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for `group` without blocking a task's thread.
    static func wait(for group: DispatchGroup) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }
}

// MARK: - Bank test

@Suite struct SnapshotIsolationTests {
    static let transfers = TestEnvironment.scaled(5000)
    static let readers = 6

    @Test func snapshotIsolationKeepsTotalsWhileMoneyMoves() async throws {
        let seed = TestEnvironment.seed(0x5EED_0B4E, test: "snapshotIsolationKeepsTotalsWhileMoneyMoves")
        try await TestEnvironment.withTemporaryDirectory("isolation") { directory in
            let store = try Store(path: directory + "/bank", options: StoreOptions())
            defer { try? store.close() }
            try await store.write { tx in
                for index in 0..<IsolationBank.accounts {
                    try tx.put(IsolationBank.key(index), IsolationBank.encode(IsolationBank.initialBalance))
                }
            }
            try #require(store.version == 1, "seed \(seed): opening the accounts should be commit 1")

            let shared = IsolationShared()
            let threads = DispatchGroup()
            let transfers = SnapshotIsolationTests.transfers
            IsolationThreads.spawn("bank-writer", group: threads) {
                SnapshotIsolationTests.runWriter(store: store, shared: shared, seed: seed, transfers: transfers)
            }
            for reader in 0..<SnapshotIsolationTests.readers {
                IsolationThreads.spawn("bank-reader-\(reader)", group: threads) {
                    SnapshotIsolationTests.runReader(reader, store: store, shared: shared, seed: seed)
                }
            }

            // Meanwhile, from this task: send snapshots to an actor and to a detached task,
            // and read the latest commit through the async read.
            let auditor = IsolationAuditor()
            var audits = 0
            while !shared.writerDone.load(ordering: .acquiring) {
                let snapshot = store.snapshot()
                let context = "seed \(seed) audit #\(audits)"
                let here = try isolationRead(snapshot, log: shared.log, context: context)
                let there = try await auditor.read(snapshot, log: shared.log, context: context)
                let detached = try await Task.detached {
                    try isolationRead(snapshot, log: shared.log, context: context + " (detached task)")
                }.value
                #expect(
                    here != nil && here == there && here == detached,
                    "seed \(seed) audit #\(audits): one snapshot read three ways differs: here \(String(describing: here?.version)) \(IsolationBank.describe(here?.balances)), actor \(IsolationBank.describe(there?.balances)), detached \(IsolationBank.describe(detached?.balances))"
                )
                snapshot.close()
                let latest = try await store.read { tx in try IsolationBank.scanBalances(tx) }
                #expect(
                    latest?.reduce(0, +) == IsolationBank.total,
                    "seed \(seed) audit #\(audits): store.read saw \(IsolationBank.describe(latest))")
                audits += 1
                try await Task.sleep(for: .milliseconds(2))
            }
            await IsolationThreads.wait(for: threads)
            try #require(shared.log.report(), "seed \(seed): failures above (found on the writer or reader threads)")

            // Every reading equals the writer's own record of that version.
            let history = shared.history.withLock { $0 }
            try #require(history.count == transfers + 2, "seed \(seed): the writer recorded \(history.count - 2) of \(transfers) transfers")
            let observations = shared.observations.withLock { $0 }
            var mismatches = 0
            for reading in observations {
                let recorded = reading.version < history.count ? history[Int(reading.version)] : nil
                if reading.balances != recorded {
                    mismatches += 1
                    if mismatches <= 5 {
                        Issue.record(
                            "seed \(seed): a snapshot at version \(reading.version) saw \(IsolationBank.describe(reading.balances)); that commit left \(IsolationBank.describe(recorded))"
                        )
                    }
                }
            }
            #expect(mismatches == 0, "seed \(seed): \(mismatches) of \(observations.count) readings differ from the writer's record")
            let versionsSeen = Set(observations.map(\.version)).count
            #expect(versionsSeen > 10, "seed \(seed): readers saw only \(versionsSeen) distinct versions; they did not overlap the writer")

            // Kept snapshots, read again on this thread after every write: the same answer.
            let kept = shared.kept.withLock { $0 }
            try #require(!kept.isEmpty, "seed \(seed): readers kept no snapshots")
            for (index, (snapshot, reading)) in kept.enumerated() {
                let again = try isolationRead(snapshot, log: shared.log, context: "seed \(seed) kept snapshot #\(index)")
                #expect(
                    again == reading && snapshot.version == reading.version,
                    "seed \(seed): kept snapshot #\(index) (version \(reading.version)) first saw \(IsolationBank.describe(reading.balances)), at the end \(IsolationBank.describe(again?.balances)) version \(String(describing: again?.version))"
                )
            }
            try #require(shared.log.report(), "seed \(seed): failures above (re-reading kept snapshots)")

            var stats = try store.stats()
            #expect(
                stats.liveSnapshots == kept.count,
                "seed \(seed): stats().liveSnapshots is \(stats.liveSnapshots) with \(kept.count) snapshots open")
            #expect(
                stats.oldestSnapshotVersion == kept.map(\.reading.version).min(),
                "seed \(seed): oldestSnapshotVersion \(String(describing: stats.oldestSnapshotVersion)), oldest kept \(String(describing: kept.map(\.reading.version).min()))"
            )
            for (snapshot, _) in kept { snapshot.close() }
            stats = try store.stats()
            #expect(
                stats.liveSnapshots == 0 && stats.oldestSnapshotVersion == nil,
                "seed \(seed): after closing every snapshot, liveSnapshots \(stats.liveSnapshots), oldest \(String(describing: stats.oldestSnapshotVersion))")
            let refused = #expect(throws: StoreError.self, "seed \(seed): a closed snapshot must refuse reads") {
                try kept[0].snapshot.read { tx in try tx.get(IsolationBank.key(0)) }
            }
            #expect(refused?.code == .closed, "seed \(seed): reading a closed snapshot threw \(String(describing: refused))")

            let final = try await store.read { tx in try IsolationBank.scanBalances(tx) }
            #expect(
                final == history.last && store.version == UInt64(transfers + 1),
                "seed \(seed): at the end the store holds \(IsolationBank.describe(final)) at version \(store.version); the writer left \(IsolationBank.describe(history.last)) at \(transfers + 1)"
            )
            print(
                "[isolation] seed \(seed): \(transfers) transfers, \(shared.readerPasses.load(ordering: .relaxed)) reader passes, \(observations.count) readings of \(versionsSeen) versions, \(kept.count) kept snapshots, \(audits) audits (\(await auditor.audits) on the actor)"
            )
        }
    }

    /// Moves random amounts between random accounts, reading both balances in the transaction.
    static func runWriter(store: Store, shared: IsolationShared, seed: UInt64, transfers: Int) {
        defer { shared.writerDone.store(true, ordering: .releasing) }
        var random = SeededRandom(seed: seed, stream: 0)
        var balances = [Int64](repeating: IsolationBank.initialBalance, count: IsolationBank.accounts)
        var history: [[Int64]] = [[], balances]
        var version: UInt64 = 1
        for transfer in 0..<transfers {
            let from = Int.random(in: 0..<IsolationBank.accounts, using: &random)
            var to = Int.random(in: 0..<(IsolationBank.accounts - 1), using: &random)
            if to >= from { to += 1 }
            let amount = Int64.random(in: 1...250, using: &random)
            let durability: Durability = Bool.random(using: &random) ? .synced : .buffered
            let audit = transfer % 100 == 0
            let context = "seed \(seed) transfer #\(transfer) (\(amount) from \(from) to \(to), \(durability))"
            do {
                let seen = try store.write(durability: durability) { tx -> (version: UInt64, from: Int64?, to: Int64?, audit: [Int64]?) in
                    let fromBalance = IsolationBank.decode(try tx.get(IsolationBank.key(from)))
                    let toBalance = IsolationBank.decode(try tx.get(IsolationBank.key(to)))
                    guard let fromBalance, let toBalance else { return (tx.version, fromBalance, toBalance, nil) }
                    try tx.put(IsolationBank.key(from), IsolationBank.encode(fromBalance - amount))
                    try tx.put(IsolationBank.key(to), IsolationBank.encode(toBalance + amount))
                    // The transaction's own scan sees its writes: the total still holds.
                    return (tx.version, fromBalance, toBalance, audit ? try IsolationBank.scanBalances(tx) : nil)
                }
                guard seen.version == version, seen.from == balances[from], seen.to == balances[to] else {
                    shared.log.record(
                        "\(context): the transaction read version \(seen.version) balances \(String(describing: seen.from)), \(String(describing: seen.to)); expected version \(version) balances \(balances[from]), \(balances[to])"
                    )
                    return
                }
                balances[from] -= amount
                balances[to] += amount
                version += 1
                history.append(balances)
                if audit && seen.audit != balances {
                    shared.log.record(
                        "\(context): a scan inside the transaction saw \(IsolationBank.describe(seen.audit)), expected \(IsolationBank.describe(balances))")
                }
            } catch {
                shared.log.record("\(context): the write failed: \(error)")
                return
            }
        }
        shared.history.withLock { $0 = history }
    }

    /// Takes snapshot after snapshot until the writer is done, checking each, keeping some,
    /// and re-reading kept ones later.
    static func runReader(_ reader: Int, store: Store, shared: IsolationShared, seed: UInt64) {
        var kept: [(snapshot: Snapshot, reading: IsolationReading)] = []
        var observations: [IsolationReading] = []
        var lastVersion: UInt64 = 0
        var pass = 0
        defer {
            shared.observations.withLock { $0.append(contentsOf: observations) }
            shared.kept.withLock { $0.append(contentsOf: kept) }
            shared.readerPasses.add(pass, ordering: .relaxed)
        }
        do {
            while pass < 3 || !shared.writerDone.load(ordering: .acquiring) {
                pass += 1
                let context = "seed \(seed) reader \(reader) pass \(pass)"
                let snapshot = store.snapshot()
                if snapshot.version < lastVersion {
                    shared.log.record("\(context): snapshot version went back from \(lastVersion) to \(snapshot.version)")
                }
                lastVersion = snapshot.version
                guard let reading = try isolationRead(snapshot, log: shared.log, context: context) else { return }
                observations.append(reading)
                if pass % 4 == 0 {
                    let reversed = try snapshot.read { tx in try IsolationBank.scanBalances(tx, reverse: true) }
                    if reversed != reading.balances {
                        shared.log.record(
                            "\(context): reverse prefix scan at version \(reading.version) gives \(IsolationBank.describe(reversed)), forward \(IsolationBank.describe(reading.balances))"
                        )
                    }
                }
                if pass % 10 == 0 && kept.count < 15 {
                    kept.append((snapshot, reading))
                } else {
                    snapshot.close()
                }
                // An older snapshot, after more writes: still the same answer.
                if pass % 7 == 0, !kept.isEmpty {
                    let (old, first) = kept[(pass / 7) % kept.count]
                    let again = try isolationRead(old, log: shared.log, context: context + " re-reading a kept snapshot")
                    if again != first {
                        shared.log.record(
                            "\(context): kept snapshot at version \(first.version) first saw \(IsolationBank.describe(first.balances)), now \(IsolationBank.describe(again?.balances))"
                        )
                    }
                }
                if pass % 5 == 0 {
                    let latest = try store.read { tx in (tx.version, try IsolationBank.scanBalances(tx)) }
                    if latest.1?.reduce(0, +) != IsolationBank.total || latest.0 < lastVersion {
                        shared.log.record(
                            "\(context): store.read at version \(latest.0) (after a snapshot at \(lastVersion)) saw \(IsolationBank.describe(latest.1))")
                    }
                }
                if !shared.log.isEmpty { return }
            }
        } catch {
            shared.log.record("seed \(seed) reader \(reader) pass \(pass): \(error)")
        }
    }
}

// MARK: - Concurrent writers

/// Collects commit sequences from many writers.
final class IsolationSequenceCollector: Sendable {
    private let sequences = Locked<[UInt64]>([])

    func add(_ sequence: UInt64) {
        sequences.withLock { $0.append(sequence) }
    }

    var all: [UInt64] { sequences.withLock { $0 } }
}

@Suite struct IsolationConcurrentWriterTests {
    static let threads = 8
    static let perThread = 200
    static let tasks = 4
    static let perTask = 100

    static func key(_ writer: Int, _ index: Int) -> [UInt8] {
        Array("w\(writer)-\(index)".utf8)
    }

    static func value(seed: UInt64, _ writer: Int, _ index: Int) -> [UInt8] {
        var random = SeededRandom(seed: seed, stream: UInt64(writer * 100_000 + index))
        return Array("w\(writer)-\(index):".utf8) + random.bytes(count: Int.random(in: 0...64, using: &random))
    }

    @Test func concurrentWritersEveryCommitLands() async throws {
        let seed = TestEnvironment.seed(0x5EED_C0C0, test: "concurrentWritersEveryCommitLands")
        try await TestEnvironment.withTemporaryDirectory("concurrent") { directory in
            let path = directory + "/store"
            let store = try Store(path: path, options: StoreOptions())
            let log = TestEnvironment.FailureLog()
            let collector = IsolationSequenceCollector()
            let group = DispatchGroup()
            let writerCount = Self.threads + Self.tasks

            for writer in 0..<Self.threads {
                IsolationThreads.spawn("writer-\(writer)", group: group) {
                    for index in 0..<Self.perThread {
                        do {
                            let version = try store.write(durability: .synced) { tx in
                                try tx.put(Self.key(writer, index), Self.value(seed: seed, writer, index))
                                return tx.version
                            }
                            collector.add(version + 1)
                        } catch {
                            log.record("seed \(seed) thread writer \(writer) put #\(index): \(error)")
                            return
                        }
                    }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for task in 0..<Self.tasks {
                    let writer = Self.threads + task
                    tasks.addTask {
                        for index in 0..<Self.perTask {
                            let key = Self.key(writer, index)
                            let value = Self.value(seed: seed, writer, index)
                            let version: UInt64
                            if task % 2 == 0 {
                                version = try await store.write(durability: .synced) { tx in
                                    try tx.put(key, value)
                                    return tx.version
                                }
                            } else {
                                version = try await withCheckedThrowingContinuation { continuation in
                                    store.asyncWrite(
                                        durability: index % 2 == 0 ? .synced : .buffered,
                                        { tx in
                                            try tx.put(key, value)
                                            return tx.version
                                        }, completion: { continuation.resume(with: $0) })
                                }
                            }
                            collector.add(version + 1)
                        }
                    }
                }
                try await tasks.waitForAll()
            }
            await IsolationThreads.wait(for: group)
            try #require(log.report(), "seed \(seed): writer threads failed (above)")

            let total = Self.threads * Self.perThread + Self.tasks * Self.perTask
            let sequences = collector.all.sorted()
            #expect(
                sequences == (1...UInt64(total)).map { $0 },
                "seed \(seed): \(sequences.count) commits got \(Set(sequences).count) distinct sequences from \(String(describing: sequences.first)) to \(String(describing: sequences.last)); expected exactly 1...\(total)"
            )
            #expect(store.version == UInt64(total), "seed \(seed): version \(store.version) after \(total) transactions")
            try Self.checkAllKeys(store, seed: seed, writers: writerCount, context: "seed \(seed) before reopen")

            try store.close()
            let reopened = try Store(path: path, options: StoreOptions())
            defer { try? reopened.close() }
            let report = reopened.recovery
            #expect(
                report.truncatedTail == nil && report.lastSequence == UInt64(total) && report.transactionsReplayed == total,
                "seed \(seed): reopening replayed \(report.transactionsReplayed) transactions to version \(report.lastSequence) (expected \(total)), tail \(String(describing: report.truncatedTail))"
            )
            #expect(reopened.version == UInt64(total), "seed \(seed): reopened at version \(reopened.version), expected \(total)")
            try Self.checkAllKeys(reopened, seed: seed, writers: writerCount, context: "seed \(seed) after reopen")
        }
    }

    static func checkAllKeys(_ store: Store, seed: UInt64, writers: Int, context: String) throws {
        try store.read { tx in
            var missing = 0
            var expectedCount = 0
            for writer in 0..<writers {
                let count = writer < threads ? perThread : perTask
                expectedCount += count
                for index in 0..<count {
                    let got = try tx.get(key(writer, index))
                    if got != value(seed: seed, writer, index) {
                        missing += 1
                        if missing <= 3 {
                            Issue.record("\(context): key w\(writer)-\(index) holds \(TestEnvironment.hex(got))")
                        }
                    }
                }
            }
            #expect(missing == 0, "\(context): \(missing) keys missing or wrong")
            let scanned = try tx.scan(from: []).count
            #expect(scanned == expectedCount, "\(context): a full scan finds \(scanned) keys, expected \(expectedCount)")
        }
    }
}
