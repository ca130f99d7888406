import Dispatch
// A memtable of several runs (MemTable, "runs") must read exactly as one skiplist would:
// point lookups, scans both ways and the flush's walk over every version, at every sequence,
// against a plain model. Replay a failure with STRATA_SEED=<seed>.
import Foundation
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

@_spi(Testing) @testable import Strata

@Suite("MemTableRuns")
struct MemTableRunsTests {
    /// Every version of every key: sequence and value (nil for a tombstone), newest first.
    typealias Model = [[UInt8]: [(sequence: UInt64, value: [UInt8]?)]]

    /// Keys from a small alphabet, so that keys repeat and versions pile up across runs.
    static func key(_ random: inout SeededRandom) -> [UInt8] {
        let length = 1 + Int(random.next() % 3)
        return (0..<length).map { _ in UInt8(ascii: "a") + UInt8(random.next() % 6) }
    }

    /// Fills a table of run length `runLength` with random transactions (several keys at one
    /// sequence), some in key order, and returns it with its model.
    static func fill(seed: UInt64, runLength: Int, transactions: Int) -> (MemTable, Model, UInt64) {
        var random = SeededRandom(seed: seed)
        let table = MemTable(runLength: runLength)
        var model: Model = [:]
        var sequence: UInt64 = 0
        for _ in 0..<transactions {
            sequence += 1
            var keys = Set<[UInt8]>()
            for _ in 0..<(1 + Int(random.next() % 4)) { keys.insert(key(&random)) }
            var ordered = Array(keys)
            // A third of the transactions insert in key order (the finger's case), the rest
            // in the order a transaction happens to hold them.
            if random.next() % 3 == 0 {
                ordered.sort { $0.lexicographicallyPrecedes($1) }
            } else {
                ordered.shuffle(using: &random)
            }
            for key in ordered {
                let value: [UInt8]? = random.next() % 5 == 0 ? nil : [UInt8(truncatingIfNeeded: sequence), UInt8(key.count)]
                key.withUnsafeBytes { k in
                    if let value {
                        value.withUnsafeBytes { table.insert(key: k, sequence: sequence, value: $0) }
                    } else {
                        table.insert(key: k, sequence: sequence, value: nil)
                    }
                }
                model[key, default: []].insert((sequence, value), at: 0)
            }
        }
        return (table, model, sequence)
    }

    /// The newest version of `key` at or below `sequence`, as (sequence, value).
    static func visible(_ model: Model, _ key: [UInt8], at sequence: UInt64) -> (sequence: UInt64, value: [UInt8]?)? {
        model[key]?.first { $0.sequence <= sequence }
    }

    static func describe(_ node: MemTable.Node?) -> String {
        guard let node else { return "nothing" }
        return "\(Array(node.key)) @\(node.sequence) \(node.isTombstone ? "tombstone" : "\(Array(node.value))")"
    }

    @Test(arguments: [1, 3, 17, 1_000_000])
    func readsAsOneSkiplist(runLength: Int) throws {
        let seed = TestEnvironment.seed(0x5EED_4A11 &+ UInt64(runLength), test: "MemTableRuns.readsAsOneSkiplist(\(runLength))")
        let (table, model, last) = Self.fill(seed: seed, runLength: runLength, transactions: TestEnvironment.scaled(400))
        table.checkInvariants()
        if runLength < 100 {
            #expect(table.runs > 1, "seed \(seed): a run length of \(runLength) should have made several runs")
        } else {
            #expect(table.runs == 1)
        }
        let keys = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var random = SeededRandom(seed: seed, stream: 1)

        // The flush's walk: every version, in (key ascending, sequence descending) order.
        var walked: [String] = []
        table.forEachNode { walked.append(Self.describe($0)) }
        var expectedWalk: [String] = []
        for key in keys {
            for version in model[key]! {
                expectedWalk.append(
                    "\(key) @\(version.sequence) \(version.value.map { "\($0)" } ?? "tombstone")")
            }
        }
        #expect(walked == expectedWalk, "seed \(seed): forEachNode")
        #expect(table.count == expectedWalk.count)

        for _ in 0..<40 {
            let sequence = random.next() % (last + 1)
            // Point lookups of every key, and of keys never written.
            for key in keys + [[UInt8(ascii: "z")], [UInt8(ascii: "a"), 0]] {
                let found = key.withUnsafeBytes { table.findVisible($0, at: sequence) }
                let want = Self.visible(model, key, at: sequence)
                #expect(
                    found?.sequence == want?.sequence && (found.map { $0.isTombstone ? nil : Array($0.value) } ?? nil) == (want?.value ?? nil),
                    "seed \(seed): get \(key) at \(sequence): \(Self.describe(found))")
            }
            // Scans over a random range, both ways.
            let lower = random.next() % 4 == 0 ? [] : Self.key(&random)
            let upper: [UInt8]? = random.next() % 3 == 0 ? nil : Self.key(&random)
            var expected: [String] = []
            for key in keys where !key.lexicographicallyPrecedes(lower) && (upper.map { key.lexicographicallyPrecedes($0) } ?? true) {
                if let version = Self.visible(model, key, at: sequence) {
                    expected.append("\(key) @\(version.sequence) \(version.value.map { "\($0)" } ?? "tombstone")")
                }
            }
            for reverse in [false, true] {
                var cursor = MemTable.Cursor(table: table, sequence: sequence, lower: lower, upper: upper, reverse: reverse)
                var got: [String] = []
                while let node = cursor.nextNode() { got.append(Self.describe(node)) }
                #expect(
                    got == (reverse ? expected.reversed() : expected),
                    "seed \(seed): scan [\(lower), \(upper.map { "\($0)" } ?? "end")) at \(sequence), reverse \(reverse)")
            }
        }
    }

    /// Readers beside the writer while it starts run after run (run length 4): every node a
    /// reader reaches is whole, at most its sequence, and a scan stays in key order. Runs
    /// under ThreadSanitizer in CI (`.ci/run`).
    @Test func readersBesideAWriterThatStartsRuns() throws {
        let seed = TestEnvironment.seed(0x5EED_4A12, test: "MemTableRuns.readersBesideAWriterThatStartsRuns")
        final class Shared: Sendable {
            let table = MemTable(runLength: 4)
            let published = Atomic<UInt64>(0)
            let failures = Locked<[String]>([])
            let finished = DispatchSemaphore(value: 0)
        }
        let shared = Shared()
        let table = shared.table
        let inserts = 3_000
        @Sendable func encode(_ sequence: UInt64) -> [UInt8] { withUnsafeBytes(of: sequence.littleEndian) { Array($0) } }
        let readers = (0..<3).map { reader in
            Thread {
                defer { shared.finished.signal() }
                var random = SeededRandom(seed: seed, stream: UInt64(reader) + 1)
                while shared.published.load(ordering: .acquiring) < UInt64(inserts) {
                    let sequence = shared.published.load(ordering: .acquiring)
                    var problems: [String] = []
                    for _ in 0..<8 {
                        let key = MemTableRunsTests.key(&random)
                        if let node = key.withUnsafeBytes({ table.findVisible($0, at: sequence) }) {
                            if node.sequence > sequence || Array(node.value) != encode(node.sequence) {
                                problems.append("get \(key) at \(sequence): \(MemTableRunsTests.describe(node))")
                            }
                        }
                    }
                    var cursor = MemTable.Cursor(table: table, sequence: sequence, lower: [], upper: nil, reverse: random.next() % 2 == 0)
                    var previous: [UInt8]? = nil
                    while let node = cursor.nextNode() {
                        let key = Array(node.key)
                        if node.sequence > sequence || Array(node.value) != encode(node.sequence) {
                            problems.append("scan at \(sequence): \(MemTableRunsTests.describe(node))")
                        }
                        if let previous, previous == key {
                            problems.append("scan at \(sequence): \(key) twice")
                        }
                        previous = key
                    }
                    if !problems.isEmpty {
                        shared.failures.withLock { $0 += problems }
                        return
                    }
                }
            }
        }
        for thread in readers { thread.start() }
        var random = SeededRandom(seed: seed)
        for sequence in 1...UInt64(inserts) {
            let key = Self.key(&random)
            key.withUnsafeBytes { k in encode(sequence).withUnsafeBytes { table.insert(key: k, sequence: sequence, value: $0) } }
            shared.published.store(sequence, ordering: .releasing)
        }
        for _ in readers { shared.finished.wait() }
        let failures = shared.failures.withLock { $0 }
        #expect(failures.isEmpty, "seed \(seed): \(failures.prefix(5))")
        #expect(table.runs > 1)
        table.checkInvariants()
    }

    /// The whole store with memtables of many runs: the model-based workload, on the
    /// simulated file system, with a run length of 3.
    @Test func modelBasedWithManyMemtableRuns() async throws {
        let seed = TestEnvironment.seed(0x5EED_0003, test: "modelBasedWithManyMemtableRuns")
        var options = ModelBasedTests.smallSegmentOptions()
        options.fileSystem = SimulatedFileSystem()
        options.memtableRunLength = 3
        var run = try ModelRun(seed: seed, path: "/model-store", options: options)
        try await run.run(operations: ModelBasedTests.operations)
        try run.store.close()
    }
}
