// Microbenchmarks of Strata's hot paths, for ordo-one/package-benchmark. Allocation counts
// (mallocCountTotal) are checked against Thresholds/: they do not drift the way times do, so a
// regression shows. Run and check (docs/benchmarks.md):
//   swift package --package-path Benchmarks benchmark
//   swift package --package-path Benchmarks benchmark thresholds check --metric mallocCountTotal
import Benchmark
import Foundation
import Strata
import StrataFormat

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 100,
        // A fixed number of iterations rather than a time budget: the stores grow with each
        // iteration, so the allocation figures depend on how many ran, never on how fast.
        maxDuration: .seconds(30),
        maxIterations: 20_000,
        // Allocation counts are exact but for growth steps (hash tables, arena blocks);
        // allow a little either way.
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 2])]
    )

    let key = Array("0000000000000042".utf8)
    let value = [UInt8](repeating: 0xA5, count: 100)

    // The bytes a commit of one 16-byte key and 100-byte value puts in the WAL: the batch
    // payload, then its fragment(s), into a buffer reused across commits as the writer does.
    Benchmark("WALRecordEncodeOnePut") { benchmark in
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            var encoder = BatchFormat.Encoder(sequence: 7, syncedThrough: 6, reservingCapacity: 128)
            encoder.put(key, value)
            let payload = encoder.finish()
            payload.withUnsafeBytes { payload in
                blackHole(WALFormat.appendRecord(payload, to: &buffer, fileOffset: 40_000))
            }
            blackHole(buffer)
        }
    }

    let page = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    Benchmark("CRC32Of4KiB") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Checksum.crc32(page))
        }
    }

    // Memtable insert through the public API: one put of a new key per buffered transaction
    // would mostly time the commit, so each iteration is a transaction of 1000 new keys.
    let inserts = StoreFixture(name: "insert")
    Benchmark(
        "MemtableInsert1000KeysOneTransaction",
        configuration: .init(maxIterations: 500, thresholds: [.mallocCountTotal: .init(absolute: [.p90: 4])])
    ) { benchmark in
        let store = inserts.store
        for _ in benchmark.scaledIterations {
            let base = inserts.nextKey(advancingBy: 1000)
            let keys = (base..<(base + 1000)).map(StoreFixture.key)
            benchmark.startMeasurement()
            try store.write(durability: .buffered) { tx in
                for key in keys { try tx.put(key, value) }
            }
            benchmark.stopMeasurement()
        }
    } setup: {
        try inserts.open(prefill: 0)
    } teardown: {
        inserts.close()
    }

    let lookups = StoreFixture(name: "lookup")
    Benchmark("MemtableLookupAmong100kKeys") { benchmark in
        let store = lookups.store
        for iteration in benchmark.scaledIterations {
            let key = StoreFixture.key(iteration &* 7919 % 100_000)
            blackHole(try store.read { tx in try tx.get(key) })
        }
    } setup: {
        try lookups.open(prefill: 100_000)
    } teardown: {
        lookups.close()
    }

    let snapshots = StoreFixture(name: "snapshot")
    Benchmark("SnapshotAcquireAndClose") { benchmark in
        let store = snapshots.store
        for _ in benchmark.scaledIterations {
            let snapshot = store.snapshot()
            blackHole(snapshot.version)
            snapshot.close()
        }
    } setup: {
        try snapshots.open(prefill: 1000)
    } teardown: {
        snapshots.close()
    }

    let commits = StoreFixture(name: "commit")
    Benchmark("CommitOneBufferedPut") { benchmark in
        let store = commits.store
        for _ in benchmark.scaledIterations {
            let key = StoreFixture.key(commits.nextKey(advancingBy: 1))
            try store.write(durability: .buffered) { tx in try tx.put(key, value) }
        }
    } setup: {
        try commits.open(prefill: 0)
    } teardown: {
        commits.close()
    }

    // StoreIO against the plain closure it stands for, in pairs. Building the operation is
    // inside the measurement, as app code builds it each time it runs one.
    let storeIOGets = StoreFixture(name: "storeio-get")
    let closureGets = StoreFixture(name: "closure-get")
    let present = StoreFixture.key(421)
    Benchmark("StoreIOGet") { benchmark in
        let store = storeIOGets.store
        for _ in benchmark.scaledIterations {
            let operation: StoreIO<ReadOnly, [UInt8]?> = .get(present)
            blackHole(try store.run(operation))
        }
    } setup: {
        try storeIOGets.open(prefill: 1000)
    } teardown: {
        storeIOGets.close()
    }

    Benchmark("ClosureGet") { benchmark in
        let store = closureGets.store
        for _ in benchmark.scaledIterations {
            blackHole(try store.read { try $0.get(present) })
        }
    } setup: {
        try closureGets.open(prefill: 1000)
    } teardown: {
        closureGets.close()
    }

    // A point read that finds its value in a segment file (the prefill compacted out of the
    // memtable), copied and borrowed: the copy costs one allocation more.
    let fileGets = StoreFixture(name: "file-get")
    Benchmark("FileGet") { benchmark in
        let store = fileGets.store
        for _ in benchmark.scaledIterations {
            blackHole(try store.read { try $0.get(present) })
        }
    } setup: {
        try fileGets.open(prefill: 1000, compacted: true)
    } teardown: {
        fileGets.close()
    }

    Benchmark("FileGetBorrowed") { benchmark in
        let store = fileGets.store
        for _ in benchmark.scaledIterations {
            blackHole(try store.read { try $0.withUnsafeValue(present) { $0?.count } })
        }
    } setup: {
        try fileGets.open(prefill: 1000, compacted: true)
    } teardown: {
        fileGets.close()
    }

    // 1000 new keys in one buffered transaction, as MemtableInsert1000KeysOneTransaction: as
    // a sequence of 1000 `.put`s, then as the closure. The keys are made before the
    // measurement starts; the operation is built, run and released inside it.
    let thousandPuts = Benchmark.Configuration(maxIterations: 500, thresholds: [.mallocCountTotal: .init(absolute: [.p90: 4])])
    let composedPuts = StoreFixture(name: "storeio-puts")
    Benchmark("StoreIOCompose1000Puts", configuration: thousandPuts) { benchmark in
        let store = composedPuts.store
        for _ in benchmark.scaledIterations {
            let base = composedPuts.nextKey(advancingBy: 1000)
            let keys = (base..<(base + 1000)).map(StoreFixture.key)
            benchmark.startMeasurement()
            do {
                let operation = StoreIO.sequence(keys.map { key in StoreIO<ReadWrite, Void>.put(key, value) })
                blackHole(try store.run(operation, durability: .buffered))
            }
            benchmark.stopMeasurement()
        }
    } setup: {
        try composedPuts.open(prefill: 0)
    } teardown: {
        composedPuts.close()
    }

    let closurePuts = StoreFixture(name: "closure-puts")
    Benchmark("Closure1000Puts", configuration: thousandPuts) { benchmark in
        let store = closurePuts.store
        for _ in benchmark.scaledIterations {
            let base = closurePuts.nextKey(advancingBy: 1000)
            let keys = (base..<(base + 1000)).map(StoreFixture.key)
            benchmark.startMeasurement()
            try store.write(durability: .buffered) { tx in
                for key in keys { try tx.put(key, value) }
            }
            benchmark.stopMeasurement()
        }
    } setup: {
        try closurePuts.open(prefill: 0)
    } teardown: {
        closurePuts.close()
    }
}

/// A store in a fresh temporary directory, opened by a benchmark's setup and removed by its
/// teardown.
final class StoreFixture: @unchecked Sendable {
    // @unchecked Sendable because: setup, the measured closure and teardown run one after
    // another, never at once.
    private let name: String
    private var path: String?
    private var opened: Store?
    private var next = 0

    init(name: String) {
        self.name = name
    }

    var store: Store {
        guard let opened else { fatalError("the \(name) store is used before its setup ran") }
        return opened
    }

    static func key(_ index: Int) -> [UInt8] {
        let digits = String(index)
        return Array((String(repeating: "0", count: max(0, 16 - digits.count)) + digits).utf8)
    }

    func nextKey(advancingBy count: Int) -> Int {
        defer { next += count }
        return next
    }

    /// Opens the store with keys 0..<prefill; `compacted` moves them into a segment file.
    func open(prefill: Int, compacted: Bool = false) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("strata-micro-\(name)-\(UUID().uuidString)").path
        var options = StoreOptions()
        options.durability = .buffered
        // A memtable budget above all that any benchmark here writes (500 × 1000 inserts at
        // most): the memtable benchmarks measure the memtable, not a flush or compaction
        // running beside them, whose allocations the process-wide count would include.
        options.memtableBytes = 512 << 20
        options.memtableHardLimitBytes = 2048 << 20
        let store = try Store(path: path, options: options)
        let value = [UInt8](repeating: 0x5A, count: 100)
        var start = 0
        while start < prefill {
            let end = min(start + 1000, prefill)
            try store.write { tx in
                for index in start..<end { try tx.put(Self.key(index), value) }
            }
            start = end
        }
        if compacted { try store.compact() }
        self.path = path
        opened = store
        next = prefill
    }

    func close() {
        try? opened?.close()
        opened = nil
        if let path { try? FileManager.default.removeItem(atPath: path) }
        path = nil
    }
}
