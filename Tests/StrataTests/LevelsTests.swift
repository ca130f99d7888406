// Flush, compaction and reads across levels, with budgets small enough that a few thousand
// writes make many segment files: answers must match a dictionary model throughout, across
// reopens, and for a snapshot held while the files under it are replaced.
import Foundation
import StrataTestSupport
import StrataVerifier
import Testing

@testable import Strata

@Suite struct LevelsTests {
    static func smallOptions() -> StoreOptions {
        var options = StoreOptions()
        options.durability = .buffered
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.level1Bytes = 256 << 10
        options.blockCacheBytes = 256 << 10
        return options
    }

    static func key(_ i: Int) -> [UInt8] { Array(String(format: "key%06d", i).utf8) }

    static func check(_ store: Store, against model: [[UInt8]: [UInt8]], _ context: String) throws {
        let sortedKeys = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
        try store.read { tx in
            for (k, v) in model { #expect(try tx.get(k) == v, "\(context): get \(String(decoding: k, as: UTF8.self))") }
            let forward = try tx.scan(from: [0]).map(\.key)
            #expect(forward == sortedKeys, "\(context): forward scan (\(forward.count) vs \(sortedKeys.count))")
            let backward = try tx.scan(from: [0], to: nil, reverse: true).map(\.key)
            #expect(backward == sortedKeys.reversed(), "\(context): reverse scan (\(backward.count))")
            let lower = LevelsTests.key(1000)
            let upper = LevelsTests.key(2000)
            let ranged = try tx.scan(from: lower, to: upper, reverse: true).map(\.key)
            let expected = sortedKeys.filter { !$0.lexicographicallyPrecedes(lower) && $0.lexicographicallyPrecedes(upper) }
            #expect(ranged == expected.reversed(), "\(context): reverse range scan")
        }
    }

    @Test func flushesAndCompactionsKeepEveryAnswer() async throws {
        let seed = TestEnvironment.seed(0x1E7E15, test: "LevelsTests.flushesAndCompactionsKeepEveryAnswer")
        var random = SeededRandom(seed: seed)
        try await TestEnvironment.withTemporaryDirectory("levels") { path in
            var model: [[UInt8]: [UInt8]] = [:]
            var store = try Store(path: path, options: LevelsTests.smallOptions())
            var pinned: (snapshot: Snapshot, model: [[UInt8]: [UInt8]])? = nil
            for round in 0..<TestEnvironment.scaled(40) {
                try store.write { tx in
                    for _ in 0..<100 {
                        let i = Int(random.next() % 3000)
                        if random.next() % 5 == 0 {
                            try tx.delete(LevelsTests.key(i))
                            model[LevelsTests.key(i)] = nil
                        } else {
                            let value = (0..<(20 + Int(random.next() % 200))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                            try tx.put(LevelsTests.key(i), value)
                            model[LevelsTests.key(i)] = value
                        }
                    }
                }
                if round == 27 { pinned = (store.snapshot(), model) }
                if round % 13 == 12 && pinned == nil {  // a snapshot ends with its store
                    try store.close()
                    store = try Store(path: path, options: LevelsTests.smallOptions())
                    try LevelsTests.check(store, against: model, "after reopen in round \(round)")
                }
                if round == 25 { try store.compact() }
            }
            try LevelsTests.check(store, against: model, "before compact")
            let before = try store.stats()
            print("[LevelsTests] before compact: flushes \(before.flushes), compactions \(before.compactions), files per level \(before.levels.map(\.files))")
            #expect(before.flushes > 0 && before.segmentFiles > 0)
            try store.compact()
            let after = try store.stats()
            #expect(after.levels[0].files == 0)
            #expect(after.sealedMemtables == 0)
            try LevelsTests.check(store, against: model, "after compact")
            if let pinned {
                let seen = try pinned.snapshot.read { tx in try tx.scan(from: [0]).map { ($0.key, $0.value) } }
                #expect(Dictionary(uniqueKeysWithValues: seen) == pinned.model, "snapshot moved")
                pinned.snapshot.close()
            }
            try store.close()
            store = try Store(path: path, options: LevelsTests.smallOptions())
            try LevelsTests.check(store, against: model, "after final reopen")
            try store.close()
            let report = try Verifier.verify(path: path)
            #expect(report.problemsLeft == 0, "verifier: \(report.findings.map(\.message))")
        }
    }

    /// A transaction larger than the memtables' hard limit used to leave the next write
    /// waiting for ever for a flush that could not start (nothing was sealed yet).
    @Test(.timeLimit(.minutes(1))) func aTransactionOverTheHardLimitDoesNotWedgeTheWriter() async throws {
        try await TestEnvironment.withTemporaryDirectory("hard-limit") { path in
            var options = LevelsTests.smallOptions()
            options.memtableHardLimitBytes = 128 << 10
            let store = try Store(path: path, options: options)
            let big = [UInt8](repeating: 7, count: 1000)
            try store.write { tx in
                for i in 0..<400 { try tx.put(LevelsTests.key(i), big) }
            }
            try store.write { tx in try tx.put(LevelsTests.key(999_999), [1]) }
            #expect(try store.read { tx in try tx.get(LevelsTests.key(5)) } == big)
            #expect(try store.stats().writeStalls == 0)
            try store.close()
        }
    }

    @Test func opensTheCleanFixtureTheVerifierAccepts() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fixtures/stores/clean").standardizedFileURL.path
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("strata-fixture-\(UUID().uuidString)").path
        try FileManager.default.copyItem(atPath: fixture, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let store = try Store(path: copy, options: LevelsTests.smallOptions())
        let count = try store.read { tx in try tx.scan(from: [0]).count }
        #expect(count > 0)
        #expect(store.recovery.segmentFiles > 0)
        try store.close()
        let report = try Verifier.verify(path: copy)
        #expect(report.problemsLeft == 0, "verifier after the engine opened the fixture: \(report.findings.map(\.message))")
    }
}
