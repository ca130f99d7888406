// Model-based test: thousands of random operations in random transactions, each checked
// against an in-memory reference model, inside the transaction (read-your-own-writes) and
// after every commit and every reopen. Replay a failure with STRATA_SEED=<seed>; run ten
// times longer with STRATA_LONG_TESTS=1.
import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

// MARK: - Reference model

/// What the store should hold: every committed key with its value. A plain dictionary;
/// ordered views are computed by sorting, independently of the engine's code.
struct ReferenceModel: Sendable, Equatable {
    var entries: [[UInt8]: [UInt8]] = [:]

    func get(_ key: [UInt8]) -> [UInt8]? { entries[key] }

    /// Entries with `from <= key < to` (no upper bound when `to` is nil), in key order or
    /// reversed.
    func range(from: [UInt8], to: [UInt8]?, reverse: Bool = false) -> [Entry] {
        ReferenceModel.ordered(
            entries.filter { key, _ in
                !key.lexicographicallyPrecedes(from) && (to.map { key.lexicographicallyPrecedes($0) } ?? true)
            }, reverse: reverse)
    }

    /// Entries whose key starts with `prefix` (checked byte by byte, not through a successor
    /// key, so it checks the engine's prefix bound too).
    func withPrefix(_ prefix: [UInt8], reverse: Bool = false) -> [Entry] {
        ReferenceModel.ordered(entries.filter { $0.key.starts(with: prefix) }, reverse: reverse)
    }

    /// Removes the keys in `[from, to)` and returns how many there were.
    mutating func deleteRange(from: [UInt8], to: [UInt8]?) -> Int {
        let doomed = range(from: from, to: to).map(\.key)
        for key in doomed { entries[key] = nil }
        return doomed.count
    }

    private static func ordered(_ selected: [[UInt8]: [UInt8]], reverse: Bool) -> [Entry] {
        let sorted = selected.map { Entry(key: $0.key, value: $0.value) }
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
        return reverse ? Array(sorted.reversed()) : sorted
    }
}

enum ModelDiff {
    /// Where two entry lists first differ, for a failure message.
    static func describe(expected: [Entry], actual: [Entry]) -> String {
        var text = "expected \(expected.count) entries, got \(actual.count)"
        for index in 0..<max(expected.count, actual.count) {
            let want = index < expected.count ? expected[index] : nil
            let got = index < actual.count ? actual[index] : nil
            if want != got {
                text += "; first difference at #\(index): expected "
                text += want.map { "\(TestEnvironment.hex($0.key))=\(TestEnvironment.hex($0.value))" } ?? "nothing"
                text += ", got "
                text += got.map { "\(TestEnvironment.hex($0.key))=\(TestEnvironment.hex($0.value))" } ?? "nothing"
                break
            }
        }
        return text
    }
}

// MARK: - Plans

/// One step of a transaction.
enum ModelOp: Sendable, CustomStringConvertible {
    case put([UInt8], [UInt8])
    case delete([UInt8])
    case deleteRange(from: [UInt8], to: [UInt8]?)
    case get([UInt8])
    case scan(from: [UInt8], to: [UInt8]?, reverse: Bool)
    case scanPrefix([UInt8], reverse: Bool)

    var isWrite: Bool {
        switch self {
        case .put, .delete, .deleteRange: return true
        case .get, .scan, .scanPrefix: return false
        }
    }

    var description: String {
        let h = { (bytes: [UInt8]?) in TestEnvironment.hex(bytes) }
        switch self {
        case .put(let key, let value): return "put(\(h(key)), \(value.count) bytes)"
        case .delete(let key): return "delete(\(h(key)))"
        case .deleteRange(let from, let to): return "deleteRange(from: \(h(from)), to: \(h(to)))"
        case .get(let key): return "get(\(h(key)))"
        case .scan(let from, let to, let reverse): return "scan(from: \(h(from)), to: \(h(to)), reverse: \(reverse))"
        case .scanPrefix(let prefix, let reverse): return "scan(prefix: \(h(prefix)), reverse: \(reverse))"
        }
    }
}

/// Which `Store` entry point commits a transaction.
enum ModelWriteMode: Sendable, CaseIterable {
    /// `store.write { }`, blocking the calling thread.
    case blocking
    /// `try await store.write { }`.
    case async
    /// `store.asyncWrite(_:completion:)`, waited for before the next transaction.
    case callback
}

/// One random transaction.
struct ModelPlan: Sendable {
    var ops: [ModelOp]
    var durability: Durability
    var mode: ModelWriteMode
    /// When set, the closure throws `ModelAbort(token:)` after running every op.
    var abortToken: Int?
}

/// The error a plan's closure throws to abort its transaction; the caller must get this very
/// value back.
struct ModelAbort: Error, Equatable {
    let token: Int
}

/// What a transaction's closure returns to the test.
struct ModelTxResult: Sendable {
    /// The committed model plus the transaction's writes.
    var model: ReferenceModel
    /// `tx.version` inside the closure.
    var startVersion: UInt64
    /// Whether the transaction recorded any write (a put, a delete, or a deleteRange that
    /// removed something): only then does it take a commit sequence.
    var wrote: Bool
}

/// Random keys, values and plans, all from one seeded stream.
struct ModelGenerator {
    /// Few byte values, including the extremes, so short keys collide often and prefix
    /// bounds meet 0x00 and 0xFF.
    static let alphabet: [UInt8] = [0x00, 0x01, 0x41, 0x61, 0x7F, 0xFF]

    var random: SeededRandom
    /// Long keys made so far, reused so they are overwritten, read and deleted too.
    private(set) var longKeys: [[UInt8]] = []

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    /// True with probability `perMille` / 1000.
    mutating func chance(_ perMille: Int) -> Bool {
        Int.random(in: 0..<1000, using: &random) < perMille
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    mutating func shortKey(maxLength: Int = 4) -> [UInt8] {
        // Lengths 1...4 weighted 15/35/30/20 (cut at maxLength).
        let roll = int(0...99)
        let length = min(maxLength, roll < 15 ? 1 : roll < 50 ? 2 : roll < 80 ? 3 : 4)
        return (0..<length).map { _ in ModelGenerator.alphabet.randomElement(using: &random)! }
    }

    mutating func key() -> [UInt8] {
        let roll = int(0...999)
        if roll < 20 || (roll < 50 && longKeys.isEmpty) {
            // A new long key, sorted among the short ones by its first bytes.
            var key = shortKey(maxLength: 2)
            let length = chance(50) ? StoreLimits.maxKeyBytes - int(0...3) : int(17...700)
            key += random.bytes(count: length - key.count)
            longKeys.append(key)
            return key
        }
        if roll < 50 {
            return longKeys.randomElement(using: &random)!
        }
        return shortKey()
    }

    /// A scan or range bound: sometimes empty (the start of the key space), sometimes long.
    mutating func bound() -> [UInt8] {
        let roll = int(0...99)
        if roll < 8 { return [] }
        if roll < 12 { return key() }
        return shortKey(maxLength: 3)
    }

    mutating func value() -> [UInt8] {
        let roll = int(0...999)
        if roll < 30 {
            // Over a 32 KiB WAL block: the record fragments.
            return random.bytes(count: 40 * 1024 + int(0...8191))
        }
        if roll < 34 {
            // Several blocks.
            return random.bytes(count: 100 * 1024 + int(0...30_000))
        }
        return random.bytes(count: int(0...200))
    }

    mutating func op() -> ModelOp {
        let roll = int(0...99)
        switch roll {
        case 0..<38:
            return .put(key(), value())
        case 38..<52:
            return .delete(key())
        case 52..<55:
            // Mostly narrow ranges (a 2-4 byte `from`), so the store stays populated.
            var from = shortKey(maxLength: 3)
            if from.count == 1 { from.append(ModelGenerator.alphabet.randomElement(using: &random)!) }
            let shape = int(0...99)
            if shape == 0 { return .deleteRange(from: from, to: nil) }
            if shape <= 3 { return .deleteRange(from: from, to: bound()) }
            // A narrow range: `from` up to its last byte's next alphabet value.
            var to = from
            let index = ModelGenerator.alphabet.firstIndex(of: to[to.count - 1])!
            if index + 1 < ModelGenerator.alphabet.count {
                to[to.count - 1] = ModelGenerator.alphabet[index + 1]
            } else {
                to.append(0x7F)
            }
            return .deleteRange(from: from, to: to)
        case 55..<74:
            return .get(key())
        case 74..<88:
            if chance(150) { return .scan(from: [], to: nil, reverse: chance(500)) }
            return .scan(from: bound(), to: chance(250) ? nil : bound(), reverse: chance(500))
        default:
            let prefix: [UInt8] = chance(150) ? [] : chance(100) ? [0xFF] : shortKey(maxLength: 2)
            return .scanPrefix(prefix, reverse: chance(500))
        }
    }

    mutating func plan(index: Int) -> ModelPlan {
        var ops = (0..<int(1...20)).map { _ in op() }
        var abortToken: Int? = nil
        if chance(70) {
            if !ops.contains(where: \.isWrite) { ops.append(.put(key(), value())) }
            abortToken = index
        }
        return ModelPlan(
            ops: ops,
            durability: chance(500) ? .synced : .buffered,
            mode: ModelWriteMode.allCases.randomElement(using: &random)!,
            abortToken: abortToken)
    }
}

// MARK: - Running a plan inside a transaction

enum ModelExecutor {
    /// Runs `plan` in `tx`, mirroring every write on a copy of `base` and checking every read
    /// against that copy. Mismatches go to `log` (this runs on the writer queue).
    static func run(
        _ plan: ModelPlan, base: ReferenceModel, tx: WriteTransaction,
        log: TestEnvironment.FailureLog, context: String
    ) throws -> ModelTxResult {
        var model = base
        var wrote = false
        let startVersion = tx.version
        for (index, op) in plan.ops.enumerated() {
            let step = "\(context) op #\(index) \(op)"
            switch op {
            case .put(let key, let value):
                try tx.put(key, value)
                model.entries[key] = value
                wrote = true
            case .delete(let key):
                try tx.delete(key)
                model.entries[key] = nil
                wrote = true
            case .deleteRange(let from, let to):
                let removed = try tx.deleteRange(from: from, to: to)
                let expected = model.deleteRange(from: from, to: to)
                if removed != expected {
                    log.record("\(step): removed \(removed) keys, the model had \(expected) in the range")
                }
                if removed > 0 { wrote = true }
            case .get(let key):
                let got = try tx.get(key)
                if got != model.get(key) {
                    log.record("\(step): got \(TestEnvironment.hex(got)), expected \(TestEnvironment.hex(model.get(key))) (read-your-own-writes)")
                }
                if try tx.contains(key) != (got != nil) {
                    log.record("\(step): contains() disagrees with get()")
                }
            case .scan(let from, let to, let reverse):
                let got = Array(try tx.scan(from: from, to: to, reverse: reverse))
                let expected = model.range(from: from, to: to, reverse: reverse)
                if got != expected {
                    log.record("\(step): \(ModelDiff.describe(expected: expected, actual: got)) (read-your-own-writes)")
                }
            case .scanPrefix(let prefix, let reverse):
                let got = Array(try tx.scan(prefix: prefix, reverse: reverse))
                let expected = model.withPrefix(prefix, reverse: reverse)
                if got != expected {
                    log.record("\(step): \(ModelDiff.describe(expected: expected, actual: got)) (read-your-own-writes)")
                }
            }
            if tx.version != startVersion {
                log.record("\(step): tx.version changed from \(startVersion) to \(tx.version) inside the transaction")
            }
        }
        if let token = plan.abortToken { throw ModelAbort(token: token) }
        return ModelTxResult(model: model, startVersion: startVersion, wrote: wrote)
    }
}

// MARK: - One run

/// A store under test, its reference model, and the random stream driving both.
struct ModelRun {
    let seed: UInt64
    let path: String
    /// What each open uses; a variant may change it between reopens.
    var options: StoreOptions
    /// Whether a reopen checks that the WAL kept its segments and bytes. Off when flushes
    /// retire WAL segments, in the background, while the store closes.
    var checksWALAcrossReopen = true
    var generator: ModelGenerator
    var store: Store
    var model = ReferenceModel()
    /// The commit sequence the store must be at.
    var expectedVersion: UInt64 = 0
    let log = TestEnvironment.FailureLog()
    var counts = (transactions: 0, operations: 0, aborted: 0, empty: 0, reopens: 0)

    init(seed: UInt64, path: String, options: StoreOptions) throws {
        self.seed = seed
        self.path = path
        self.options = options
        generator = ModelGenerator(seed: seed)
        store = try Store(path: path, options: options)
        let report = store.recovery
        #expect(
            report.truncatedTail == nil && report.lastSequence == 0 && store.version == 0,
            "seed \(seed): a new store should start empty at version 0, got \(report)")
    }

    mutating func run(operations: Int) async throws {
        try checkState(of: store, "seed \(seed) new store")
        var index = 0
        while counts.operations < operations {
            let plan = generator.plan(index: index)
            let context = "seed \(seed) tx #\(index) (\(plan.mode), \(plan.durability))"
            try await commit(plan, context)
            try checkState(of: store, "\(context) after commit")
            if generator.chance(30) {
                try reopen("\(context) then reopen")
            } else if generator.chance(20) {
                try await store.sync()
            }
            index += 1
        }
        try reopen("seed \(seed) final reopen")
        let stats = try store.stats()
        #expect(stats.version == expectedVersion, "seed \(seed): stats().version \(stats.version), expected \(expectedVersion)")
        if checksWALAcrossReopen {
            #expect(stats.walSegments > 1, "seed \(seed): with 64 KiB segments the WAL should have rolled, but has \(stats.walSegments) segment(s)")
        }
        #expect(
            counts.aborted > 0 && counts.empty > 0 && counts.reopens > 1,
            "seed \(seed): the run should abort, commit empty transactions and reopen: \(counts)")
        print("[model] seed \(seed): \(counts), \(model.entries.count) keys at the end, version \(expectedVersion), \(stats.walSegments) WAL segments")
    }

    /// Commits `plan` with the mode it names, waits for the outcome, and checks it.
    mutating func commit(_ plan: ModelPlan, _ context: String) async throws {
        let base = model
        let log = self.log
        let store = self.store
        let outcome: Result<ModelTxResult, any Error>
        switch plan.mode {
        case .blocking:
            outcome = ModelRun.blockingWrite(store, plan, base, log, context)
        case .async:
            do {
                outcome = .success(
                    try await store.write(durability: plan.durability) { tx in
                        try ModelExecutor.run(plan, base: base, tx: tx, log: log, context: context)
                    })
            } catch {
                outcome = .failure(error)
            }
        case .callback:
            outcome = await withCheckedContinuation { continuation in
                store.asyncWrite(
                    durability: plan.durability,
                    { tx in
                        try ModelExecutor.run(plan, base: base, tx: tx, log: log, context: context)
                    }, completion: { continuation.resume(returning: $0) })
            }
        }
        counts.transactions += 1
        counts.operations += plan.ops.count
        let clean = log.report()
        try #require(clean, "\(context): stopping after the mismatches inside the transaction above; ops: \(plan.ops)")

        switch (outcome, plan.abortToken) {
        case (.success(let result), nil):
            try #require(
                result.startVersion == expectedVersion,
                "\(context): the transaction read at tx.version \(result.startVersion), expected the last commit \(expectedVersion)")
            model = result.model
            if result.wrote { expectedVersion += 1 } else { counts.empty += 1 }
        case (.success, let token?):
            Issue.record("\(context): the closure threw ModelAbort(\(token)), but the write returned success")
            throw ModelAbort(token: token)
        case (.failure(let error), let token?):
            let same = (error as? ModelAbort) == ModelAbort(token: token)
            try #require(same, "\(context): the closure threw ModelAbort(\(token)); the caller got \(error)")
            counts.aborted += 1
        case (.failure(let error), nil):
            Issue.record("\(context): the write failed: \(error); ops: \(plan.ops)")
            throw error
        }
        try #require(
            store.version == expectedVersion,
            "\(context): store.version is \(store.version) after the commit, expected \(expectedVersion) (+1 per non-empty transaction only)")
    }

    /// The blocking `write` overload (a synchronous context picks it).
    static func blockingWrite(
        _ store: Store, _ plan: ModelPlan, _ base: ReferenceModel,
        _ log: TestEnvironment.FailureLog, _ context: String
    ) -> Result<ModelTxResult, any Error> {
        Result {
            try store.write(durability: plan.durability) { tx in
                try ModelExecutor.run(plan, base: base, tx: tx, log: log, context: context)
            }
        }
    }

    /// Closes the store, opens it again, and checks the recovery report and the whole state.
    /// `afterClose` runs once the store is closed, before its files are checked and reopened.
    mutating func reopen(_ context: String, afterClose: () throws -> Void = {}) throws {
        counts.reopens += 1
        let before = try store.stats()
        let old = store
        try old.close()
        let refused = #expect(throws: StoreError.self, "\(context): a closed store must refuse reads") {
            try old.read { tx in try tx.get([0x41]) }
        }
        #expect(refused?.code == .closed, "\(context): reading a closed store threw \(String(describing: refused))")
        try afterClose()
        // Closed, so the files are exactly what this reopen reads.
        try assertStoreIsClean(path: path, fileSystem: options.fileSystem, context: "\(context), before reopening")

        store = try Store(path: path, options: options)
        let report = store.recovery
        try #require(
            report.truncatedTail == nil,
            "\(context): the store was closed cleanly, yet recovery cut a torn tail: \(String(describing: report.truncatedTail))")
        #expect(
            report.removedIncompleteSegments.isEmpty,
            "\(context): recovery removed segments \(report.removedIncompleteSegments) after a clean close")
        try #require(
            report.lastSequence == expectedVersion && store.version == expectedVersion,
            "\(context): reopened at version \(store.version) (report \(report.lastSequence)), expected \(expectedVersion)")
        // Reopening loses no log. (close() itself may start one new, empty segment when the
        // current one is past walSegmentBytes, so allow one segment header more.)
        let after = try store.stats()
        #expect(
            !checksWALAcrossReopen
                || after.walSegments >= before.walSegments && after.walSegments <= before.walSegments + 1
                    && after.walBytes >= before.walBytes && after.walBytes <= before.walBytes + 64,
            "\(context): WAL figures changed across reopen: \(before.walSegments) segments / \(before.walBytes) bytes before, \(after.walSegments) / \(after.walBytes) after"
        )
        try checkState(of: store, "\(context) after reopen")
    }

    /// Checks everything a reader of `store` sees against the model: a full scan both ways,
    /// random gets (present and absent keys), a random reverse range and prefix scans.
    mutating func checkState(of store: Store, _ context: String) throws {
        let model = self.model
        let expectedVersion = self.expectedVersion
        let expected = model.range(from: [], to: nil)
        var probes = (0..<5).map { _ in generator.key() }
        if !expected.isEmpty {
            for _ in 0..<3 { probes.append(expected[generator.int(0...(expected.count - 1))].key) }
        }
        let reverseBounds = (from: generator.bound(), to: generator.chance(200) ? nil : generator.bound())
        let prefix = generator.chance(100) ? [0xFF] : generator.shortKey(maxLength: 2)

        try store.read { tx in
            try #require(tx.version == expectedVersion, "\(context): the read is at version \(tx.version), expected \(expectedVersion)")
            let forward = Array(try tx.scan(from: []))
            let forwardSame = forward == expected
            try #require(forwardSame, "\(context): full scan: \(ModelDiff.describe(expected: expected, actual: forward))")
            let backward = Array(try tx.scan(from: [], to: nil, reverse: true))
            let backwardExpected = Array(expected.reversed())
            let backwardSame = backward == backwardExpected
            try #require(backwardSame, "\(context): full reverse scan: \(ModelDiff.describe(expected: backwardExpected, actual: backward))")
            for key in probes {
                let got = try tx.get(key)
                let same = got == model.get(key)
                try #require(
                    same, "\(context): get(\(TestEnvironment.hex(key))) = \(TestEnvironment.hex(got)), expected \(TestEnvironment.hex(model.get(key)))")
            }
            let ranged = Array(try tx.scan(from: reverseBounds.from, to: reverseBounds.to, reverse: true))
            let rangedExpected = model.range(from: reverseBounds.from, to: reverseBounds.to, reverse: true)
            let rangedSame = ranged == rangedExpected
            try #require(
                rangedSame,
                "\(context): reverse scan from \(TestEnvironment.hex(reverseBounds.from)) to \(TestEnvironment.hex(reverseBounds.to)): \(ModelDiff.describe(expected: rangedExpected, actual: ranged))"
            )
            for reverse in [false, true] {
                let got = Array(try tx.scan(prefix: prefix, reverse: reverse))
                let want = model.withPrefix(prefix, reverse: reverse)
                let same = got == want
                try #require(
                    same, "\(context): scan(prefix: \(TestEnvironment.hex(prefix)), reverse: \(reverse)): \(ModelDiff.describe(expected: want, actual: got))")
            }
        }
    }
}

// MARK: - Tests

@Suite struct ModelBasedTests {
    /// Operations per run; STRATA_LONG_TESTS=1 multiplies by ten.
    static let operations = TestEnvironment.scaled(3000)

    static func smallSegmentOptions() -> StoreOptions {
        var options = StoreOptions()
        options.walSegmentBytes = 64 * 1024  // the minimum: segments roll often
        return options
    }

    @Test func modelBasedOnPOSIXFileSystem() async throws {
        let seed = TestEnvironment.seed(0x5EED_0001, test: "modelBasedOnPOSIXFileSystem")
        try await TestEnvironment.withTemporaryDirectory("model") { directory in
            var run = try ModelRun(seed: seed, path: directory + "/store", options: ModelBasedTests.smallSegmentOptions())
            try await run.run(operations: ModelBasedTests.operations)
            try run.store.close()
            try assertStoreIsClean(path: run.path, fileSystem: run.options.fileSystem, context: "seed \(seed) after the last close")
        }
    }

    @Test func modelBasedOnSimulatedFileSystem() async throws {
        let seed = TestEnvironment.seed(0x5EED_0002, test: "modelBasedOnSimulatedFileSystem")
        let fileSystem = SimulatedFileSystem()
        var options = ModelBasedTests.smallSegmentOptions()
        options.fileSystem = fileSystem
        var run = try ModelRun(seed: seed, path: "/model-store", options: options)
        try await run.run(operations: ModelBasedTests.operations)
        try run.store.close()

        // Closed cleanly means durable: a power cut now loses nothing.
        var imageOptions = options
        imageOptions.fileSystem = fileSystem.crashImage(.loseAllUnsynced)
        let image = try Store(path: "/model-store", options: imageOptions)
        #expect(
            image.recovery.truncatedTail == nil && image.version == run.expectedVersion,
            "seed \(seed): after a clean close, a power cut left version \(image.version) (expected \(run.expectedVersion)), tail \(String(describing: image.recovery.truncatedTail))"
        )
        try run.checkState(of: image, "seed \(seed) crash image after clean close")
        try image.close()
        try assertStoreIsClean(path: "/model-store", fileSystem: imageOptions.fileSystem, context: "seed \(seed) crash image after clean close")
    }
}
