import Testing

@testable import Strata

/// `StoreStats.spaceAmplification`: bytes on disk over an estimate of the live data.
@Suite("StoreStats")
struct StoreStatsTests {
    static func stats(levels: [(files: Int, bytes: Int)], walBytes: Int) -> StoreStats {
        StoreStats(
            version: 1, memtableEntries: 0, memtableBytes: 0, sealedMemtables: 0, walSegments: 1, walBytes: walBytes,
            levels: levels.enumerated().map { StoreStats.LevelStats(level: $0, files: $1.files, bytes: $1.bytes, entries: 0) },
            liveSnapshots: 0, oldestSnapshotVersion: nil, pinnedVersions: [], blockCacheBytes: 0, blockCacheCapacity: 0,
            flushes: 0, compactions: 0, writeStalls: 0, writeStallSeconds: 0, isStalled: false)
    }

    /// Right after loading 1,000,000 distinct keys (the levels `strata stats` showed for such
    /// a store): level 1 holds most of the data and level 2 one file. Every byte is live, so
    /// the figure must be near 1; measured against the deepest level alone it read 13.6.
    @Test func aFreshLoadIsNotReportedAsOverhead() throws {
        let stats = Self.stats(levels: [(0, 0), (13, 103_999_642), (1, 8_522_662)], walBytes: 3_333_551)
        let amplification = try #require(stats.spaceAmplification)
        #expect(amplification >= 1 && amplification < 1.2, "\(amplification)")
    }

    @Test func afterAFullCompactionTheDeepestLevelIsTheLiveData() throws {
        let stats = Self.stats(levels: [(0, 0), (0, 0), (0, 0), (9, 1_000_000)], walBytes: 0)
        #expect(stats.spaceAmplification == 1.0)
        let withLog = Self.stats(levels: [(0, 0), (0, 0), (0, 0), (9, 1_000_000)], walBytes: 250_000)
        #expect(withLog.spaceAmplification == 1.25)
    }

    /// Level 0's files may hold the same keys; they are the estimate only when no deeper level
    /// has a file.
    @Test func levelZeroCountsOnlyWhenAlone() {
        #expect(Self.stats(levels: [(2, 400)], walBytes: 100).spaceAmplification == 1.25)
        #expect(Self.stats(levels: [(3, 900), (1, 300)], walBytes: 0).spaceAmplification == 4.0)
        #expect(Self.stats(levels: [(0, 0), (0, 0)], walBytes: 100).spaceAmplification == nil)
    }
}
