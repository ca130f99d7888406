// Model-based test across flushes and compactions: the random transactions of
// ModelBasedTests (ModelRun, ModelGenerator, ModelExecutor), with memtable, segment and level
// budgets small enough that the store flushes and compacts every few transactions. Besides
// single commits it commits batches (queued together, so they may share a group), calls
// compact() and reopens at random points with randomly varied budgets, and holds a snapshot
// that must keep reading what it read when taken. After every commit batch and every reopen
// it checks gets, forward, reverse and prefix scans, and scans inside a write transaction
// against the model. Replay a failure with STRATA_SEED=<seed>; run ten times longer with
// STRATA_LONG_TESTS=1.
import Dispatch
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

/// The model and version the next transaction of a batch starts from. Each transaction body
/// reads it and, unless it aborts, advances it; bodies run on the writer queue one at a time,
/// in commit order, so each sees its predecessors' writes.
final class ModelHead: Sendable {
    private let state: Locked<(model: ReferenceModel, version: UInt64)>

    init(model: ReferenceModel, version: UInt64) {
        state = Locked((model, version))
    }

    var current: (model: ReferenceModel, version: UInt64) { state.withLock { $0 } }

    func advance(to model: ReferenceModel, version: UInt64) {
        state.withLock { $0 = (model, version) }
    }
}

/// Outcomes of a batch's transactions by position, filled in by their completions.
final class BatchOutcomes: Sendable {
    private let results = Locked<[Int: Result<ModelTxResult, any Error>]>([:])

    func set(_ index: Int, _ result: Result<ModelTxResult, any Error>) {
        results.withLock { $0[index] = result }
    }

    func get(_ index: Int) -> Result<ModelTxResult, any Error>? { results.withLock { $0[index] } }
}

/// The error the write-transaction check throws so that its probe writes never commit.
struct ProbeAbort: Error, Equatable {}

/// A snapshot held across later commits, flushes and compactions, with the model it must go
/// on seeing.
struct HeldSnapshot {
    let snapshot: Snapshot
    let model: ReferenceModel
    let takenAt: String
    /// `stats()` flush and compaction counts (they count since the open) when it was taken.
    let flushesAtStart: Int
    let compactionsAtStart: Int
    var sawFlush = false
    var sawCompaction = false
}

/// What a run did, summed over its opens.
struct LevelsModelTotals: CustomStringConvertible {
    var flushes = 0
    var compactions = 0
    var explicitCompactions = 0
    var batches = 0
    var snapshots = 0
    var snapshotsAcrossFlush = 0
    var snapshotsAcrossCompaction = 0
    var deepestLevel = 0
    var mostLevel0Files = 0
    var compressedOpens = 0
    var uncompressedOpens = 0
    var writeStalls = 0

    var description: String {
        "\(flushes) flushes, \(compactions) compactions (\(explicitCompactions) asked for), \(batches) batches, deepest level \(deepestLevel), at most \(mostLevel0Files) level-0 files, \(snapshots) snapshots (\(snapshotsAcrossFlush) held across a flush, \(snapshotsAcrossCompaction) across a compaction), opens compressed/uncompressed \(compressedOpens)/\(uncompressedOpens), \(writeStalls) write stalls"
    }
}

/// A `ModelRun` with flushes and compactions: the store, model and generator are the base
/// run's; this adds batches, compact() calls, option changes at reopen, a held snapshot and
/// the checks that go with them.
struct LevelsModelRun {
    var base: ModelRun
    /// Flushes and compactions run on the writer (`runsBackgroundWorkInline`): then no flush
    /// is ever left pending and level 0 never reaches its trigger after a commit.
    let inline: Bool
    var held: HeldSnapshot? = nil
    var totals = LevelsModelTotals()

    var seed: UInt64 { base.seed }

    /// Budgets small enough that the generator's few hundred transactions flush and compact
    /// many times. All but the memtable and segment sizes vary per open; a hard limit of
    /// 2 × 64 KiB (the least allowed) makes writes wait for flushes now and then, and the
    /// generator's 40-130 KiB values take a memtable past it in one round.
    static func options(
        fileSystem: any FileSystem, inline: Bool, trigger: Int, cacheBytes: Int, compressed: Bool,
        hardLimitBytes: Int? = nil
    ) -> StoreOptions {
        var options = ModelBasedTests.smallSegmentOptions()
        options.fileSystem = fileSystem
        options.memtableBytes = 64 << 10
        options.memtableHardLimitBytes = hardLimitBytes
        options.segmentFileBytes = 64 << 10
        // Small enough that level 1 overflows into level 2 and beyond: a compaction that
        // dropped a tombstone while a deeper level still held the key would bring the key
        // back, and only a run with a level 2 can show it. (With the 1 MiB level 1 this run
        // used before, that planted bug passed; now both runs catch it.)
        options.level1Bytes = 64 << 10
        options.level0CompactionTrigger = trigger
        options.blockCacheBytes = cacheBytes
        options.compressionFromLevel = compressed ? 1 : nil
        options.runsBackgroundWorkInline = inline
        return options
    }

    init(seed: UInt64, path: String, fileSystem: any FileSystem, inline: Bool, compressedAtFirst: Bool) throws {
        let options = LevelsModelRun.options(
            fileSystem: fileSystem, inline: inline, trigger: 2, cacheBytes: 32 << 10,
            compressed: compressedAtFirst)
        base = try ModelRun(seed: seed, path: path, options: options)
        base.checksWALAcrossReopen = false
        self.inline = inline
        countOpen()
    }

    private mutating func countOpen() {
        if base.options.compressionFromLevel != nil { totals.compressedOpens += 1 } else { totals.uncompressedOpens += 1 }
    }

    mutating func run(operations: Int) async throws {
        try checkAll("seed \(seed) new store")
        var index = 0
        while base.counts.operations < operations {
            let context: String
            if base.generator.chance(150) {
                let plans = (0..<base.generator.int(2...5)).map { base.generator.plan(index: index + $0) }
                context = "seed \(seed) batch of tx #\(index)...#\(index + plans.count - 1)"
                try commitBatch(plans, context)
                index += plans.count
            } else {
                let plan = base.generator.plan(index: index)
                context = "seed \(seed) tx #\(index) (\(plan.mode), \(plan.durability))"
                try await base.commit(plan, context)
                index += 1
            }
            try checkAll("\(context) after commit")

            if base.generator.chance(35) {
                try reopen("\(context) then reopen")
            } else if base.generator.chance(25) {
                try await compact("\(context) then compact()")
            } else if base.generator.chance(20) {
                try await base.store.sync()
            }
            if held == nil, base.generator.chance(40) {
                try takeSnapshot("\(context) then snapshot")
            } else if let held, held.sawFlush && held.sawCompaction, base.generator.chance(12) {
                // Held at least across a flush and a compaction (or else until a reopen).
                try releaseSnapshot("\(context) then snapshot.close()")
            }
        }
        // The last compact() flushes and compacts under a snapshot in any case.
        if held == nil { try takeSnapshot("seed \(seed) before the final compact()") }
        try await compact("seed \(seed) final compact()")
        try reopen("seed \(seed) final reopen")
        let stats = try base.store.stats()
        #expect(stats.version == base.expectedVersion, "seed \(seed): stats().version \(stats.version), expected \(base.expectedVersion)")
        totals.deepestLevel = max(totals.deepestLevel, stats.levels.lastIndex { $0.files > 0 } ?? 0)

        #expect(totals.flushes >= 10, "seed \(seed): expected many flushes with 64 KiB memtables: \(totals)")
        #expect(totals.compactions > totals.explicitCompactions, "seed \(seed): expected compactions besides the ones asked for: \(totals)")
        #expect(totals.deepestLevel >= 2 && totals.mostLevel0Files >= 1, "seed \(seed): expected files in level 0 and in level 2 or deeper: \(totals)")
        #expect(
            totals.snapshotsAcrossFlush >= 1 && totals.snapshotsAcrossCompaction >= 1,
            "seed \(seed): expected a snapshot held across a flush and across a compaction: \(totals)")
        #expect(totals.compressedOpens > 0 && totals.uncompressedOpens > 0, "seed \(seed): expected opens with and without compression: \(totals)")
        #expect(
            base.counts.aborted > 0 && base.counts.empty > 0 && base.counts.reopens > 1,
            "seed \(seed): the run should abort, commit empty transactions and reopen: \(base.counts)")
        print(
            "[levels model] seed \(seed)\(inline ? " (inline maintenance)" : ""): \(base.counts), \(totals); \(base.model.entries.count) keys at the end, version \(base.expectedVersion), files per level \(stats.levels.map(\.files))"
        )
    }

    // MARK: Steps

    /// Queues every plan at once with `asyncWrite`, so consecutive ones may commit in one
    /// group, waits for all, and checks each outcome.
    mutating func commitBatch(_ plans: [ModelPlan], _ context: String) throws {
        let head = ModelHead(model: base.model, version: base.expectedVersion)
        let outcomes = LevelsModelRun.submitAll(plans, to: base.store, head: head, log: base.log, context: context)
        base.counts.transactions += plans.count
        base.counts.operations += plans.reduce(0) { $0 + $1.ops.count }
        totals.batches += 1
        let clean = base.log.report()
        try #require(clean, "\(context): stopping after the mismatches inside the transactions above")
        for (offset, plan) in plans.enumerated() {
            switch (outcomes[offset], plan.abortToken) {
            case (.success(let result), nil):
                if !result.wrote { base.counts.empty += 1 }
            case (.success, let token?):
                Issue.record("\(context) tx \(offset): the closure threw ModelAbort(\(token)), but the write returned success")
                throw ModelAbort(token: token)
            case (.failure(let error), let token?):
                let same = (error as? ModelAbort) == ModelAbort(token: token)
                try #require(same, "\(context) tx \(offset): the closure threw ModelAbort(\(token)); the caller got \(error)")
                base.counts.aborted += 1
            case (.failure(let error), nil):
                Issue.record("\(context) tx \(offset): the write failed: \(error); ops: \(plan.ops)")
                throw error
            }
        }
        let final = head.current
        base.model = final.model
        base.expectedVersion = final.version
        try #require(
            base.store.version == base.expectedVersion,
            "\(context): store.version is \(base.store.version) after the batch, expected \(base.expectedVersion)")
    }

    static func submitAll(
        _ plans: [ModelPlan], to store: Store, head: ModelHead, log: TestEnvironment.FailureLog,
        context: String
    ) -> [Result<ModelTxResult, any Error>] {
        let outcomes = BatchOutcomes()
        let done = DispatchSemaphore(value: 0)
        for (offset, plan) in plans.enumerated() {
            let step = "\(context) tx \(offset) (\(plan.durability))"
            store.asyncWrite(
                durability: plan.durability,
                { tx in
                    let start = head.current
                    if tx.version != start.version {
                        log.record("\(step): the transaction reads at version \(tx.version), expected \(start.version) (its predecessors in the batch)")
                    }
                    let result = try ModelExecutor.run(plan, base: start.model, tx: tx, log: log, context: step)
                    head.advance(to: result.model, version: start.version + (result.wrote ? 1 : 0))
                    return result
                },
                completion: { outcome in
                    outcomes.set(offset, outcome)
                    done.signal()
                })
        }
        for _ in plans { done.wait() }
        return plans.indices.map { outcomes.get($0) ?? .failure(ModelAbort(token: -1)) }
    }

    mutating func compact(_ context: String) async throws {
        totals.explicitCompactions += 1
        if base.generator.chance(500) {
            try await base.store.compact()
        } else {
            try LevelsModelRun.compactBlocking(base.store)
        }
        let stats = try base.store.stats()
        #expect(
            stats.sealedMemtables == 0 && stats.levels[0].files == 0,
            "\(context): compact() returned with \(stats.sealedMemtables) sealed memtables and \(stats.levels[0].files) level-0 files")
        if inline {
            // In the background a compaction queued before compact() may still run after it,
            // and split an oversized level.
            #expect(stats.levels.filter { $0.files > 0 }.count <= 1, "\(context): compact() left files in several levels: \(stats.levels.map(\.files))")
        }
        try checkAll("\(context) after compact()")
    }

    /// The blocking `compact()` (a synchronous context picks it).
    static func compactBlocking(_ store: Store) throws {
        try store.compact()
    }

    /// Closes and reopens with newly drawn budgets; a held snapshot must then refuse reads.
    mutating func reopen(_ context: String) throws {
        let stats = try base.store.stats()
        totals.flushes += stats.flushes
        totals.compactions += stats.compactions
        totals.writeStalls += stats.writeStalls
        let fileSystem = base.options.fileSystem
        let trigger = base.generator.chance(500) ? 2 : 4
        let cacheBytes = [0, 16 << 10, 64 << 10, 256 << 10][base.generator.int(0...3)]
        // Compression alternates, so every run writes both kinds of level-1 files and reads
        // each kind under the other setting.
        let compressed = base.options.compressionFromLevel == nil
        let hardLimit: Int? = base.generator.chance(500) ? 128 << 10 : nil
        base.options = LevelsModelRun.options(
            fileSystem: fileSystem, inline: inline, trigger: trigger, cacheBytes: cacheBytes,
            compressed: compressed, hardLimitBytes: hardLimit)
        let context =
            "\(context) (trigger \(trigger), cache \(cacheBytes >> 10) KiB, \(compressed ? "compressed" : "uncompressed"), hard limit \((hardLimit ?? 256 << 10) >> 10) KiB)"
        let held = self.held
        try base.reopen(context) {
            // The snapshot outlives its store: it must refuse reads, and closing it lets go of
            // the files it pinned (compacted away meanwhile) before they are checked.
            guard let held else { return }
            let refused = #expect(throws: StoreError.self, "\(context): a snapshot of a closed store must refuse reads") {
                try held.snapshot.read { tx in try tx.get([0x41]) }
            }
            #expect(refused?.code == .closed, "\(context): reading a snapshot of a closed store threw \(String(describing: refused))")
            held.snapshot.close()
        }
        countOpen()
        if let held {
            tally(held)
            self.held = nil
        }
        try checkAll("\(context) after reopen")
    }

    mutating func takeSnapshot(_ context: String) throws {
        let stats = try base.store.stats()
        let snapshot = base.store.snapshot()
        try #require(snapshot.version == base.expectedVersion, "\(context): the snapshot is at version \(snapshot.version), expected \(base.expectedVersion)")
        held = HeldSnapshot(
            snapshot: snapshot, model: base.model, takenAt: context,
            flushesAtStart: stats.flushes, compactionsAtStart: stats.compactions)
        totals.snapshots += 1
        try checkHeld("\(context) (just taken)")
        let pinned = try base.store.stats()
        #expect(
            pinned.liveSnapshots == 1 && pinned.oldestSnapshotVersion == snapshot.version,
            "\(context): stats() shows \(pinned.liveSnapshots) live snapshots, oldest \(String(describing: pinned.oldestSnapshotVersion)); expected 1 at \(snapshot.version)"
        )
    }

    mutating func releaseSnapshot(_ context: String) throws {
        guard let held else { return }
        try checkHeld("\(context) (last read)")
        tally(held)
        held.snapshot.close()
        self.held = nil
        let refused = #expect(throws: StoreError.self, "\(context): a closed snapshot must refuse reads") {
            try held.snapshot.read { tx in try tx.get([0x41]) }
        }
        #expect(refused?.code == .closed, "\(context): reading a closed snapshot threw \(String(describing: refused))")
        let stats = try base.store.stats()
        #expect(stats.liveSnapshots == 0 && stats.oldestSnapshotVersion == nil, "\(context): stats() still shows \(stats.liveSnapshots) live snapshots")
    }

    private mutating func tally(_ held: HeldSnapshot) {
        if held.sawFlush { totals.snapshotsAcrossFlush += 1 }
        if held.sawCompaction { totals.snapshotsAcrossCompaction += 1 }
    }

    // MARK: Checks

    /// Every check, after a commit batch, a compact() or a reopen.
    mutating func checkAll(_ context: String) throws {
        try base.checkState(of: base.store, context)
        try checkInsideWrite(context)
        try checkHeld(context)
        try observe(context)
    }

    /// Scans inside a write transaction, over the files of every level, before and after the
    /// transaction's own writes (a delete of a stored key and a put); the transaction then
    /// aborts, so the version must not move.
    mutating func checkInsideWrite(_ context: String) throws {
        let model = base.model
        let version = base.expectedVersion
        let expected = model.range(from: [], to: nil)
        let doomed = expected.isEmpty ? nil : expected[base.generator.int(0...(expected.count - 1))].key
        let added = (key: base.generator.key(), value: base.generator.random.bytes(count: base.generator.int(0...64)))
        var changed = model
        if let doomed { changed.entries[doomed] = nil }
        changed.entries[added.key] = added.value
        let bounds = (from: base.generator.bound(), to: base.generator.chance(200) ? nil : base.generator.bound())
        let prefix = base.generator.shortKey(maxLength: 2)
        let log = base.log
        let outcome = Result {
            try base.store.write(durability: .buffered) { tx in
                if tx.version != version { log.record("\(context): a write transaction reads at \(tx.version), expected \(version)") }
                let forward = Array(try tx.scan(from: []))
                if forward != expected {
                    log.record("\(context): full scan in a write transaction: \(ModelDiff.describe(expected: expected, actual: forward))")
                }
                let reversed = Array(try tx.scan(from: [], to: nil, reverse: true))
                let reversedExpected = Array(expected.reversed())
                if reversed != reversedExpected {
                    log.record("\(context): full reverse scan in a write transaction: \(ModelDiff.describe(expected: reversedExpected, actual: reversed))")
                }
                if let doomed { try tx.delete(doomed) }
                try tx.put(added.key, added.value)
                let ranged = Array(try tx.scan(from: bounds.from, to: bounds.to, reverse: true))
                let rangedExpected = changed.range(from: bounds.from, to: bounds.to, reverse: true)
                if ranged != rangedExpected {
                    log.record(
                        "\(context): reverse range scan in a write transaction after its own writes: \(ModelDiff.describe(expected: rangedExpected, actual: ranged))"
                    )
                }
                let prefixed = Array(try tx.scan(prefix: prefix))
                let prefixedExpected = changed.withPrefix(prefix)
                if prefixed != prefixedExpected {
                    log.record(
                        "\(context): prefix scan in a write transaction after its own writes: \(ModelDiff.describe(expected: prefixedExpected, actual: prefixed))"
                    )
                }
                let all = Array(try tx.scan(from: []))
                let allExpected = changed.range(from: [], to: nil)
                if all != allExpected {
                    log.record("\(context): full scan in a write transaction after its own writes: \(ModelDiff.describe(expected: allExpected, actual: all))")
                }
                throw ProbeAbort()
            }
        }
        let clean = log.report()
        try #require(clean, "\(context): stopping after the mismatches in the write transaction above")
        if case .failure(let error) = outcome, error as? ProbeAbort == ProbeAbort() {
        } else {
            Issue.record("\(context): the probing write transaction should have failed with its own error, got \(outcome)")
        }
        try #require(base.store.version == version, "\(context): an aborted transaction moved the version to \(base.store.version)")
    }

    /// The held snapshot reads exactly what it read when taken: full scans both ways, a
    /// prefix scan, and gets of keys it holds and keys written since.
    mutating func checkHeld(_ context: String) throws {
        guard let held else { return }
        let expected = held.model.range(from: [], to: nil)
        var probes = (0..<3).map { _ in base.generator.key() }
        for _ in 0..<3 where !expected.isEmpty { probes.append(expected[base.generator.int(0...(expected.count - 1))].key) }
        for (key, _) in base.model.entries.prefix(3) { probes.append(key) }
        let prefix = base.generator.shortKey(maxLength: 2)
        let context = "\(context): the snapshot taken at \"\(held.takenAt)\" (version \(held.snapshot.version))"
        try held.snapshot.read { tx in
            try #require(tx.version == held.snapshot.version, "\(context) reads at version \(tx.version)")
            let forward = Array(try tx.scan(from: []))
            let forwardSame = forward == expected
            try #require(forwardSame, "\(context), full scan: \(ModelDiff.describe(expected: expected, actual: forward))")
            let backward = Array(try tx.scan(from: [], to: nil, reverse: true))
            let backwardExpected = Array(expected.reversed())
            let backwardSame = backward == backwardExpected
            try #require(backwardSame, "\(context), full reverse scan: \(ModelDiff.describe(expected: backwardExpected, actual: backward))")
            let prefixed = Array(try tx.scan(prefix: prefix, reverse: true))
            let prefixedExpected = held.model.withPrefix(prefix, reverse: true)
            let prefixedSame = prefixed == prefixedExpected
            try #require(
                prefixedSame,
                "\(context), scan(prefix: \(TestEnvironment.hex(prefix)), reverse: true): \(ModelDiff.describe(expected: prefixedExpected, actual: prefixed))")
            for key in probes {
                let got = try tx.get(key)
                let same = got == held.model.get(key)
                try #require(
                    same, "\(context), get(\(TestEnvironment.hex(key))) = \(TestEnvironment.hex(got)), expected \(TestEnvironment.hex(held.model.get(key)))")
            }
        }
    }

    /// Reads the figures: levels reached, flushes and compactions under the held snapshot,
    /// and with inline maintenance, that nothing is left pending.
    mutating func observe(_ context: String) throws {
        let stats = try base.store.stats()
        #expect(stats.version == base.expectedVersion, "\(context): stats().version \(stats.version), expected \(base.expectedVersion)")
        totals.deepestLevel = max(totals.deepestLevel, stats.levels.lastIndex { $0.files > 0 } ?? 0)
        totals.mostLevel0Files = max(totals.mostLevel0Files, stats.levels[0].files)
        if inline {
            // The flush runs inside the seal and compactions right after it, until none is due.
            #expect(stats.sealedMemtables == 0, "\(context): \(stats.sealedMemtables) memtables wait for a flush with inline maintenance")
            #expect(
                stats.levels[0].files < base.options.level0CompactionTrigger,
                "\(context): level 0 holds \(stats.levels[0].files) files, at or past its trigger \(base.options.level0CompactionTrigger), with inline maintenance"
            )
        }
        if held != nil {
            if stats.flushes > held!.flushesAtStart { held!.sawFlush = true }
            if stats.compactions > held!.compactionsAtStart { held!.sawCompaction = true }
            #expect(
                stats.oldestSnapshotVersion == held!.snapshot.version,
                "\(context): stats() says the oldest snapshot is at \(String(describing: stats.oldestSnapshotVersion)), expected \(held!.snapshot.version)")
        }
    }
}

@Suite struct LevelsModelTests {
    /// Operations per run; STRATA_LONG_TESTS=1 multiplies by ten.
    static let operations = TestEnvironment.scaled(2500)

    /// Background maintenance on the real file system: flushes and compactions race the
    /// writer, readers and the held snapshot.
    @Test func levelsModelOnPOSIXFileSystem() async throws {
        let seed = TestEnvironment.seed(0x5EED_1E01, test: "levelsModelOnPOSIXFileSystem")
        try await TestEnvironment.withTemporaryDirectory("levels-model") { directory in
            var run = try LevelsModelRun(
                seed: seed, path: directory + "/store", fileSystem: POSIXFileSystem(), inline: false,
                compressedAtFirst: true)
            try await run.run(operations: LevelsModelTests.operations)
            try run.base.store.close()
            try assertStoreIsClean(path: run.base.path, fileSystem: run.base.options.fileSystem, context: "seed \(seed) after the last close")
        }
    }

    /// Inline maintenance on the simulated file system: the same run every time for a seed.
    @Test func levelsModelOnSimulatedFileSystem() async throws {
        let seed = TestEnvironment.seed(0x5EED_1E02, test: "levelsModelOnSimulatedFileSystem")
        let fileSystem = SimulatedFileSystem()
        let path = "/levels-model-store"
        var run = try LevelsModelRun(seed: seed, path: path, fileSystem: fileSystem, inline: true, compressedAtFirst: false)
        try await run.run(operations: LevelsModelTests.operations)
        try run.base.store.close()

        // Closed cleanly means durable: a power cut now loses nothing, segment files included.
        var imageOptions = run.base.options
        imageOptions.fileSystem = fileSystem.crashImage(.loseAllUnsynced)
        let image = try Store(path: path, options: imageOptions)
        #expect(
            image.recovery.truncatedTail == nil && image.version == run.base.expectedVersion,
            "seed \(seed): after a clean close, a power cut left version \(image.version) (expected \(run.base.expectedVersion)), tail \(String(describing: image.recovery.truncatedTail))"
        )
        try run.base.checkState(of: image, "seed \(seed) crash image after clean close")
        try image.close()
        try assertStoreIsClean(path: path, fileSystem: imageOptions.fileSystem, context: "seed \(seed) crash image after clean close")
    }
}
