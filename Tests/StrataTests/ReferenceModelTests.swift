// Model test of `changedSince`: random commits, references taken at random moments, flushes,
// compactions and reopens, on the simulated and the real file system. Every answer is checked
// against a log of every commit: a change is never missed, and a change is reported where
// none happened only in the case the references' contract allows (a key absent at the reference and absent now,
// after a deletion newer than the reference, whose tombstone compaction may have dropped).
// Replay a failure with STRATA_SEED=<seed>; run ten times longer with STRATA_LONG_TESTS=1.
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Testing

@Suite("References: changedSince against a model of every commit")
struct ReferenceModelTests {
    /// One commit: its sequence, the keys it wrote, and whether it deleted anything.
    private struct Commit {
        let sequence: UInt64
        let keys: Set<[UInt8]>
        let deletes: Bool
    }

    private enum Taken {
        case key(KeyReference, presentAtVersion: Bool)
        case query(QueryReference)

        var version: UInt64 {
            switch self {
            case .key(let ref, _): ref.version
            case .query(let ref): ref.version
            }
        }

        func covers(_ key: [UInt8]) -> Bool {
            switch self {
            case .key(let ref, _): return ref.key == key
            case .query(let ref):
                return !key.lexicographicallyPrecedes(ref.lower) && (ref.upper.map { key.lexicographicallyPrecedes($0) } ?? true)
            }
        }
    }

    /// What the run saw, for the summary line.
    private struct Tally {
        var checks = 0
        var changes = 0
        var conservative = 0
    }

    private static let keys = (0..<48).map { apiBytes($0 < 10 ? "k0\($0)" : "k\($0)") }

    @Test("simulated file system")
    func simulated() throws {
        let fileSystem = SimulatedFileSystem()
        try Self.run(seed: TestEnvironment.seed(0x5EF_0001, test: "ReferenceModelTests.simulated"), path: "/db", fileSystem: fileSystem)
    }

    @Test("real file system")
    func real() async throws {
        let seed = TestEnvironment.seed(0x5EF_0002, test: "ReferenceModelTests.real")
        try await TestEnvironment.withTemporaryDirectory("reference-model") { directory in
            try Self.run(seed: seed, path: directory + "/store", fileSystem: POSIXFileSystem())
        }
    }

    private static func options(_ fileSystem: any FileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.memtableBytes = 64 << 10  // the minimum: with values up to 3 KB, a flush every few dozen commits
        options.segmentFileBytes = 64 << 10
        options.level0CompactionTrigger = 2
        options.runsBackgroundWorkInline = true
        options.durability = .buffered
        return options
    }

    private static func run(seed: UInt64, path: String, fileSystem: any FileSystem) throws {
        var random = SeededRandom(seed: seed)
        var store = try Store(path: path, options: options(fileSystem))
        var model: [[UInt8]: [UInt8]] = [:]
        var commits: [Commit] = []
        var taken: [Taken] = []
        var tally = Tally()
        let steps = TestEnvironment.scaled(1500)
        // The first third writes no deletions: with nothing deleted, no answer may be
        // conservative.
        let deletionsFrom = steps / 3

        func fail(_ message: String) {
            Issue.record("seed \(seed) (replay with STRATA_SEED=\(seed)): \(message)")
        }

        for step in 0..<steps {
            switch random.next() % 100 {
            case 0..<55:
                var writes: [([UInt8], [UInt8]?)] = []
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let key = keys[Int(random.next() % UInt64(keys.count))]
                    let delete = step >= deletionsFrom && random.next() % 3 == 0
                    writes.append((key, delete ? nil : random.bytes(count: 100 + Int(random.next() % 2900))))
                }
                try commit(store, writes)
                for (key, value) in writes { model[key] = value }
                commits.append(Commit(sequence: store.version, keys: Set(writes.map(\.0)), deletes: writes.contains { $0.1 == nil }))
            case 55..<75:
                if random.next() % 2 == 0 {
                    let key = keys[Int(random.next() % UInt64(keys.count))]
                    taken.append(.key(try referenceKey(store, key), presentAtVersion: model[key] != nil))
                } else {
                    let a = Int(random.next() % UInt64(keys.count))
                    let b = Int(random.next() % UInt64(keys.count))
                    let upper = random.next() % 5 == 0 ? nil : keys[max(a, b)]
                    taken.append(.query(try referenceRange(store, from: keys[min(a, b)], to: upper)))
                }
                // Young references as well as old ones: most old ones have changed.
                if taken.count > 30 { taken.remove(at: Int(random.next() % 20)) }
            case 75..<82:
                try store.compact()
            case 82..<85:
                try store.close()
                store = try Store(path: path, options: options(fileSystem))
            default:
                break
            }
            if step % 4 == 3 || step == steps - 1 {
                try check(store, taken, commits, model, &tally, fail)
            }
        }
        try store.close()
        print(
            "[ReferenceModelTests] seed \(seed): \(tally.checks) answers checked, \(tally.changes) real changes, "
                + "\(tally.conservative) conservative answers (all after a deletion newer than the reference)")
        #expect(tally.changes > 0 && tally.checks > tally.changes, "the run checked too little")
    }

    private static func check(
        _ store: Store, _ taken: [Taken], _ commits: [Commit], _ model: [[UInt8]: [UInt8]], _ tally: inout Tally,
        _ fail: (String) -> Void
    ) throws {
        try store.read { (tx: ReadTransaction) throws in
            let now = tx.version
            for ref in taken {
                let since = commits.filter { $0.sequence > ref.version && $0.sequence <= now }
                let expected = since.contains { commit in commit.keys.contains(where: ref.covers) }
                let answer: Bool
                let mayBeConservative: Bool
                switch ref {
                case .key(let key, let present):
                    answer = try tx.changedSince(key)
                    mayBeConservative = !present && model[key.key] == nil && since.contains(where: \.deletes)
                    if try tx.resolve(key) != model[key.key] { fail("resolve(\(key.key)) differs from the model") }
                case .query(let query):
                    answer = try tx.changedSince(query)
                    mayBeConservative = since.contains(where: \.deletes)
                    let expectedEntries = model.filter { ref.covers($0.key) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
                    if try tx.resolve(query).map(\.key) != expectedEntries.map(\.key) { fail("resolve(query) differs from the model") }
                }
                tally.checks += 1
                if expected { tally.changes += 1 }
                if expected && !answer {
                    fail("a change was missed: \(ref) at version \(now)")
                } else if !expected && answer {
                    if mayBeConservative {
                        tally.conservative += 1
                    } else {
                        fail("a change was reported where none happened: \(ref) at version \(now)")
                    }
                }
            }
        }
    }

    // Synchronous store calls, kept out of any async context (whose overloads differ).

    private static func commit(_ store: Store, _ writes: [([UInt8], [UInt8]?)]) throws {
        try store.write { tx in
            for (key, value) in writes {
                if let value { try tx.put(key, value) } else { try tx.delete(key) }
            }
        }
    }

    private static func referenceKey(_ store: Store, _ key: [UInt8]) throws -> KeyReference {
        try store.read { tx in try tx.reference(key) }
    }

    private static func referenceRange(_ store: Store, from: [UInt8], to: [UInt8]?) throws -> QueryReference {
        try store.read { tx in try tx.reference(from: from, to: to) }
    }
}
