@_spi(Engine) import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import Strata

/// `CompactionMerge` on its own: which versions and tombstones a merge keeps.
@Suite struct CompactionMergeTests {
    private static let directory = "/c"

    private final class Files {
        let fs = SimulatedFileSystem()
        let cache = BlockCache(capacity: 1 << 20)
        let options: StoreOptions
        var next: UInt64 = 1

        init() throws {
            try fs.createDirectory(CompactionMergeTests.directory)
            var options = StoreOptions()
            options.fileSystem = fs
            self.options = options
        }

        /// A segment file at `level` holding (key, sequence, value or nil) in internal-key order.
        func table(level: Int, _ entries: [(String, UInt64, String?)]) throws -> SegmentTable {
            var output = SegmentOutput(level: level, options: options)
            for (key, sequence, value) in entries {
                let keyBytes = Array(key.utf8)
                let valueBytes = Array((value ?? "").utf8)
                try keyBytes.withUnsafeBytes { k in
                    try valueBytes.withUnsafeBytes { v in
                        try output.add(borrowingKey: k, sequence: sequence, isTombstone: value == nil, value: v)
                    }
                }
            }
            defer { next += 1 }
            let meta = try output.write(number: next, fileSystem: fs, directory: CompactionMergeTests.directory)
            return try SegmentTable.open(meta, directory: CompactionMergeTests.directory, fileSystem: fs, cache: cache)
        }

        /// Merges `plan` and returns every entry written, as "key@sequence=value" ("key@sequence=-"
        /// for a tombstone).
        func merge(_ plan: CompactionPlan, horizon: UInt64, deeper: [[SegmentTable]] = []) throws -> [String] {
            let merge = CompactionMerge(plan: plan, horizon: horizon, deeperLevels: deeper, targetFileBytes: 1 << 20, options: options)
            let result = try merge.run { output in
                defer { next += 1 }
                return try output.write(number: next, fileSystem: fs, directory: CompactionMergeTests.directory)
            }
            let tables = try result.outputs.map { try SegmentTable.open($0, directory: CompactionMergeTests.directory, fileSystem: fs, cache: cache) }
            let iterator = RawFileIterator(files: tables)
            var seen: [String] = []
            while try iterator.next() {
                let tombstone = iterator.trailer & 0xFF == UInt64(SegmentFormat.EntryKind.tombstone.rawValue)
                seen.append(
                    "\(String(decoding: iterator.userKey, as: UTF8.self))@\(iterator.trailer >> 8)="
                        + (tombstone ? "-" : String(decoding: iterator.value, as: UTF8.self)))
            }
            return seen
        }
    }

    @Test func versionsAboveTheHorizonStayAndOnlyTheNewestBelowIt() throws {
        let files = try Files()
        let upper = try files.table(level: 0, [("a", 9, "a9"), ("a", 6, "a6"), ("b", 7, "b7")])
        let lower = try files.table(level: 1, [("a", 3, "a3"), ("a", 2, "a2"), ("b", 1, "b1")])
        let plan = CompactionPlan(inputs: [(0, [upper]), (1, [lower])], outputLevel: 1, reason: "test")
        // A reader may still be at sequence 5: a9 and a6 are above it; of a3 and a2 only a3
        // can be seen; b7 is above it, and b1 is the newest at or below it.
        #expect(try files.merge(plan, horizon: 5) == ["a@9=a9", "a@6=a6", "a@3=a3", "b@7=b7", "b@1=b1"])
        // Nobody reads below 9: one version per key.
        #expect(try files.merge(plan, horizon: 9) == ["a@9=a9", "b@7=b7"])
    }

    @Test func aTombstoneGoesOnlyWhenNothingDeeperHoldsTheKey() throws {
        let files = try Files()
        let upper = try files.table(level: 1, [("a", 8, nil), ("b", 7, nil), ("c", 6, "c6")])
        let lower = try files.table(level: 2, [("a", 2, "a2")])
        let deeper = try files.table(level: 3, [("b", 1, "b1")])
        let plan = CompactionPlan(inputs: [(1, [upper]), (2, [lower])], outputLevel: 2, reason: "test")
        // "a": the tombstone and everything under it go. "b": level 3 still holds an older
        // version, so the tombstone must stay to hide it.
        #expect(try files.merge(plan, horizon: 10, deeper: [[deeper]]) == ["b@7=-", "c@6=c6"])
        // A reader below the tombstone still sees a2: both stay.
        #expect(try files.merge(plan, horizon: 4, deeper: [[deeper]]) == ["a@8=-", "a@2=a2", "b@7=-", "c@6=c6"])
    }
}
