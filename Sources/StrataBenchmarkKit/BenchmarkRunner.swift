// The workload drivers: runs the standard workloads on one engine, times the measured part,
// and checks every answer. Generating keys and values is left out of the timings (each
// batch is made before its transaction starts; the reads' keys before the loop), so the
// figures are the engine's alone and the same for every engine.
//
// Stores live in `<directory>/<engine>/<workload>`: fillrandom's store is reused by
// readrandom, readseq, readwhilewriting, overwrite and readrandom4, fillrandom1k's by
// readrandom1k, and each is made (untimed) first when only its users are asked for.
import Dispatch
import Foundation
import Synchronization

public final class BenchmarkRunner: Sendable {
    public let settings: BenchmarkSettings
    /// Where each engine's stores go, one folder per engine.
    public let directory: String
    /// Remove each store once the last workload that uses it is done (default). When false,
    /// the stores are left for inspection.
    public let removeStores: Bool
    private let progress: @Sendable (String) -> Void

    public init(
        settings: BenchmarkSettings, directory: String, removeStores: Bool = true,
        progress: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.settings = settings
        self.directory = directory
        self.removeStores = removeStores
        self.progress = progress
    }

    /// Runs `workloads` (in the page's order, whatever order they are given in) on `engine`,
    /// handing each result to `onResult` as soon as it is checked.
    ///
    /// - Throws: `BenchmarkCheckFailure` on a wrong answer, `BenchmarkEngineFailure` when the
    ///   engine fails; either names the engine and the workload.
    @discardableResult
    public func run(
        _ engine: any BenchmarkEngine, workloads: [Workload],
        onResult: (BenchmarkResult) -> Void = { _ in }
    ) throws -> [BenchmarkResult] {
        let chosen = Workload.allCases.filter(workloads.contains)
        let engineDirectory = Self.join(directory, engine.name)
        try FileManager.default.createDirectory(atPath: engineDirectory, withIntermediateDirectories: true)
        let driver = WorkloadDriver(engine: engine, settings: settings, directory: engineDirectory)
        var results: [BenchmarkResult] = []
        var readyStores = Set<Workload>()
        for workload in chosen {
            if let base = workload.baseFill, !readyStores.contains(base) {
                progress("[\(engine.name)] preparing the \(base.rawValue) store for \(workload.rawValue) (not timed)")
                _ = try guarded(engine, base) { try driver.fill(base) }
                readyStores.insert(base)
            }
            Self.settleDisk()
            progress("[\(engine.name)] \(workload.rawValue) ...")
            let result = try guarded(engine, workload) { try driver.perform(workload) }
            results.append(result)
            onResult(result)
            progress(
                "[\(engine.name)] \(workload.rawValue): \(result.ops) \(workload.unitPlural) in "
                    + String(format: "%.3f s = %.0f ops/s", result.seconds, result.opsPerSecond)
                    + "; checked: \(result.verification)" + (result.note.map { "; \($0)" } ?? "")
                    + (result.writeStalls.map { String(format: "; %d write stalls, %.3f s", $0.count, $0.seconds) } ?? ""))
            readyStores.insert(workload)
            if removeStores {
                // A store goes once no later workload of the run reads it.
                let base = workload.baseFill ?? workload
                let laterUser = chosen.drop { $0 != workload }.dropFirst().contains { $0.baseFill == base }
                if !laterUser {
                    try? FileManager.default.removeItem(atPath: driver.storePath(for: workload))
                }
            }
        }
        if removeStores {
            try? FileManager.default.removeItem(atPath: engineDirectory)
        }
        return results
    }

    private func guarded<T>(_ engine: any BenchmarkEngine, _ workload: Workload, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as BenchmarkCheckFailure {
            throw failure
        } catch let failure as BenchmarkEngineFailure {
            throw failure
        } catch {
            throw BenchmarkEngineFailure(engine: engine.name, workload: workload, underlying: error)
        }
    }

    /// Writes out every dirty page of the system, untimed, before each workload. Otherwise a
    /// workload pays for the writeback of the one before: on ext4 a synced commit waits for
    /// a journal commit, which waits for data written earlier, so fillsync right after the
    /// fills measured about half its rate, and only for the engine whose fills came just
    /// before.
    static func settleDisk() {
        sync()
    }

    static func join(_ base: String, _ name: String) -> String {
        base.hasSuffix("/") ? base + name : base + "/" + name
    }
}

/// One engine's workloads.
struct WorkloadDriver {
    let engine: any BenchmarkEngine
    let settings: BenchmarkSettings
    let directory: String

    func storePath(for workload: Workload) -> String {
        BenchmarkRunner.join(directory, (workload.baseFill ?? workload).rawValue)
    }

    /// A seed of its own for each workload and stream, derived from the run's seed.
    func seed(_ workload: Workload, _ stream: UInt64) -> UInt64 {
        var mixer = BenchmarkRandom(seed: settings.seed ^ (UInt64(Workload.allCases.firstIndex(of: workload)!) << 32) ^ stream)
        return mixer.next()
    }

    func perform(_ workload: Workload) throws -> BenchmarkResult {
        switch workload {
        case .fillseq, .fillrandom, .fillrandom1k: return try fill(workload)
        case .readrandom, .readrandom1k: return try readRandom(workload)
        case .readrandom4: return try readRandomConcurrent(threads: 4)
        case .readseq: return try readSequential()
        case .fillsync: return try fillSync()
        case .syncconc8: return try syncConcurrent()
        case .readwhilewriting: return try readWhileWriting()
        case .overwrite: return try overwrite()
        case .fillsingle: return try fillSingle()
        }
    }

    private func fail(_ workload: Workload, _ problem: String) -> BenchmarkCheckFailure {
        BenchmarkCheckFailure(engine: engine.name, workload: workload, problem: problem)
    }

    /// Opens a store, runs `body`, and closes it even when `body` throws. The result carries
    /// the store's write stalls during `body`, when the engine reports them.
    private func withStore(
        _ workload: Workload, fresh: Bool, durability: BenchmarkDurability,
        _ body: (any BenchmarkStore) throws -> BenchmarkResult
    ) throws -> BenchmarkResult {
        let path = storePath(for: workload)
        if fresh {
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } else if !FileManager.default.fileExists(atPath: path) {
            throw fail(workload, "the fillrandom store it runs on is missing")
        }
        let store = try engine.open(directory: path, durability: durability)
        var result: BenchmarkResult
        do {
            let stallsBefore = store.writeStalls
            result = try body(store)
            if let stallsBefore, let stallsAfter = store.writeStalls {
                result.writeStalls = stallsAfter.since(stallsBefore)
            }
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        return result
    }

    /// Checks with a full scan that the store holds exactly `count` entries of the right
    /// length.
    private func checkScan(_ store: any BenchmarkStore, _ workload: Workload, expect count: Int) throws -> String {
        let reader = try store.makeReader()
        defer { reader.close() }
        let valueLength = workload.valueLength(settings)
        let tally = try reader.scanAll(expectedValueLength: valueLength)
        guard tally.entries == count, tally.wrongValueLengths == 0 else {
            throw fail(
                workload,
                "a full scan found \(tally.entries) entries (expected \(count)), \(tally.wrongValueLengths) with a value that is not \(valueLength) bytes"
            )
        }
        return "a scan counts \(count) entries, every value \(valueLength) bytes"
    }

    /// Checks that keys `0..<count` are all there with values of the right length.
    private func checkGets(_ store: any BenchmarkStore, _ workload: Workload, keys count: Int) throws -> String {
        let reader = try store.makeReader()
        defer { reader.close() }
        var missing = 0
        var wrongLength = 0
        for index in 0..<count {
            switch try reader.valueLength(BenchmarkKey.make(index)) {
            case nil: missing += 1
            case let length? where length != settings.valueLength: wrongLength += 1
            default: break
            }
        }
        guard missing == 0, wrongLength == 0 else {
            throw fail(workload, "\(missing) of \(count) committed keys not found, \(wrongLength) values not \(settings.valueLength) bytes")
        }
        return "\(count) gets find every key, every value \(settings.valueLength) bytes"
    }

    // MARK: fills and overwrite

    /// Puts `count` keys (index `keyAt(i)` for the i-th put) in transactions of
    /// `batchSize`, then syncs. Returns the seconds spent in the engine.
    private func putBatches(
        _ store: any BenchmarkStore, count: Int, batchSize: Int, values: inout BenchmarkValues,
        keyAt: (Int) -> Int
    ) throws -> Double {
        var stopwatch = Stopwatch()
        var batch: [KeyValue] = []
        batch.reserveCapacity(batchSize)
        var next = 0
        while next < count {
            batch.removeAll(keepingCapacity: true)
            let end = min(next + batchSize, count)
            for i in next..<end {
                batch.append(KeyValue(key: BenchmarkKey.make(keyAt(i)), value: values.next()))
            }
            try stopwatch.time { try store.write(batch) }
            next = end
        }
        try stopwatch.time { try store.sync() }
        return stopwatch.seconds
    }

    func fill(_ workload: Workload) throws -> BenchmarkResult {
        let count = workload.keyCount(settings)
        let order = workload != .fillseq ? BenchmarkRandom.permutation(count: count, seed: seed(workload, 1)) : []
        var values = BenchmarkValues(seed: seed(workload, 2), length: workload.valueLength(settings))
        return try withStore(workload, fresh: true, durability: .buffered) { store in
            let seconds = try putBatches(store, count: count, batchSize: workload.batchSize(settings), values: &values) {
                order.isEmpty ? $0 : order[$0]
            }
            let verification = try checkScan(store, workload, expect: count)
            return BenchmarkResult(engine: engine.name, workload: workload, ops: count, seconds: seconds, verification: verification)
        }
    }

    func overwrite() throws -> BenchmarkResult {
        let count = settings.keyCount
        var picks = BenchmarkRandom(seed: seed(.overwrite, 1))
        let keys = (0..<count).map { _ in picks.next(below: count) }
        var values = BenchmarkValues(seed: seed(.overwrite, 2), length: settings.valueLength)
        return try withStore(.overwrite, fresh: false, durability: .buffered) { store in
            var seconds = try putBatches(store, count: count, batchSize: settings.batchSize, values: &values) { keys[$0] }
            var note: String?
            if engine.compaction.isSupported {
                var stopwatch = Stopwatch()
                try stopwatch.time { try store.compact() }
                seconds += stopwatch.seconds
            } else {
                note = engine.compaction.note
            }
            let verification = try checkScan(store, .overwrite, expect: count)
            return BenchmarkResult(
                engine: engine.name, workload: .overwrite, ops: count, seconds: seconds,
                note: note, verification: verification)
        }
    }

    // MARK: reads

    private func randomKeys(_ workload: Workload) -> [[UInt8]] {
        var picks = BenchmarkRandom(seed: seed(workload, 1))
        let count = workload.keyCount(settings)
        return (0..<count).map { _ in BenchmarkKey.make(picks.next(below: count)) }
    }

    /// Gets every key of `keys` on `reader`, timed. Throws on a key not found or a value of
    /// the wrong length.
    private func timedGets(_ reader: any BenchmarkReader, _ keys: some Collection<[UInt8]>, _ workload: Workload) throws -> Double {
        var missing = 0
        var wrongLength = 0
        let expected = workload.valueLength(settings)
        var stopwatch = Stopwatch()
        try stopwatch.time {
            for key in keys {
                if let length = try reader.valueLength(key) {
                    if length != expected { wrongLength += 1 }
                } else {
                    missing += 1
                }
            }
        }
        guard missing == 0, wrongLength == 0 else {
            throw fail(workload, "\(missing) of \(keys.count) gets found no value, \(wrongLength) values not \(expected) bytes")
        }
        return stopwatch.seconds
    }

    func readRandom(_ workload: Workload) throws -> BenchmarkResult {
        let keys = randomKeys(workload)
        return try withStore(workload, fresh: false, durability: .buffered) { store in
            let reader = try store.makeReader()
            defer { reader.close() }
            let seconds = try timedGets(reader, keys, workload)
            return BenchmarkResult(
                engine: engine.name, workload: workload, ops: keys.count, seconds: seconds,
                verification: "\(keys.count) gets find a \(workload.valueLength(settings))-byte value")
        }
    }

    /// readrandom's N gets split over `threads` threads, each with its own reader, all
    /// released at once; timed from the release to the last thread's end.
    func readRandomConcurrent(threads threadCount: Int) throws -> BenchmarkResult {
        let workload = Workload.readrandom4
        let keys = randomKeys(workload)
        let share = (keys.count + threadCount - 1) / threadCount
        return try withStore(workload, fresh: false, durability: .buffered) { store in
            let seconds = try timeReleasedTogether(threads: threadCount, named: "strata-bench reader") { t, waitForRelease in
                let mine = keys[min(t * share, keys.count)..<min((t + 1) * share, keys.count)]
                let reader = try store.makeReader()
                defer { reader.close() }
                waitForRelease()
                _ = try timedGets(reader, mine, workload)
            }
            return BenchmarkResult(
                engine: engine.name, workload: workload, ops: keys.count, seconds: seconds,
                verification: "\(keys.count) gets on \(threadCount) threads find a \(workload.valueLength(settings))-byte value")
        }
    }

    func readSequential() throws -> BenchmarkResult {
        try withStore(.readseq, fresh: false, durability: .buffered) { store in
            let reader = try store.makeReader()
            defer { reader.close() }
            var stopwatch = Stopwatch()
            let tally = try stopwatch.time { try reader.scanAll(expectedValueLength: settings.valueLength) }
            guard tally.entries == settings.keyCount, tally.wrongValueLengths == 0 else {
                throw fail(
                    .readseq,
                    "the scan found \(tally.entries) entries (expected \(settings.keyCount)), \(tally.wrongValueLengths) with a value that is not \(settings.valueLength) bytes"
                )
            }
            return BenchmarkResult(
                engine: engine.name, workload: .readseq, ops: tally.entries, seconds: stopwatch.seconds,
                verification: "the scan counts \(tally.entries) entries, every value \(settings.valueLength) bytes")
        }
    }

    func readWhileWriting() throws -> BenchmarkResult {
        let keys = randomKeys(.readwhilewriting)
        let keyCount = settings.keyCount
        let batchSize = settings.batchSize
        let writerSeed = seed(.readwhilewriting, 2)
        let valueLength = settings.valueLength
        return try withStore(.readwhilewriting, fresh: false, durability: .buffered) { store in
            let stop = SharedFlag()
            let written = SharedCounter()
            let errors = ErrorCollector()
            let started = DispatchSemaphore(value: 0)
            let threads = ThreadGroup()
            threads.spawn("strata-bench writer") {
                var picks = BenchmarkRandom(seed: writerSeed)
                var values = BenchmarkValues(seed: writerSeed ^ 1, length: valueLength)
                var batch: [KeyValue] = []
                batch.reserveCapacity(batchSize)
                started.signal()
                while !stop.isSet {
                    batch.removeAll(keepingCapacity: true)
                    for _ in 0..<batchSize {
                        batch.append(KeyValue(key: BenchmarkKey.make(picks.next(below: keyCount)), value: values.next()))
                    }
                    do {
                        try store.write(batch)
                    } catch {
                        errors.record(error)
                        return
                    }
                    written.add(batchSize)
                }
            }
            started.wait()
            let seconds: Double
            do {
                let reader = try store.makeReader()
                defer { reader.close() }
                seconds = try timedGets(reader, keys, .readwhilewriting)
            } catch {
                stop.set()
                threads.wait()
                throw error
            }
            stop.set()
            threads.wait()
            if let error = errors.first { throw error }
            return BenchmarkResult(
                engine: engine.name, workload: .readwhilewriting, ops: keys.count, seconds: seconds,
                verification: "\(keys.count) gets find a \(valueLength)-byte value while \(written.value) puts overwrote keys")
        }
    }

    // MARK: synced commits

    func fillSync() throws -> BenchmarkResult {
        let count = settings.syncCommits
        var values = BenchmarkValues(seed: seed(.fillsync, 2), length: settings.valueLength)
        let puts = (0..<count).map { [KeyValue(key: BenchmarkKey.make($0), value: values.next())] }
        return try withStore(.fillsync, fresh: true, durability: .synced) { store in
            var stopwatch = Stopwatch()
            try stopwatch.time {
                for put in puts { try store.write(put) }
            }
            let verification = try checkGets(store, .fillsync, keys: count)
            return BenchmarkResult(
                engine: engine.name, workload: .fillsync, ops: count, seconds: stopwatch.seconds,
                verification: verification)
        }
    }

    /// One put per transaction, buffered, from one thread: the way most app code writes, and
    /// where a thread hand-off per commit shows.
    func fillSingle() throws -> BenchmarkResult {
        let count = Workload.fillsingle.keyCount(settings)
        var random = BenchmarkRandom(seed: seed(.fillsingle, 1))
        var order = Array(0..<count)
        order.shuffle(using: &random)
        var values = BenchmarkValues(seed: seed(.fillsingle, 2), length: settings.valueLength)
        let puts = order.map { [KeyValue(key: BenchmarkKey.make($0), value: values.next())] }
        return try withStore(.fillsingle, fresh: true, durability: .buffered) { store in
            var stopwatch = Stopwatch()
            try stopwatch.time {
                for put in puts { try store.write(put) }
                try store.sync()
            }
            let verification = try checkGets(store, .fillsingle, keys: count)
            return BenchmarkResult(
                engine: engine.name, workload: .fillsingle, ops: count, seconds: stopwatch.seconds,
                verification: verification)
        }
    }

    func syncConcurrent() throws -> BenchmarkResult {
        let threadCount = settings.concurrentThreads
        let perThread = settings.commitsPerThread
        let count = threadCount * perThread
        var values = BenchmarkValues(seed: seed(.syncconc8, 2), length: settings.valueLength)
        // Thread t puts keys t*perThread ..< (t+1)*perThread.
        let puts = (0..<count).map { [KeyValue(key: BenchmarkKey.make($0), value: values.next())] }
        return try withStore(.syncconc8, fresh: true, durability: .synced) { store in
            let seconds = try timeReleasedTogether(threads: threadCount, named: "strata-bench syncconc") { t, waitForRelease in
                let mine = puts[(t * perThread)..<((t + 1) * perThread)]
                waitForRelease()
                for put in mine { try store.write(put) }
            }
            let verification = try checkGets(store, .syncconc8, keys: count)
            return BenchmarkResult(
                engine: engine.name, workload: .syncconc8, ops: count, seconds: seconds,
                verification: verification)
        }
    }
}

// MARK: Plumbing

/// Adds up the time spent inside `time` calls (monotonic clock).
struct Stopwatch {
    private(set) var nanoseconds: UInt64 = 0

    var seconds: Double { Double(nanoseconds) / 1e9 }

    mutating func time<T>(_ body: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        defer { nanoseconds += DispatchTime.now().uptimeNanoseconds - start }
        return try body()
    }
}

/// Runs `body` on `count` threads of their own (real threads, not `concurrentPerform`, which
/// runs only as many workers as there are cores: syncconc8 is about 8 writers waiting on the
/// disk at once). Each thread prepares what it needs, then calls `waitForRelease`; once every
/// thread has, all are released together. Returns the seconds from the release to the last
/// thread's end, or throws the first error a thread threw.
func timeReleasedTogether(
    threads count: Int, named name: String,
    _ body: @escaping @Sendable (_ index: Int, _ waitForRelease: () -> Void) throws -> Void
) throws -> Double {
    let errors = ErrorCollector()
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let threads = ThreadGroup()
    for t in 0..<count {
        threads.spawn("\(name) \(t)") {
            var released = false
            do {
                try body(t) {
                    ready.signal()
                    go.wait()
                    released = true
                }
            } catch {
                errors.record(error)
            }
            // A thread that failed before its release must not hold the others back.
            if !released { ready.signal() }
        }
    }
    for _ in 0..<count { ready.wait() }
    var stopwatch = Stopwatch()
    stopwatch.time {
        for _ in 0..<count { go.signal() }
        threads.wait()
    }
    if let error = errors.first { throw error }
    return stopwatch.seconds
}

/// Foundation threads, joined all at once.
final class ThreadGroup: Sendable {
    private let group = DispatchGroup()

    func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let group = self.group
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = name
        thread.start()
    }

    func wait() {
        group.wait()
    }
}

/// The first errors thrown on other threads, reported by the thread that waits for them.
final class ErrorCollector: Sendable {
    private let errors = Mutex<[any Error]>([])

    func record(_ error: any Error) {
        errors.withLock { $0.append(error) }
    }

    var first: (any Error)? {
        errors.withLock { $0.first }
    }
}

final class SharedFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .acquiring) }

    func set() {
        flag.store(true, ordering: .releasing)
    }
}

final class SharedCounter: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func add(_ amount: Int) {
        count.add(amount, ordering: .relaxed)
    }
}
