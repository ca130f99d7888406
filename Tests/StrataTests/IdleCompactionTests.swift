// Which compaction goes first when no one writes: level 0, which every read pays for, even
// when a deeper level's score is higher, and from two files, below its trigger
// (VersionSet.pickCompaction).
import Foundation
import StrataTestSupport
import Testing

@_spi(Testing) @testable import Strata

@Suite struct IdleCompactionTests {
    static func key(_ i: Int) -> [UInt8] { Array(String(format: "key%06d", i).utf8) }

    /// Small files, and nothing compacted while the store is shaped: level 0 may grow to 100
    /// files and level 1 to 64 MiB.
    static func shapingOptions() -> StoreOptions {
        var options = StoreOptions()
        options.durability = .buffered
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.level0CompactionTrigger = 100
        options.level0StopWritesTrigger = 200
        options.level1Bytes = 64 << 20
        options.runsBackgroundWorkInline = true
        return options
    }

    static func write(_ store: Store, keys: Range<Int>, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        for start in stride(from: keys.lowerBound, to: keys.upperBound, by: 100) {
            try store.write { tx in
                for i in start..<min(start + 100, keys.upperBound) {
                    try tx.put(key(i), (0..<200).map { _ in UInt8(truncatingIfNeeded: random.next()) })
                }
            }
        }
    }

    @Test func aReopenedStoreCompactsLevel0FirstThoughLevel1ScoresHigher() async throws {
        let seed = TestEnvironment.seed(0x1D1E, test: "IdleCompactionTests.aReopenedStoreCompactsLevel0FirstThoughLevel1ScoresHigher")
        try await TestEnvironment.withTemporaryDirectory("idle-compaction") { path in
            // Level 1: about 1 MB in one merge. Level 0: a dozen flushed files over some of the same keys.
            var store = try Store(path: path, options: Self.shapingOptions())
            try Self.write(store, keys: 0..<4000, seed: seed)
            try store.compact()
            // Each round is more than a memtable: at least one flush.
            for round in 0..<6 {
                try Self.write(store, keys: 0..<400, seed: seed &+ UInt64(round) &+ 1)
            }
            var levels = try store.stats().levels
            try #require(levels[0].files >= 4 && levels[1].bytes > 8 * (64 << 10), "seed \(seed): shaped \(levels)")
            try store.close()

            // Reopened with level 1's target at 64 KiB: level 1 scores over 8, level 0 about 3.
            // With no writer, level 0 must still go first.
            var options = Self.shapingOptions()
            options.level0CompactionTrigger = 4
            options.level0StopWritesTrigger = 24
            options.level1Bytes = 64 << 10
            options.runsBackgroundWorkInline = false
            store = try Store(path: path, options: options)
            let deadline = Date().addingTimeInterval(60)
            while try store.stats().compactions == 0 && Date() < deadline { usleep(200) }
            levels = try store.stats().levels
            #expect(levels[0].files == 0, "seed \(seed): the first compaction left level 0 with \(levels[0].files) files")
            try store.close()
        }
    }

    /// Writes 100-key transactions of new keys until level 0 holds `files` files (work runs
    /// inline, so each flush is done when the write returns), then reopens the store with
    /// level 0's trigger at 4.
    static func storeWithLevel0(files: Int, path: String, inline: Bool, seed: UInt64) throws -> Store {
        var store = try Store(path: path, options: Self.shapingOptions())
        var next = 0
        while try store.stats().levels[0].files < files {
            try Self.write(store, keys: next..<(next + 100), seed: seed &+ UInt64(next))
            next += 100
        }
        try #require(try store.stats().levels[0].files == files, "seed \(seed): a write flushed twice")
        try store.close()
        var options = Self.shapingOptions()
        options.level0CompactionTrigger = 4
        options.level0StopWritesTrigger = 24
        options.runsBackgroundWorkInline = inline
        store = try Store(path: path, options: options)
        return store
    }

    /// Level-0 files left by the load, the writer's wait count at the pick (odd: it waits for
    /// room), and how many level-0 files the pick merges (0: none is picked). Level 0's trigger
    /// is 4, so none of these is due by its score.
    @Test(arguments: [
        (files: 2, writerWaits: 0, merged: 2),  // idle since the open: merged below the trigger
        (files: 1, writerWaits: 0, merged: 0),  // a single file is left alone
        (files: 3, writerWaits: 1, merged: 0)  // a waiting writer is not idle
    ])
    func anIdlePickMergesLevel0FromTwoFiles(files: Int, writerWaits: Int, merged: Int) async throws {
        let seed = TestEnvironment.seed(0x1D1F, test: "IdleCompactionTests.anIdlePickMergesLevel0FromTwoFiles.\(files).\(writerWaits)")
        try await TestEnvironment.withTemporaryDirectory("idle-compaction-pick") { path in
            let store = try Self.storeWithLevel0(files: files, path: path, inline: true, seed: seed)
            defer { try? store.close() }
            let plan = store.engine.versions.pickCompaction(writerWaits: writerWaits)
            #expect((plan?.inputs.first { $0.level == 0 }?.files.count ?? 0) == merged, "seed \(seed)")
            #expect(plan == nil || plan?.outputLevel == 1, "seed \(seed)")
        }
    }

    /// End to end, with the maintenance threads: a store reopened with three level-0 files
    /// (below the trigger of 4) and not written to merges them.
    @Test func aReopenedStoreMergesLevel0BelowItsTrigger() async throws {
        let seed = TestEnvironment.seed(0x1D22, test: "IdleCompactionTests.aReopenedStoreMergesLevel0BelowItsTrigger")
        try await TestEnvironment.withTemporaryDirectory("idle-compaction-reopened") { path in
            let store = try Self.storeWithLevel0(files: 3, path: path, inline: false, seed: seed)
            defer { try? store.close() }
            let deadline = Date().addingTimeInterval(60)
            while try store.stats().compactions == 0 && Date() < deadline { usleep(200) }
            let levels = try store.stats().levels
            #expect(levels[0].files == 0, "seed \(seed): level 0 kept \(levels[0].files) files")
            #expect(try store.get(Self.key(0)) != nil && store.get(Self.key(299)) != nil, "seed \(seed)")
        }
    }
}
