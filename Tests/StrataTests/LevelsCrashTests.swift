// Power loss during flushes, manifest edits and installs, compactions and the deletion of
// obsolete files. The budgets are small enough that a few hundred small transactions flush
// and compact several times, and that work runs inline on the writer (the
// `runsBackgroundWorkInline` hook), so the file-system operations come in the same order on
// every run and "crash at operation k" names the same moment in each. Replay a seed with
// STRATA_SEED=<seed>; STRATA_LONG_TESTS=1 checks more seeds and every crash point.
import Dispatch
import Foundation
@_spi(Testing) import Strata
import StrataFormat
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

/// What a clean run of the workload did, as its failpoints saw it: each point reached, with
/// the file-system operation count at that moment, and every name the store directory held
/// at any point. Inline maintenance makes both the same on every run.
final class MaintenanceTrace: Sendable {
    struct Event: Sendable {
        var point: Failpoints.Point
        /// Mutating operations done before the point: `failAfter(operations:)` with this
        /// number cuts the power just after it.
        var operation: Int
    }

    private let state = Locked<(events: [Event], names: Set<String>)>(([], []))

    func record(_ point: Failpoints.Point, on fileSystem: SimulatedFileSystem) {
        let operation = fileSystem.operationCount
        let names = (try? fileSystem.listDirectory(CrashHarness.storePath)) ?? []
        state.withLock {
            $0.events.append(Event(point: point, operation: operation))
            $0.names.formUnion(names)
        }
    }

    var events: [Event] { state.withLock { $0.events } }
    var namesSeen: Set<String> { state.withLock { $0.names } }

    func count(_ point: Failpoints.Point) -> Int { events.filter { $0.point == point }.count }

    static let writerPoints: Set<Failpoints.Point> = [.beforeWALWrite, .afterWALWriteBeforeSync, .beforePublish, .beforeSegmentRoll]

    /// The operations of maintenance and of opening and closing: from each flush or
    /// compaction to the writer's next step (inline, the writer waits for them), from the
    /// start to the writer's first step (open: manifest install, cleanup), and from its last
    /// step to the end (close).
    func maintenanceOperations(total: Int) -> Set<Int> {
        let events = self.events
        var covered = Set<Int>()
        func cover(_ range: ClosedRange<Int>) { covered.formUnion(range.clamped(to: 0...total)) }
        let writerEvents = events.filter { MaintenanceTrace.writerPoints.contains($0.point) }
        cover(0...(writerEvents.first?.operation ?? total))
        cover((writerEvents.last?.operation ?? 0)...total)
        for (index, event) in events.enumerated() where event.point == .beforeFlush || event.point == .beforeCompaction {
            let end = events[(index + 1)...].first { MaintenanceTrace.writerPoints.contains($0.point) }?.operation ?? total
            cover(event.operation...max(event.operation, end))
        }
        return covered
    }
}

/// Failpoint handler state for the freeze test: which maintenance job ran last, and how many
/// flush edits there have been.
final class MaintenanceFaults: Sendable {
    private let state = Locked<(inFlush: Bool, flushEdits: Int, injected: Int)>((false, 0, 0))

    /// Called at every failpoint. Makes the manifest sync of every other flush's edit fail
    /// (each failure is followed by an edit that succeeds, the retry), so the next edit must
    /// install a new manifest: the only way `.beforeManifestInstall` is reached on a store
    /// that is already open.
    func observe(_ point: Failpoints.Point, fileSystem: SimulatedFileSystem) {
        let inject: Bool = state.withLock { state in
            switch point {
            case .beforeFlush: state.inFlush = true
            case .beforeCompaction: state.inFlush = false
            case .beforeManifestEdit where state.inFlush:
                state.flushEdits += 1
                if state.flushEdits % 2 == 1 {
                    state.injected += 1
                    return true
                }
            default: break
            }
            return false
        }
        // Inline, the writer waits for this job: the next sync is the manifest's.
        if inject { fileSystem.failNext(.sync) }
    }

    var injected: Int { state.withLock { $0.injected } }
}

/// Once armed, makes the next file-system operation of `kind` fail, once, when a compaction
/// reaches `point`. At `.beforeManifestEdit`, `.sync` fails the edit's fsync after its record
/// is written (as an EIO from fsync does: the bytes may still reach the disk, and are in the
/// page cache). At `.beforeManifestInstall`, `.syncDirectory` fails the new manifest's install
/// after its rename.
final class CompactionFault: Sendable {
    let point: Failpoints.Point
    let kind: SimulatedFileSystem.OperationKind
    private let state = Locked<(armed: Bool, inCompaction: Bool, fired: Bool)>((false, false, false))

    init(at point: Failpoints.Point, failing kind: SimulatedFileSystem.OperationKind) {
        self.point = point
        self.kind = kind
    }

    func arm() { state.withLock { $0.armed = true } }
    var fired: Bool { state.withLock { $0.fired } }

    func observe(_ reached: Failpoints.Point, fileSystem: SimulatedFileSystem) {
        let inject: Bool = state.withLock { state in
            switch reached {
            case .beforeFlush: state.inCompaction = false
            case .beforeCompaction: state.inCompaction = true
            case point where state.armed && state.inCompaction && !state.fired:
                state.fired = true
                return true
            default: break
            }
            return false
        }
        if inject { fileSystem.failNext(kind) }
    }
}

@Suite("Crash recovery across flush, manifest, compaction and file deletion")
struct LevelsCrashTests {
    static let seeds: [UInt64] = {
        if let seed = TestEnvironment.replaySeed { return [seed] }
        return TestEnvironment.longTests ? [21, 22, 23, 24, 25, 26] : [21]
    }()

    static let budgets = LevelBudgets()

    /// A few hundred transactions of 3-9 writes of 100-300 bytes over 150 keys, a fifth of
    /// them deletes, mixed durability, with two explicit compactions.
    static func workload(seed: UInt64) -> CrashWorkload {
        CrashWorkload(
            seed: seed, transactions: 300, keys: 150, writesPerTransaction: 3...9, smallValueBytes: 100...300,
            largeValueOneIn: 0, compactAfter: [110, 240])
    }

    /// The most failure points one seed checks in a normal run (each reopened in four crash
    /// images); every point of maintenance, open and close is always among them, the rest
    /// (plain WAL appends, which CrashRecoveryTests covers at every operation) is sampled.
    static let crashPointBudget = 200

    static func names(in fileSystem: SimulatedFileSystem) -> [String] {
        ((try? fileSystem.listDirectory(CrashHarness.storePath)) ?? []).sorted()
    }

    @Test("crash at every flush, manifest, compaction and deletion operation", arguments: seeds)
    func crashAcrossMaintenance(seed: UInt64) throws {
        let started = Date()
        let workload = Self.workload(seed: seed)
        let budgets = Self.budgets

        // A clean run: it must finish and verify, and it shows where maintenance happens.
        let clean = SimulatedFileSystem()
        let trace = MaintenanceTrace()
        let cleanOutcome = SharedOutcome()
        var finalStats: StoreStats? = nil
        var namesAtEnd: [String] = []
        CrashHarness.run(
            workload, on: clean, failpoints: Failpoints { trace.record($0, on: clean) }, levels: budgets,
            outcome: cleanOutcome
        ) { store in
            finalStats = try? store.stats()
            namesAtEnd = LevelsCrashTests.names(in: clean)
        }
        let totalOperations = clean.operationCount
        try #require(cleanOutcome.withLock { $0.attempted } == workload.states.count - 1, "seed \(seed): the clean run did not finish")
        let stats = try #require(finalStats, "seed \(seed): no stats from the clean run")
        let closedNames = Self.names(in: clean)

        // It did what this test is about.
        let manifestEdits = trace.count(.beforeManifestEdit)
        #expect(
            stats.flushes >= 4 && trace.count(.beforeFlush) == stats.flushes,
            "seed \(seed): expected several flushes, stats say \(stats.flushes), failpoints \(trace.count(.beforeFlush))")
        #expect(stats.compactions >= 3, "seed \(seed): expected automatic compactions besides the two explicit ones, got \(stats.compactions)")
        #expect(manifestEdits >= stats.flushes + stats.compactions, "seed \(seed): \(manifestEdits) manifest edits")
        let segmentNames = namesAtEnd.filter { ManifestFormat.number(fromSegmentName: $0) != nil }
        #expect(segmentNames.count == stats.segmentFiles, "seed \(seed): the directory holds \(segmentNames) but the levels \(stats.levels.map(\.files)) files")
        let manifests = namesAtEnd.filter { ManifestFormat.number(fromManifestName: $0) != nil }
        #expect(manifests.count == 1, "seed \(seed): expected one manifest, found \(manifests)")
        let deleted = trace.namesSeen.subtracting(closedNames)
        #expect(
            deleted.contains { ManifestFormat.number(fromSegmentName: $0) != nil },
            "seed \(seed): no obsolete segment file was deleted (deleted: \(deleted.sorted()))")
        #expect(deleted.contains { $0.hasPrefix("wal-") }, "seed \(seed): no WAL segment was retired (deleted: \(deleted.sorted()))")
        // Closing removes only the WAL segment made ahead of a roll, if any (WALWriter invariant 9).
        let lastWAL = namesAtEnd.filter { $0.hasPrefix("wal-") }.max()
        #expect(
            Set(closedNames).isSubset(of: Set(namesAtEnd)) && Set(namesAtEnd).subtracting(closedNames).allSatisfy { $0 == lastWAL },
            "seed \(seed): closing changed the directory from \(namesAtEnd) to \(closedNames)")

        // A clean reopen installs a new manifest, removes the old one, and keeps everything.
        let reopened = try Store(path: CrashHarness.storePath, options: CrashHarness.options(clean, levels: budgets))
        let reopenedNames = Self.names(in: clean)
        let reopenedState = try reopened.read { tx in Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) }) }
        try reopened.close()
        let newManifests = reopenedNames.filter { ManifestFormat.number(fromManifestName: $0) != nil }
        #expect(newManifests.count == 1 && newManifests != manifests, "seed \(seed): manifests \(manifests) before the reopen, \(newManifests) after")
        #expect(reopenedState == workload.states.last, "seed \(seed): a clean reopen lost data")
        try assertStoreIsClean(path: CrashHarness.storePath, fileSystem: clean, context: "seed \(seed), clean run reopened")

        // Failure points: all of maintenance, open and close, and a seeded sample of the rest
        // (every point in long runs).
        let maintenance = trace.maintenanceOperations(total: totalOperations)
        let rest = (0...totalOperations).filter { !maintenance.contains($0) }
        var random = SeededRandom(seed: seed ^ 0xC8A5_11EE)
        let sampled = rest.shuffled(using: &random).prefix(TestEnvironment.longTests ? rest.count : max(0, Self.crashPointBudget - maintenance.count))
        let points = maintenance.union(sampled).sorted()

        var checked = 0
        var failures: [String] = []
        for point in points {
            let fileSystem = SimulatedFileSystem()
            fileSystem.failAfter(operations: point)
            let outcome = SharedOutcome()
            CrashHarness.run(workload, on: fileSystem, levels: budgets, outcome: outcome)
            let acknowledged = outcome.withLock { $0 }
            for mode in CrashHarness.modes(seed: seed, point: point) {
                checked += 1
                let context = "seed \(seed), crash at operation \(point) of \(totalOperations), \(mode)"
                if let problem = CrashHarness.verify(
                    image: fileSystem.crashImage(mode), workload: workload, outcome: acknowledged,
                    levels: budgets, context: context)
                {
                    failures.append("\(context): \(problem)")
                }
            }
            if failures.count >= 5 { break }
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            "[LevelsCrashTests] seed \(seed): \(checked) crash states checked at \(points.count) of \(totalOperations + 1) failure points (\(maintenance.count) in maintenance, open or close); clean run: \(stats.flushes) flushes, \(stats.compactions) compactions, \(manifestEdits) manifest edits, files per level \(stats.levels.map(\.files)), deleted \(deleted.count) files; \(String(format: "%.1f", seconds)) s"
        )
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n")) (replay with STRATA_SEED=\(seed))")
        #expect(checked == 4 * points.count || !failures.isEmpty)
    }

    /// Power fails in maintenance, and fails again while the store recovers: during the
    /// cleanup of unreferenced files, the new manifest's install, or a compaction due at open.
    /// The first crash points are every fourth operation of maintenance, open and close (every
    /// one in long runs); the second, every operation of the recovery.
    @Test("crash again while recovering from a crash in maintenance", arguments: seeds)
    func crashDuringRecovery(seed: UInt64) throws {
        let started = Date()
        let workload = Self.workload(seed: seed)
        let budgets = Self.budgets
        let clean = SimulatedFileSystem()
        let trace = MaintenanceTrace()
        CrashHarness.run(workload, on: clean, failpoints: Failpoints { trace.record($0, on: clean) }, levels: budgets, outcome: SharedOutcome())
        let maintenance = trace.maintenanceOperations(total: clean.operationCount).sorted()
        let firstPoints = stride(from: Int(seed % 4), to: maintenance.count, by: TestEnvironment.longTests ? 1 : 4).map { maintenance[$0] }

        var checked = 0
        var failures: [String] = []
        for point in firstPoints {
            let fileSystem = SimulatedFileSystem()
            fileSystem.failAfter(operations: point)
            let outcome = SharedOutcome()
            CrashHarness.run(workload, on: fileSystem, levels: budgets, outcome: outcome)
            let acknowledged = outcome.withLock { $0 }
            let mixed = seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(point)
            let crashed = fileSystem.crashImage(.random(seed: mixed))
            try? crashed.createDirectory("/crash")

            // How many operations recovering this image takes.
            let probe = crashed.crashImage(.keepAll)
            let before = probe.operationCount
            let recoveryOperations: Int
            do {
                let store = try Store(path: CrashHarness.storePath, options: CrashHarness.options(probe, levels: budgets))
                recoveryOperations = probe.operationCount - before
                try store.close()
            } catch {
                failures.append("seed \(seed), crash at operation \(point): recovery failed: \(error)")
                continue
            }
            for second in 0..<recoveryOperations {
                let again = crashed.crashImage(.keepAll)
                again.failAfter(operations: again.operationCount + second)
                // Fails with the power cut, or (a cut in a compaction at open) opens a store
                // whose maintenance failed.
                if let store = try? Store(path: CrashHarness.storePath, options: CrashHarness.options(again, levels: budgets)) {
                    try? store.close()
                }
                let mode: SimulatedFileSystem.CrashMode = second % 2 == 0 ? .loseAllUnsynced : .random(seed: mixed &+ UInt64(second))
                let context = "seed \(seed), crash at operation \(point), then at operation \(second) of \(recoveryOperations) of the recovery, \(mode)"
                checked += 1
                if let problem = CrashHarness.verify(
                    image: again.crashImage(mode), workload: workload, outcome: acknowledged,
                    levels: budgets, context: context)
                {
                    failures.append("\(context): \(problem)")
                }
            }
            if failures.count >= 5 { break }
        }
        print(
            "[LevelsCrashTests] seed \(seed): \(checked) crash states checked after a second crash during recovery, from \(firstPoints.count) first crash points; \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n")) (replay with STRATA_SEED=\(seed))")
        #expect(checked > 0)
    }

    /// A store on the simulated file system whose maintenance runs inline, with `faults`
    /// watching its failpoints; only compact() compacts.
    static func faultyStore(_ faults: [CompactionFault]) throws -> (Store, SimulatedFileSystem, LevelBudgets) {
        let fileSystem = SimulatedFileSystem()
        try fileSystem.createDirectory("/crash")
        var budgets = Self.budgets
        budgets.level0CompactionTrigger = 8
        var options = CrashHarness.options(fileSystem, levels: budgets)
        options.failpoints = Failpoints { point in
            for fault in faults { fault.observe(point, fileSystem: fileSystem) }
        }
        return (try Store(path: CrashHarness.storePath, options: options), fileSystem, budgets)
    }

    /// Puts 40 keys (200-byte values of `fill`) in one synced transaction.
    static func putKeys(_ store: Store, fill: UInt8, into model: inout [[UInt8]: [UInt8]]) throws {
        var written: [[UInt8]: [UInt8]] = [:]
        for i in 0..<40 { written[Array("key-\(i)".utf8)] = [UInt8](repeating: fill, count: 200) }
        try store.write(durability: .synced) { tx in
            for (key, value) in written { try tx.put(key, value) }
        }
        model.merge(written) { $1 }
    }

    /// Closes `store` and opens its files again, as a plain reopen and as after a process
    /// crash (the page cache survives): both must open and hold `model`.
    static func expectReopens(
        _ store: Store, _ fileSystem: SimulatedFileSystem, _ budgets: LevelBudgets,
        model: [[UInt8]: [UInt8]], _ label: String
    ) {
        try? store.close()
        for (how, image) in [("reopen", fileSystem), ("process crash", fileSystem.crashImage(.keepAll))] {
            do {
                let reopened = try Store(path: CrashHarness.storePath, options: CrashHarness.options(image, levels: budgets))
                let state = try reopened.read { tx in Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) }) }
                try reopened.close()
                #expect(state == model, "\(label), \(how): the reopened store lost data")
                try assertStoreIsClean(path: CrashHarness.storePath, fileSystem: image, context: "\(label), \(how)")
            } catch {
                Issue.record("\(label), \(how): \(error)")
            }
        }
    }

    /// Engine bug. A compaction's manifest append writes its record, then the fsync fails.
    /// The compaction deletes its output files as if the edit had not been made, but the
    /// record is in the manifest file (in the page cache at least, maybe on the disk). Closed
    /// (or killed) before another edit installs a new manifest, the store no longer opens:
    /// "the manifest lists segment file seg-…, which is missing". Expected: it opens, with
    /// every commit.
    @Test("a compaction whose manifest sync fails leaves a store that opens")
    func failedCompactionEditSync() throws {
        let fault = CompactionFault(at: .beforeManifestEdit, failing: .sync)
        let (store, fileSystem, budgets) = try Self.faultyStore([fault])
        var model: [[UInt8]: [UInt8]] = [:]
        try Self.putKeys(store, fill: 1, into: &model)
        try store.compact()  // one file in level 1
        try Self.putKeys(store, fill: 2, into: &model)
        fault.arm()
        // Flushes the new writes, then merges that file with level 1: the edit's sync fails.
        #expect(throws: StoreError.self, "compact() should report the failed sync") { try store.compact() }
        #expect(fault.fired)
        let state = try store.read { tx in Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) }) }
        #expect(state == model, "the open store lost data")
        Self.expectReopens(store, fileSystem, budgets, model: model, "manifest sync failed")
    }

    /// Engine bug, the same mistake on the install path. After a failed manifest append, the
    /// next edit installs a new manifest; when that edit is a compaction's and the install
    /// fails after its rename (the directory sync fails), the compaction deletes its outputs,
    /// but the new manifest, in place under its final name, lists them: the store no longer
    /// opens. (Its setup goes through the failed append above; with no write in between, the
    /// second compact() flushes nothing, so the compaction's edit is the one that installs.)
    @Test("a compaction whose new manifest's install fails after the rename leaves a store that opens")
    func failedCompactionManifestInstall() throws {
        let failedAppend = CompactionFault(at: .beforeManifestEdit, failing: .sync)
        let failedInstall = CompactionFault(at: .beforeManifestInstall, failing: .syncDirectory)
        let (store, fileSystem, budgets) = try Self.faultyStore([failedAppend, failedInstall])
        var model: [[UInt8]: [UInt8]] = [:]
        try Self.putKeys(store, fill: 1, into: &model)
        try store.compact()
        try Self.putKeys(store, fill: 2, into: &model)
        failedAppend.arm()
        #expect(throws: StoreError.self, "compact() should report the failed sync") { try store.compact() }
        failedInstall.arm()
        #expect(throws: StoreError.self, "compact() should report the failed install") { try store.compact() }
        #expect(failedAppend.fired && failedInstall.fired)
        let names = LevelsCrashTests.names(in: fileSystem)
        let manifests = names.filter { ManifestFormat.number(fromManifestName: $0) != nil }
        #expect(manifests.count == 2, "the new manifest should be in place beside the old one: \(names)")
        Self.expectReopens(store, fileSystem, budgets, model: model, "manifest install failed after its rename")
    }

    /// Maintenance is frozen at each of its named points, as a suspended app is frozen mid-
    /// flush, and the process is "killed" there: the disk's state at that moment must recover
    /// like any crash. Inline, the writer waits for the frozen job. `.beforeManifestInstall`
    /// is reached on an open store only after a manifest append failed, so for it every other
    /// flush's manifest sync is made to fail (the retry installs a new manifest).
    @Test(
        "freeze maintenance at each failpoint, then lose power",
        arguments: [Failpoints.Point.beforeFlush, .beforeCompaction, .beforeManifestEdit, .beforeManifestInstall])
    func freezeMaintenance(point: Failpoints.Point) throws {
        let seed: UInt64 = 31
        let workload = Self.workload(seed: seed)
        let injectsManifestFailures = point == .beforeManifestInstall
        var frozenStates = 0
        var reachedHits: [Int] = []
        for hit in [1, 2, 4, 6] {
            let fileSystem = SimulatedFileSystem()
            let outcome = SharedOutcome()
            let hits = HitCounter()
            let faults = MaintenanceFaults()
            let frozen = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let failpoints = Failpoints { reached in
                if injectsManifestFailures { faults.observe(reached, fileSystem: fileSystem) }
                guard reached == point, hits.increment() == hit else { return }
                frozen.signal()
                release.wait()
            }
            let finished = DispatchSemaphore(value: 0)
            let runner = Thread {
                CrashHarness.run(workload, on: fileSystem, failpoints: failpoints, levels: Self.budgets, outcome: outcome)
                finished.signal()
                frozen.signal()
            }
            runner.start()
            frozen.wait()
            if hits.value >= hit {
                // Frozen at the point: what the disk holds now is all a kill would leave.
                reachedHits.append(hit)
                let acknowledged = outcome.withLock { $0 }
                for mode in CrashHarness.modes(seed: seed, point: hit) {
                    frozenStates += 1
                    let context = "failpoint \(point), hit \(hit), \(mode)"
                    let problem = CrashHarness.verify(
                        image: fileSystem.crashImage(mode), workload: workload, outcome: acknowledged,
                        levels: Self.budgets, context: context)
                    #expect(problem == nil, "\(context): \(problem ?? "")")
                }
                release.signal()
            }
            finished.wait()
            if injectsManifestFailures {
                #expect(faults.injected > 0, "no manifest append was made to fail")
            }
            // The frozen run carries on to the end once released, and what it leaves verifies too.
            #expect(outcome.withLock { $0.attempted } == workload.states.count - 1, "failpoint \(point), hit \(hit): the run did not finish after the release")
            let problem = CrashHarness.verify(
                image: fileSystem.crashImage(.loseAllUnsynced), workload: workload,
                outcome: outcome.withLock { $0 }, levels: Self.budgets,
                context: "failpoint \(point), hit \(hit), after the run")
            #expect(problem == nil, "failpoint \(point), hit \(hit), after the run: \(problem ?? "")")
        }
        print("[LevelsCrashTests] failpoint \(point): frozen at hits \(reachedHits), \(frozenStates) crash states checked")
        #expect(reachedHits.count >= 2, "failpoint \(point) was reached \(reachedHits.count) time(s); expected at least 2 of the hits tried")
    }
}
