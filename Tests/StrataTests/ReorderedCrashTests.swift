import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Testing

/// Crash images the in-order crash suites cannot make: a file system that writes a
/// directory's unsynced entry operations in any order, bit rot in synced bytes, and a process
/// that carries on after a failed fdatasync. Each workload flushes, compacts, rolls its WAL and
/// its manifest, with maintenance inline, so it runs the same way every time.
@Suite("Reordered metadata, bit rot, and a process that carries on after a failed sync")
struct ReorderedCrashTests {
    static let seeds: [UInt64] = {
        if let seed = TestEnvironment.replaySeed { return [seed] }
        return TestEnvironment.longTests ? [41, 42, 43, 44, 45, 46] : [41]
    }()

    static let budgets = LevelBudgets()
    /// Small, so the workload installs several manifests (create, rename, unlink the old one).
    static let manifestRollBytes = 256

    static func workload(seed: UInt64) -> CrashWorkload {
        CrashWorkload(
            seed: seed, transactions: 160, keys: 120, writesPerTransaction: 3...9, smallValueBytes: 100...300,
            largeValueOneIn: 0, compactAfter: [70, 140])
    }

    /// Takes reordered images of `fileSystem` now and verifies each against what was
    /// acknowledged so far; returns how many it checked.
    static func checkReordered(
        _ fileSystem: SimulatedFileSystem, seed: UInt64, workload: CrashWorkload, outcome: CrashOutcome, exhaustiveUpTo: Int,
        samples: Int, keepingUnsyncedData: Bool, context: String, failures: Locked<[String]>
    ) -> Int {
        let images = fileSystem.reorderedCrashImages(
            seed: seed, exhaustiveUpTo: exhaustiveUpTo, samples: samples, keepingUnsyncedData: keepingUnsyncedData)
        for (kept, image) in images {
            let caseName = "\(context), kept entry operations \(kept.sorted()) of \(fileSystem.pendingEntryOperations)"
            if let problem = CrashHarness.verify(image: image, workload: workload, outcome: outcome, levels: budgets, context: caseName) {
                failures.withLock { $0.append("\(caseName): \(problem)") }
            }
        }
        return images.count
    }

    @Test("crash images keeping any subset of each directory's unsynced operations", arguments: seeds)
    func reorderedEntryOperations(seed: UInt64) throws {
        let started = Date()
        let workload = Self.workload(seed: seed)
        let fileSystem = SimulatedFileSystem()
        let outcome = SharedOutcome()
        let failures = Locked<[String]>([])
        let counts = Locked((moments: 0, images: 0, operations: 0))
        let samples = TestEnvironment.longTests ? 48 : 12
        fileSystem.observeEntryOperations { operation in
            let index = counts.withLock { counts -> Int in
                counts.operations += 1
                return counts.operations
            }
            guard !fileSystem.pendingEntryOperations.isEmpty, failures.withLock({ $0.count }) < 5 else { return }
            var checked = 0
            for keepingUnsyncedData in [false, true] {
                checked += Self.checkReordered(
                    fileSystem, seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index), workload: workload, outcome: outcome.withLock { $0 },
                    exhaustiveUpTo: 5, samples: samples, keepingUnsyncedData: keepingUnsyncedData,
                    context: "seed \(seed), after entry operation \(index) (\(operation)), unsynced data \(keepingUnsyncedData ? "kept" : "lost")",
                    failures: failures)
            }
            counts.withLock {
                $0.moments += 1
                $0.images += checked
            }
        }
        CrashHarness.run(workload, on: fileSystem, levels: Self.budgets, manifestRollBytes: Self.manifestRollBytes, outcome: outcome)
        fileSystem.observeEntryOperations(nil)
        let finished = outcome.withLock { $0.attempted } == workload.states.count - 1
        let (moments, images, operations) = counts.withLock { $0 }
        print(
            "[ReorderedCrashTests] seed \(seed): \(images) reordered crash images checked at \(moments) of \(operations) entry operations; \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
        #expect(finished, "seed \(seed): the workload did not finish")
        #expect(moments >= 10, "seed \(seed): only \(moments) moments with unsynced entry operations")
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "\(found.joined(separator: "\n")) (replay with STRATA_SEED=\(seed))")
    }

    /// A store closed cleanly has every byte synced and proven so: damage to any of them must
    /// make the open fail with `.corruption`, or a read fail with it, or change nothing.
    @Test("bit rot in synced bytes is corruption or harmless, never wrong data", arguments: seeds)
    func bitRot(seed: UInt64) throws {
        let started = Date()
        let workload = Self.workload(seed: seed)
        let clean = SimulatedFileSystem()
        let outcome = SharedOutcome()
        CrashHarness.run(workload, on: clean, levels: Self.budgets, manifestRollBytes: Self.manifestRollBytes, outcome: outcome)
        try #require(outcome.withLock { $0.attempted } == workload.states.count - 1, "seed \(seed): the workload did not finish")
        let image = clean.crashImage(.loseAllUnsynced)
        let expected = try #require(workload.states.last)
        let version = UInt64(workload.states.count - 1)
        let names = ((try? image.listDirectory(CrashHarness.storePath)) ?? []).sorted()
        let walSegments = names.filter { $0.hasPrefix("wal-") }
        try #require(!walSegments.isEmpty)

        var random = SeededRandom(seed: seed ^ 0xB17_B0B)
        var failures: [String] = []
        var outcomes = (harmless: 0, corruptAtOpen: 0, corruptAtRead: 0)
        let cases = TestEnvironment.longTests ? 4_000 : 400
        for index in 0..<cases {
            let damaged = image.crashImage(.keepAll)
            // Half the cases hit the WAL segment recovery appends to, where damage and a torn
            // write are told apart; the rest any file.
            let name = index % 2 == 0 ? walSegments.last! : names.randomElement(using: &random)!
            let path = CrashHarness.storePath + "/" + name
            let count = Int.random(in: 1...3, using: &random)
            guard let offsets = try? damaged.rot(path, seed: random.next(), bytes: count) else { continue }
            let context = "seed \(seed), case \(index): bits flipped in \(name) at \(offsets)"
            let store: Store
            do {
                store = try Store(path: CrashHarness.storePath, options: CrashHarness.options(damaged, levels: Self.budgets))
            } catch let error as StoreError where error.code == .corruption {
                outcomes.corruptAtOpen += 1
                continue
            } catch let error as StoreError where error.code == .notAStore && name == "STRATA" {
                // A damaged identity file reads as a file some other program wrote: the open
                // refuses the directory, which loses nothing.
                outcomes.corruptAtOpen += 1
                continue
            } catch {
                failures.append("\(context): the open failed with \(error), not .corruption")
                continue
            }
            do {
                let state = try store.read { tx in Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) }) }
                var wrong: String? = nil
                if store.version != version {
                    wrong = "opened at version \(store.version), not \(version)"
                } else if state != expected {
                    wrong = "a scan returned other data than was committed"
                } else {
                    for (key, value) in expected where try store.read({ try $0.get(key) }) != value {
                        wrong = "get(\(String(decoding: key, as: UTF8.self))) returned other data than was committed"
                        break
                    }
                }
                if let wrong {
                    failures.append("\(context): \(wrong)")
                } else {
                    outcomes.harmless += 1
                }
            } catch let error as StoreError where error.code == .corruption {
                outcomes.corruptAtRead += 1
            } catch {
                failures.append("\(context): a read failed with \(error), not .corruption")
            }
            try? store.close()
            if failures.count >= 5 { break }
        }
        print(
            "[ReorderedCrashTests] seed \(seed): \(cases) bit-rot cases: \(outcomes.harmless) harmless, \(outcomes.corruptAtOpen) corruption at open, \(outcomes.corruptAtRead) at a read; \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
        #expect(outcomes.corruptAtOpen > 0, "seed \(seed): no damage was ever found at open")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n")) (replay with STRATA_SEED=\(seed))")
    }

    /// An fdatasync fails and the process goes on: a failed WAL sync must stop every later
    /// write, and crash images taken at each later entry operation and at the end, reordered
    /// or not, must still hold every acknowledged commit.
    @Test("a process that carries on after a failed sync keeps every acknowledged commit", arguments: seeds)
    func carryOnAfterFailedSync(seed: UInt64) throws {
        let started = Date()
        let workload = Self.workload(seed: seed)
        let dry = SimulatedFileSystem()
        dry.recordOperations(true)
        CrashHarness.run(workload, on: dry, levels: Self.budgets, manifestRollBytes: Self.manifestRollBytes, outcome: SharedOutcome())
        let syncs = dry.recordedOperations.filter { $0.kind == .sync }
        // Every manifest sync (few, and the ones a crash image cannot reach otherwise) and a
        // seeded sample of the WAL's.
        var random = SeededRandom(seed: seed ^ 0xCA77_1E5)
        let manifestSyncs = syncs.indices.filter { syncs[$0].path.contains("/manifest-") }
        let others = syncs.indices.filter { !syncs[$0].path.contains("/manifest-") }.shuffled(using: &random)
        let targets = (manifestSyncs + others.prefix(TestEnvironment.longTests ? others.count : 16)).sorted()

        let failures = Locked<[String]>([])
        let images = Locked(0)
        for target in targets {
            let fault: SimulatedFileSystem.Fault = target % 2 == 0 ? .syncError : .syncErrorLosingPages
            let fileSystem = SimulatedFileSystem()
            fileSystem.injectFault(fault, atOperation: target, countingOnly: [.sync])
            fileSystem.recordOperations(true)
            let outcome = SharedOutcome()
            let after = Locked(0)
            let context = "seed \(seed), \(fault) at sync \(target) (\(syncs[target].path))"
            fileSystem.observeEntryOperations { operation in
                guard case .fired? = fileSystem.faultOutcome else { return }
                let index = after.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard index <= 6 else { return }
                let checked = Self.checkReordered(
                    fileSystem, seed: seed &+ UInt64(target * 64 + index), workload: workload, outcome: outcome.withLock { $0 },
                    exhaustiveUpTo: 3, samples: 4, keepingUnsyncedData: false,
                    context: "\(context), then entry operation \(index) (\(operation))", failures: failures)
                images.withLock { $0 += checked }
            }
            CrashHarness.run(workload, on: fileSystem, levels: Self.budgets, manifestRollBytes: Self.manifestRollBytes, outcome: outcome)
            fileSystem.observeEntryOperations(nil)
            guard case .fired(let record)? = fileSystem.faultOutcome else {
                failures.withLock { $0.append("\(context): the fault did not fire (\(String(describing: fileSystem.faultOutcome)))") }
                continue
            }
            let acknowledged = outcome.withLock { $0 }
            // After a failed WAL sync the writer never writes the log again (Writer invariant 4),
            // unless the sync was of a segment being made ahead of the roll, which holds no
            // record: that is no error, and the roll makes the segment again.
            if record.path.contains("/wal-"), !Self.isASegmentsCreation(record, fileSystem.recordedOperations),
                let late = fileSystem.recordedOperations.first(where: { $0.index > record.index && $0.kind == .write && $0.path.contains("/wal-") })
            {
                failures.withLock { $0.append("\(context): the WAL was written after its failed sync (\(late))") }
            }
            // At the end, the store closed: power lost, in order or reordered.
            var checked = Self.checkReordered(
                fileSystem, seed: seed &+ UInt64(target), workload: workload, outcome: acknowledged, exhaustiveUpTo: 3, samples: 4,
                keepingUnsyncedData: false, context: "\(context), at the end", failures: failures)
            for mode in [SimulatedFileSystem.CrashMode.loseAllUnsynced, .keepAll] {
                checked += 1
                if let problem = CrashHarness.verify(
                    image: fileSystem.crashImage(mode), workload: workload, outcome: acknowledged, levels: Self.budgets,
                    context: "\(context), at the end, \(mode)")
                {
                    failures.withLock { $0.append("\(context), at the end, \(mode): \(problem)") }
                }
            }
            images.withLock { $0 += checked }
            if failures.withLock({ $0.count }) >= 5 { break }
        }
        print(
            "[ReorderedCrashTests] seed \(seed): \(targets.count) failed syncs of \(syncs.count) (\(manifestSyncs.count) of the manifest), \(images.withLock { $0 }) crash images checked after them; \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "\(found.joined(separator: "\n")) (replay with STRATA_SEED=\(seed))")
    }

    /// Whether `sync` belongs to a WAL segment's creation (`WALWriter.createSegment`): since
    /// the open that created its file, only its header was written and its size set.
    static func isASegmentsCreation(
        _ sync: SimulatedFileSystem.OperationRecord, _ records: [SimulatedFileSystem.OperationRecord]
    ) -> Bool {
        let earlier = records.filter { $0.index < sync.index && $0.path == sync.path }
        guard let created = earlier.lastIndex(where: { $0.kind == .open && $0.creates }) else { return false }
        let since = earlier[(created + 1)...]
        return since.filter { $0.kind == .write }.count <= 1 && since.allSatisfy { [.write, .truncate, .preallocate].contains($0.kind) }
    }
}
