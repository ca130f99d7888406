// Fault injection at every file-system operation. A seeded workload that flushes, compacts,
// rolls its WAL and its manifest and reopens once runs on the simulated file system with its
// maintenance inline, so it makes the same operations in the same order on every run. A dry
// run writes them down; then, for every operation and every fault that operation can have
// (SimulatedFileSystem.Fault), the workload runs again with that one operation failing, and
// the run checks what the store promises:
// - every error a call gets is a StoreError: `.io` or `.diskFull` for the call the fault
//   failed, `.readOnly` only for calls after a failed write to the log;
// - a failed write, sync or roll of the log leaves the writer refusing every later write
//   with `.readOnly` until the store is reopened: it never carries on;
// - any other failure (a flush, a compaction, a read, the deletion of an obsolete file, an
//   open or a close) leaves the store serving reads and writes, and a failed flush or
//   compaction is done again later;
// - reads return what the model says or fail with `.io`, never something else;
// - the store holds every acknowledged commit when reopened in place (after the fault, at the
//   workload's own reopen, and at the end) or after the process is killed right after the
//   fault, and every durable commit after a power loss right after the fault, after the
//   first synced commit of a reopen that follows it, or at the end; the verifier finds each
//   of those stores clean.
// Replay a seed with STRATA_SEED=<seed>; STRATA_LONG_TESTS=1 runs more seeds and a longer
// workload.
import Foundation
import StrataIO
import StrataTestSupport
import StrataVerifier
import Synchronization
import Testing

@_spi(Testing) @testable import Strata

// MARK: - Workload

/// A seeded list of store calls: transactions of a few puts and deletes with values of a few
/// hundred bytes to a few KiB, reads and scans, syncs, one `compact()` and one reopen.
struct FaultWorkload {
    struct Transaction {
        var writes: [(key: [UInt8], value: [UInt8]?)]
        var durability: Durability
    }

    enum Step {
        case write(Transaction)
        case get([[UInt8]])
        case scan
        case sync
        case compact
        /// Close the store and open it again.
        case reopen
    }

    var steps: [Step] = []

    init(seed: UInt64, transactions: Int, keys: Int = 80, valueBytes: ClosedRange<Int> = 300...2_500) {
        var random = SeededRandom(seed: seed)
        let compactAfter = transactions * 2 / 5
        let reopenAfter = transactions * 3 / 5
        func key() -> [UInt8] { Array("key-\(Int.random(in: 0..<keys, using: &random))".utf8) }
        for index in 1...transactions {
            var writes: [(key: [UInt8], value: [UInt8]?)] = []
            var touched = Set<[UInt8]>()
            for _ in 0..<Int.random(in: 2...5, using: &random) {
                let chosen = key()
                guard touched.insert(chosen).inserted else { continue }
                if Int.random(in: 0..<6, using: &random) == 0 {
                    writes.append((chosen, nil))
                } else {
                    writes.append((chosen, random.bytes(count: Int.random(in: valueBytes, using: &random))))
                }
            }
            let durability: Durability = Bool.random(using: &random) ? .synced : .buffered
            steps.append(.write(Transaction(writes: writes, durability: durability)))
            switch Int.random(in: 0..<40, using: &random) {
            case 0..<5: steps.append(.get((0..<3).map { _ in key() }))
            case 5..<7: steps.append(.scan)
            case 7..<10: steps.append(.sync)
            default: break
            }
            if index == compactAfter { steps.append(.compact) }
            if index == reopenAfter { steps.append(.reopen) }
        }
    }
}

// MARK: - What the dry run saw

/// The store call a file-system operation belongs to.
enum FaultCall: String, Sendable {
    case open, close, write, read, sync, compact
}

/// What the store was doing when an operation ran, and so what its failure must lead to.
enum FaultCategory: String, Sendable, CaseIterable {
    /// Opening the store: the open fails with a typed error, or copes; either way a second
    /// open works and the store serves.
    case opening
    /// Closing it: the close fails with a typed error, or copes; the next open works.
    case closing
    /// A read or a scan: it fails with `.io`, or returns what the model holds.
    case reading
    /// The writer's own I/O (a WAL write, sync or roll): the call fails, and every later
    /// write is refused with `.readOnly` until the store is reopened.
    case log
    /// A flush or a compaction run inline: the store keeps serving, and a later one of the
    /// same kind succeeds.
    case flush, compaction
    /// Removing a file nothing needs any more: nothing fails.
    case cleanup
    /// Making the next WAL segment ahead of the roll: nothing fails (the roll makes it again).
    case logAhead
}

/// Failpoints and call boundaries of one run, with the file system's operation count at each:
/// the dry run turns them into a category per operation.
final class FaultTrace: Sendable {
    private let events = Locked<[(point: Failpoints.Point, operations: Int)]>([])

    func record(_ point: Failpoints.Point, _ fileSystem: SimulatedFileSystem) {
        let count = fileSystem.totalOperationCount
        events.withLock { $0.append((point, count)) }
    }

    var all: [(point: Failpoints.Point, operations: Int)] { events.withLock { $0 } }
}

/// One operation of the dry run, with what it belongs to.
struct FaultTarget: Sendable {
    var record: SimulatedFileSystem.OperationRecord
    var call: FaultCall
    var category: FaultCategory
}

// MARK: - One run

/// Runs the workload once, with or without a fault, and checks every call's outcome against
/// the model as it goes. `problems` collects what went wrong.
struct FaultRun {
    static let path = "/faults/store"

    let workload: FaultWorkload
    let fileSystem: SimulatedFileSystem
    let trace = FaultTrace()
    /// The operation the fault is aimed at; nil for the dry run.
    let target: FaultTarget?
    let context: String

    private(set) var problems: [String] = []
    /// Call boundaries: the operation count when each call began (the dry run's record).
    private(set) var calls: [(operations: Int, call: FaultCall)] = []

    private var store: Store?
    /// `committed[s]` is the state after commit sequence `s`.
    private var committed: [[[UInt8]: [UInt8]]] = [[:]]
    /// The state a failed commit would have made: the failure may have come after its record
    /// reached the log, so a reopen may find it.
    private var maybe: [[UInt8]: [UInt8]]? = nil
    /// The last sequence promised durable (a synced commit, a sync, a reopen).
    private var durableThrough = 0
    /// A write-path call failed with `.io` or `.diskFull`: later ones may be refused.
    private var writeFailed = false
    /// A write-path call was refused with `.readOnly`: every later one must be too.
    private var refusing = false
    /// The log fault fired: every later write-path call must be refused until the reopen.
    private var mustRefuse = false
    /// Any other fault fired: every later call must work.
    private var mustServe = false
    /// The step during which the fault fired.
    private var faultStep: Int? = nil
    /// What the model promised when the current step began: every acknowledged commit is in
    /// the page cache, every durable one on the disk.
    private var stepStart = (acknowledged: 0, durable: 0)
    /// Crash images taken right after the call during which the fault fired, each with the
    /// commits it must hold; checked once the step is over and the model knows the call's
    /// outcome.
    private var faultImages: [(name: String, image: SimulatedFileSystem, floor: Int)] = []
    /// Set by a reopen after the fault: the power is cut right after the next synced commit,
    /// while the log the reopen replayed is still the only copy of its commits.
    private var imageAfterNextSyncedCommit = false
    private var stepIndex = -1
    /// Flushes and compactions finished in steps after the fault's.
    private var flushesAfter = 0
    private var compactionsAfter = 0
    private var lastCounts = (flushes: 0, compactions: 0)

    init(workload: FaultWorkload, target: FaultTarget?, fault: SimulatedFileSystem.Fault?, context: String) {
        self.workload = workload
        self.target = target
        self.context = context
        fileSystem = SimulatedFileSystem()
        // The store's parent exists and is durable, as an app's container directory is.
        try? fileSystem.createDirectory("/faults")
        try? fileSystem.syncDirectory("/")
        if let target, let fault {
            fileSystem.injectFault(fault, atOperation: target.record.index - fileSystem.totalOperationCount)
        } else {
            fileSystem.recordOperations(true)
        }
    }

    static func options(_ fileSystem: SimulatedFileSystem, trace: FaultTrace?) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.logger.logLevel = .critical
        options.walSegmentBytes = 64 << 10
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        // Segment files written in several stretches each: a fault meets a file half written.
        options.segmentWriteBytes = 16 << 10
        options.level1Bytes = 1 << 20
        options.level0CompactionTrigger = 2
        options.blockCacheBytes = 16 << 10
        // No compression: this test is about I/O, and deflate is slow in debug builds.
        options.compressionFromLevel = nil
        options.manifestRollBytes = 192
        options.runsBackgroundWorkInline = true
        if let trace { options.failpoints = Failpoints { trace.record($0, fileSystem) } }
        return options
    }

    private mutating func problem(_ text: String) {
        problems.append("\(context), step \(stepIndex): \(text)")
    }

    private var fired: Bool {
        if case .fired = fileSystem.faultOutcome { return true }
        return false
    }

    // MARK: Calls

    /// Runs one store call, checks the type and code of its error, and tells whether the
    /// fault fired during it.
    private mutating func perform<T>(_ call: FaultCall, _ body: () throws -> T) -> (result: Result<T, StoreError>, firedNow: Bool)? {
        let firedBefore = fired
        if target == nil { calls.append((fileSystem.totalOperationCount, call)) }
        let result: Result<T, StoreError>
        do {
            result = .success(try body())
        } catch let error as StoreError {
            result = .failure(error)
        } catch {
            problem("\(call) threw \(type(of: error)), not a StoreError: \(error)")
            return nil
        }
        let firedNow = !firedBefore && fired
        if firedNow {
            faultStep = stepIndex
            // The process killed (page cache kept) or the power lost right after the failure.
            faultImages = [
                ("killed right after the fault", fileSystem.crashImage(.keepAll), stepStart.acknowledged),
                ("power lost right after the fault", fileSystem.crashImage(.loseAllUnsynced), stepStart.durable)
            ]
        }
        if case .failure(let error) = result {
            switch error.code {
            case .io, .diskFull:
                if !firedNow { problem("\(call) failed with \(error.code) though no fault fired during it: \(error)") }
                if error.code == .diskFull && error.underlying?.code != .noSpace {
                    problem("\(call) failed with .diskFull without an ENOSPC behind it: \(error)")
                }
            case .readOnly:
                if !writeFailed { problem("\(call) was refused with .readOnly though no write had failed: \(error)") }
            default:
                problem("\(call) failed with \(error.code), expected .io, .diskFull or .readOnly: \(error)")
            }
        }
        return (result, firedNow)
    }

    /// Checks a write-path call (write, sync, compact) against the refusal rules.
    private mutating func checkWritePath<T>(_ call: FaultCall, _ outcome: (result: Result<T, StoreError>, firedNow: Bool)) {
        let category = outcome.firedNow ? target?.category : nil
        switch outcome.result {
        case .success:
            if mustRefuse || refusing { problem("\(call) succeeded after a failed log write: the writer carried on") }
            if category == .log { problem("\(call) succeeded though its log I/O failed") }
        case .failure(let error):
            if error.code == .readOnly {
                refusing = true
                if outcome.firedNow { problem("\(call) got .readOnly for the failure of its own I/O: \(error)") }
            } else {
                writeFailed = true
            }
            if mustRefuse && error.code != .readOnly { problem("\(call) failed with \(error.code) after a failed log write, expected .readOnly") }
            if mustServe { problem("\(call) failed though the store should serve after the earlier fault: \(error)") }
            if let category, category == .flush || category == .compaction || category == .cleanup || category == .logAhead, call != .compact {
                problem("\(call) failed because of a fault in \(category.rawValue), which only compact() may report: \(error)")
            }
        }
        if let category { if category == .log { mustRefuse = true } else { mustServe = true } }
    }

    private var current: [[UInt8]: [UInt8]] { committed[committed.count - 1] }

    private mutating func write(_ transaction: FaultWorkload.Transaction) {
        guard let store else { return }
        guard
            let outcome = perform(
                .write,
                {
                    try store.write(durability: transaction.durability) { tx in
                        for write in transaction.writes {
                            if let value = write.value { try tx.put(write.key, value) } else { try tx.delete(write.key) }
                        }
                    }
                })
        else { return }
        checkWritePath(.write, outcome)
        var next = current
        for write in transaction.writes { next[write.key] = write.value }
        switch outcome.result {
        case .success:
            committed.append(next)
            maybe = nil
            if transaction.durability == .synced {
                durableThrough = committed.count - 1
                if imageAfterNextSyncedCommit {
                    imageAfterNextSyncedCommit = false
                    faultImages.append(("power lost after the first synced commit since the reopen", fileSystem.crashImage(.loseAllUnsynced), durableThrough))
                }
            }
            if store.version != UInt64(committed.count - 1) {
                problem("after commit \(committed.count - 1) the store's version is \(store.version)")
            }
        case .failure(let error):
            // Refused outright, it never reached the log.
            if error.code != .readOnly { maybe = next }
        }
    }

    private mutating func sync() {
        guard let store, let outcome = perform(.sync, { try store.sync() }) else { return }
        checkWritePath(.sync, outcome)
        if case .success = outcome.result { durableThrough = committed.count - 1 }
    }

    private mutating func compact() {
        guard let store, let outcome = perform(.compact, { try store.compact() }) else { return }
        checkWritePath(.compact, outcome)
        if case .success = outcome.result, let stats = try? store.stats(), stats.sealedMemtables != 0 {
            problem("compact() succeeded but \(stats.sealedMemtables) sealed memtables are left")
        }
    }

    private mutating func read(_ keys: [[UInt8]]?) {
        guard let store else { return }
        let expected = current
        let outcome: (result: Result<[[UInt8]: [UInt8]], StoreError>, firedNow: Bool)?
        if let keys {
            outcome = perform(.read) {
                try store.read { (tx: ReadTransaction) throws in
                    var found: [[UInt8]: [UInt8]] = [:]
                    for key in keys { found[key] = try tx.get(key) }
                    return found
                }
            }
        } else {
            outcome = perform(.read) { try Self.contents(of: store) }
        }
        guard let outcome else { return }
        if outcome.firedNow { mustServe = true }
        switch outcome.result {
        case .success(let found):
            let want = keys.map { keys in expected.filter { keys.contains($0.key) } } ?? expected
            if found != want { problem("a read returned \(found.count) entries that differ from the model's \(want.count)") }
        case .failure(let error):
            if error.code != .io || !outcome.firedNow { problem("a read failed with \(error.code): \(error)") }
        }
    }

    static func contents(of store: Store) throws -> [[UInt8]: [UInt8]] {
        try store.read { tx in Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) }) }
    }

    private mutating func close() {
        guard let store else { return }
        self.store = nil
        guard let outcome = perform(.close, { try store.close() }) else { return }
        if case .failure(let error) = outcome.result, error.code == .readOnly {
            problem("close() failed with .readOnly: \(error)")
        }
        if outcome.firedNow { mustServe = true }
    }

    /// Opens the store; after a failure the fault caused, opens it once more. Checks what
    /// it recovered against the model and takes it as the new starting point.
    private mutating func open() -> Bool {
        let options = Self.options(fileSystem, trace: trace)
        var attempt = perform(.open) { try Store(path: Self.path, options: options) }
        if let first = attempt, case .failure = first.result, first.firedNow {
            mustServe = true
            attempt = perform(.open) { try Store(path: Self.path, options: options) }
        }
        guard let attempt else { return false }
        if attempt.firedNow { mustServe = true }
        switch attempt.result {
        case .failure(let error):
            problem("the store did not open: \(error)")
            return false
        case .success(let opened):
            store = opened
            writeFailed = false
            refusing = false
            mustRefuse = false
            lastCounts = (0, 0)
            // A read call of its own: the fault may fail it, and then a second read must work.
            let (committed, maybe) = (self.committed, self.maybe)
            let recheck = { try Self.checkRecovered(opened, committed: committed, maybe: maybe, durableThrough: committed.count - 1) }
            var check = perform(.read, recheck)
            if let first = check, case .failure = first.result, first.firedNow {
                mustServe = true
                check = perform(.read, recheck)
            }
            guard let check else { return false }
            if check.firedNow { mustServe = true }
            switch check.result {
            case .failure(let error):
                problem("reading the reopened store failed: \(error)")
                return false
            case .success(let text?):
                problem("reopened: \(text)")
                return false
            case .success(nil):
                break
            }
            if Int(opened.version) == committed.count, let maybe { self.committed.append(maybe) }
            self.maybe = nil
            durableThrough = self.committed.count - 1
            imageAfterNextSyncedCommit = target != nil && fired
            return true
        }
    }

    /// Whether a freshly opened store holds a state the model allows: every commit up to
    /// `durableThrough` at least, at most the acknowledged ones plus the failed one that may
    /// have reached the log, and exactly the state of the commit it stopped at.
    static func checkRecovered(_ store: Store, committed: [[[UInt8]: [UInt8]]], maybe: [[UInt8]: [UInt8]]?, durableThrough: Int) throws -> String? {
        let version = Int(store.version)
        let acknowledged = committed.count - 1
        let highest = acknowledged + (maybe == nil ? 0 : 1)
        guard version >= durableThrough else { return "recovered version \(version), but commits up to \(durableThrough) were durable" }
        guard version <= highest else { return "recovered version \(version), past the last commit that may exist (\(highest))" }
        let expected = version <= acknowledged ? committed[version] : maybe!
        let state = try contents(of: store)
        if state != expected { return "the state at version \(version) is not the model's (\(state.count) keys, expected \(expected.count))" }
        return nil
    }

    // MARK: The run

    /// The workload, a final compact() and close, then the checks of the closed store.
    mutating func run() {
        stepIndex = -1
        guard step({ $0.open() }) else { return }
        for (index, step) in workload.steps.enumerated() {
            stepIndex = index
            let going = self.step { run in
                switch step {
                case .write(let transaction): run.write(transaction)
                case .get(let keys): run.read(keys)
                case .scan: run.read(nil)
                case .sync: run.sync()
                case .compact: run.compact()
                case .reopen:
                    run.close()
                    return run.open()
                }
                return true
            }
            guard going, problems.count < 3 else { return }
        }
        stepIndex = workload.steps.count
        // A failed flush or compaction must have been done again by now; when this last
        // compact() is the one that fails, the one after it does it again.
        step { $0.compact() }
        if faultStep == stepIndex {
            stepIndex += 1
            step { $0.compact() }
        }
        if target != nil, fired, let category = target?.category {
            if category == .flush && flushesAfter == 0 { problem("no flush succeeded after the failed one") }
            if category == .compaction && compactionsAfter == 0 { problem("no compaction succeeded after the failed one") }
        }
        if !mustRefuse, let maintenance = store?.engine.writing?.maintenance, maintenance.pendingCount != 0 {
            problem("\(maintenance.pendingCount) sealed memtables are still waiting for a flush at the end")
        }
        stepIndex += 1
        step { $0.close() }
        if let target, !fired {
            problem("the fault aimed at \(target.record) did not fire (\(String(describing: fileSystem.faultOutcome)))")
        }
        // Whether the operation creates its file is known only past the point an early fault
        // stops it, so that part of the record is not compared.
        if let target, case .fired(let record) = fileSystem.faultOutcome,
            record.index != target.record.index || record.kind != target.record.kind || record.path != target.record.path
        {
            problem("the fault hit \(record), not \(target.record) as in the dry run")
        }
        guard target != nil else { return }
        checkClosedStore()
    }

    /// Runs one step; then counts its flushes and compactions, and checks the crash images
    /// the fault left, if it fired during the step. Returns what `body` returns.
    @discardableResult
    private mutating func step(_ body: (inout FaultRun) -> Bool) -> Bool {
        stepStart = (committed.count - 1, durableThrough)
        let going = body(&self)
        countMaintenance()
        for (name, image, floor) in faultImages {
            recover(name, image, floor: floor, writeAfter: false)
        }
        faultImages = []
        return going
    }

    private mutating func step(_ body: (inout FaultRun) -> Void) {
        step { run -> Bool in
            body(&run)
            return true
        }
    }

    private mutating func countMaintenance() {
        guard let store, let stats = try? store.stats() else { return }
        // From the fault's own step on: a call may retry the job it failed (compact() flushes
        // what its inline flush could not). A job of the same kind that succeeded earlier in
        // that call would count too; the final compact(), which must succeed, backs this up.
        if let faultStep, stepIndex >= faultStep {
            flushesAfter += stats.flushes - lastCounts.flushes
            compactionsAfter += stats.compactions - lastCounts.compactions
        }
        lastCounts = (stats.flushes, stats.compactions)
    }

    /// Reopens the closed store on the live file system and in the crash image that keeps
    /// only synced data: both hold what the model allows and verify clean, and the live one
    /// takes a new write.
    private mutating func checkClosedStore() {
        let image = fileSystem.crashImage(.loseAllUnsynced)
        fileSystem.clearFaults()
        recover("live", fileSystem, floor: committed.count - 1, writeAfter: true)
        recover("synced data only", image, floor: durableThrough, writeAfter: false)
    }

    /// Opens the store on `disk`, checks it holds what the model allows (commits up to
    /// `floor` at least), optionally writes, closes it, and runs the verifier.
    private mutating func recover(_ name: String, _ disk: SimulatedFileSystem, floor: Int, writeAfter: Bool) {
        do {
            let store = try Store(path: Self.path, options: Self.options(disk, trace: nil))
            if let text = try Self.checkRecovered(store, committed: committed, maybe: maybe, durableThrough: floor) {
                problem("\(name): \(text)")
            }
            if writeAfter {
                try store.write { tx in try tx.put(Array("~after".utf8), Array("yes".utf8)) }
            }
            try store.close()
            let report = try Verifier.verify(path: Self.path, fileSystem: disk)
            for finding in report.findings where finding.severity != .info {
                problem("\(name): the verifier finds \(finding.severity.rawValue) \(finding.code) in \(finding.file): \(finding.message)")
            }
        } catch {
            problem("\(name): recovering the store failed: \(error)")
        }
    }

    // MARK: The dry run's findings

    /// Every operation of this (dry) run with the call and category it belongs to.
    func targets() -> [FaultTarget] {
        let records = fileSystem.recordedOperations
        let events = trace.all
        var callIndex = 0
        var eventIndex = 0
        var job: FaultCategory? = nil
        var result: [FaultTarget] = []
        for record in records {
            while callIndex + 1 < calls.count, calls[callIndex + 1].operations <= record.index {
                callIndex += 1
                job = nil
            }
            guard !calls.isEmpty, calls[callIndex].operations <= record.index else { continue }
            while eventIndex < events.count, events[eventIndex].operations <= record.index {
                switch events[eventIndex].point {
                case .beforeFlush: job = .flush
                case .makingWALSegmentAhead: job = .logAhead
                case .beforeCompaction: job = .compaction
                case .beforeManifestEdit, .beforeManifestInstall, .suspending: break
                case .inlineRoundAdmitted, .beforeWALWrite, .afterWALWriteBeforeSync, .beforePublish, .beforeSegmentRoll: job = nil
                }
                eventIndex += 1
            }
            let call = calls[callIndex].call
            let category: FaultCategory
            switch call {
            case .open: category = .opening
            case .close: category = .closing
            case .read: category = .reading
            case .write, .sync, .compact:
                if let job {
                    category = job
                } else if record.kind == .removeFile {
                    category = .cleanup
                } else {
                    category = .log
                }
            }
            result.append(FaultTarget(record: record, call: call, category: category))
        }
        return result
    }
}

// MARK: - Tests

@Suite("Fault injection at every file-system operation")
struct FaultInjectionTests {
    /// Three seeds of 60 transactions make about 2,400 cases, about a minute on two cores
    /// in a debug build; a longer workload costs more per case as well as more cases, so
    /// more seeds are the cheaper way to more cases.
    static let seeds: [UInt64] = {
        if let seed = TestSeeds.replaySeed { return [seed] }
        return TestSeeds.longTests ? Array(41...46) : [41, 42, 43]
    }()

    static var transactions: Int { TestSeeds.longTests ? 120 : 60 }

    /// The dry run of one seed: its targets, and what the workload did.
    static func dryRun(seed: UInt64) -> (targets: [FaultTarget], run: FaultRun, stats: String) {
        let workload = FaultWorkload(seed: seed, transactions: transactions)
        var run = FaultRun(workload: workload, target: nil, fault: nil, context: "seed \(seed), dry run")
        run.run()
        let targets = run.targets()
        let kinds = Dictionary(grouping: targets, by: \.record.kind).mapValues(\.count)
        let categories = Dictionary(grouping: targets, by: \.category).mapValues(\.count)
        let stats =
            "\(targets.count) operations; by kind \(kinds.sorted { "\($0.key)" < "\($1.key)" }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); by category \(categories.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "))"
        return (targets, run, stats)
    }

    @Test("the workload flushes, compacts, rolls its WAL and manifest, and runs clean")
    func dryRunCoversMaintenance() throws {
        for seed in Self.seeds {
            let (targets, run, stats) = Self.dryRun(seed: seed)
            print("[FaultInjectionTests] seed \(seed): dry run \(stats)")
            #expect(run.problems.isEmpty, "\(run.problems.joined(separator: "\n"))")
            let events = run.trace.all.map(\.point)
            let flushes = events.count { $0 == .beforeFlush }
            let compactions = events.count { $0 == .beforeCompaction }
            let rolls = events.count { $0 == .beforeSegmentRoll }
            let manifestRolls = events.count { $0 == .beforeManifestInstall }
            print("[FaultInjectionTests] seed \(seed): \(flushes) flushes, \(compactions) compactions, \(rolls) WAL rolls, \(manifestRolls) manifest rolls")
            #expect(flushes >= 5, "seed \(seed): too few flushes")
            #expect(compactions >= 3, "seed \(seed): too few compactions")
            #expect(rolls >= 5, "seed \(seed): too few WAL rolls")
            #expect(manifestRolls >= 1, "seed \(seed): the manifest never rolled")
            #expect(targets.contains { $0.record.path.contains("/manifest-") }, "seed \(seed): no manifest operation")
            let categories = Set(targets.map(\.category))
            // Nothing is removed outside a flush or compaction in this workload: no `.cleanup`.
            #expect(categories.isSuperset(of: FaultCategory.allCases.filter { $0 != .cleanup }), "seed \(seed): categories seen \(categories)")
        }
    }

    @Test("fail each operation in turn with each fault it can have", arguments: SimulatedFileSystem.Fault.allCases)
    func failEveryOperation(fault: SimulatedFileSystem.Fault) throws {
        let started = Date()
        var cases = 0
        var failures: [String] = []
        var byCategory: [FaultCategory: Int] = [:]
        for seed in Self.seeds {
            let (targets, dry, _) = Self.dryRun(seed: seed)
            try #require(dry.problems.isEmpty, "seed \(seed): the dry run failed: \(dry.problems.joined(separator: "\n"))")
            for target in targets where target.record.applicableFaults.contains(fault) {
                cases += 1
                byCategory[target.category, default: 0] += 1
                let context = "seed \(seed), \(fault) at \(target.record) (\(target.call), \(target.category.rawValue))"
                var run = FaultRun(workload: dry.workload, target: target, fault: fault, context: context)
                run.run()
                failures.append(contentsOf: run.problems)
                if failures.count >= 10 { break }
            }
        }
        let seconds = Date().timeIntervalSince(started)
        let categories = byCategory.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        print("[FaultInjectionTests] \(fault): \(cases) cases (\(categories)), seeds \(Self.seeds); \(String(format: "%.1f", seconds)) s")
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n")) (replay one with STRATA_SEED=<its seed>)")
    }

    // MARK: Regressions found by the fault matrix

    static func freshFileSystem() throws -> SimulatedFileSystem {
        let fileSystem = SimulatedFileSystem()
        try fileSystem.createDirectory("/faults")
        try fileSystem.syncDirectory("/")
        return fileSystem
    }

    /// Whether the crash image of `fileSystem` that keeps only synced data holds `key` with
    /// `value` in the store at `path`.
    static func survivesPowerLoss(_ fileSystem: SimulatedFileSystem, path: String = FaultRun.path, key: String, value: String) throws -> Bool {
        let image = fileSystem.crashImage(.loseAllUnsynced)
        let store = try Store(path: path, options: FaultRun.options(image, trace: nil))
        defer { try? store.close() }
        return try store.read { try $0.get(Array(key.utf8)) } == Array(value.utf8)
    }

    /// Engine bug: an open that failed while creating the store (its parent directory's sync,
    /// or a sync after the identity file was in place) left the directory behind; the next
    /// open found it and never synced the parent, so it acknowledged synced commits that a
    /// power loss took away with the whole directory. Every directory sync of a creation is
    /// made to fail in turn; the second open's commits must survive.
    @Test("an open that failed while creating the store leaves none of its work undurable")
    func creationRetriedAfterFailedDirectorySync() throws {
        let probe = try Self.freshFileSystem()
        probe.recordOperations(true)
        try Store(path: FaultRun.path, options: FaultRun.options(probe, trace: nil)).close()
        let syncs = probe.recordedOperations.filter { $0.kind == .syncDirectory }.count
        #expect(syncs >= 3)
        for index in 0..<syncs {
            let fileSystem = try Self.freshFileSystem()
            fileSystem.injectFault(.directorySyncError, atOperation: index, countingOnly: [.syncDirectory])
            let failed = #expect(throws: StoreError.self, "directory sync \(index)") {
                _ = try Store(path: FaultRun.path, options: FaultRun.options(fileSystem, trace: nil))
            }
            #expect(failed?.code == .io)
            let store = try Store(path: FaultRun.path, options: FaultRun.options(fileSystem, trace: nil))
            try store.write(durability: .synced) { tx in try tx.put(Array("key".utf8), Array("value".utf8)) }
            // Power fails with the store open, right after the acknowledgement.
            #expect(try Self.survivesPowerLoss(fileSystem, key: "key", value: "value"), "directory sync \(index) failed, then a second open")
            try store.close()
        }
    }

    /// Engine bug: after a failed fdatasync, Linux marks the pages it could not write clean.
    /// The writer stops, as it must, but a reopen in the same boot read the log's lost bytes
    /// from the page cache, "synced" them (a no-op), and appended new commits after them: a
    /// power loss then left a hole in the synced log, and the store no longer opened. The
    /// failed commit here is one whose fdatasync lost its pages.
    @Test("a reopen after a log sync that lost its pages makes the log durable again")
    func reopenAfterSyncLostPages() throws {
        let fileSystem = try Self.freshFileSystem()
        let options = FaultRun.options(fileSystem, trace: nil)
        let store = try Store(path: FaultRun.path, options: options)
        try store.write(durability: .synced) { tx in try tx.put(Array("a".utf8), Array("1".utf8)) }
        try store.write(durability: .buffered) { tx in try tx.put(Array("b".utf8), Array("2".utf8)) }
        fileSystem.injectFault(.syncErrorLosingPages, atOperation: 0, countingOnly: [.sync])
        let failed = #expect(throws: StoreError.self) { try store.write(durability: .synced) { tx in try tx.put(Array("c".utf8), Array("3".utf8)) } }
        #expect(failed?.code == .io)
        try? store.close()
        // The same boot: the page cache still holds b and c, and the reopen reads them.
        let reopened = try Store(path: FaultRun.path, options: options)
        try reopened.write(durability: .synced) { tx in try tx.put(Array("d".utf8), Array("4".utf8)) }
        let state = try FaultRun.contents(of: reopened)
        #expect(state[Array("d".utf8)] == Array("4".utf8) && state[Array("b".utf8)] == Array("2".utf8))
        // Power fails: everything the reopened store read and acknowledged must be on disk.
        let image = fileSystem.crashImage(.loseAllUnsynced)
        let recovered = try Store(path: FaultRun.path, options: FaultRun.options(image, trace: nil))
        #expect(try FaultRun.contents(of: recovered) == state)
        try recovered.close()
        try reopened.close()
    }

    /// The same hole at a store's creation: every fdatasync of the creation loses its pages
    /// in turn (the identity file's, the first log segment's header, the manifest's); the
    /// second open's synced commit must survive a power loss.
    @Test("an open that failed at a sync that lost its pages leaves a store that survives power loss")
    func creationRetriedAfterSyncLostPages() throws {
        let probe = try Self.freshFileSystem()
        probe.recordOperations(true)
        try Store(path: FaultRun.path, options: FaultRun.options(probe, trace: nil)).close()
        let syncs = probe.recordedOperations.filter { $0.kind == .sync }.count
        #expect(syncs >= 3)
        for index in 0..<syncs {
            let fileSystem = try Self.freshFileSystem()
            fileSystem.injectFault(.syncErrorLosingPages, atOperation: index, countingOnly: [.sync])
            _ = try? Store(path: FaultRun.path, options: FaultRun.options(fileSystem, trace: nil))
            let store = try Store(path: FaultRun.path, options: FaultRun.options(fileSystem, trace: nil))
            try store.write(durability: .synced) { tx in try tx.put(Array("key".utf8), Array("value".utf8)) }
            do {
                #expect(try Self.survivesPowerLoss(fileSystem, key: "key", value: "value"), "sync \(index) lost its pages, then a second open")
            } catch {
                Issue.record("sync \(index) lost its pages, then a second open: after a power loss the store does not open: \(error)")
            }
            try store.close()
        }
    }

    /// The same mistake for a directory the caller made: nothing synced its entry in the
    /// parent, so a power loss could take the store with every acknowledged commit.
    @Test("a store opened in an empty directory the caller made survives power loss")
    func storeInCallersDirectory() throws {
        let fileSystem = try Self.freshFileSystem()
        try fileSystem.createDirectory(FaultRun.path)
        let store = try Store(path: FaultRun.path, options: FaultRun.options(fileSystem, trace: nil))
        try store.write(durability: .synced) { tx in try tx.put(Array("key".utf8), Array("value".utf8)) }
        #expect(try Self.survivesPowerLoss(fileSystem, key: "key", value: "value"))
        try store.close()
    }

    /// And for a checkpoint into an empty directory (the caller's, or one a checkpoint that
    /// failed at its first directory sync left): the finished copy was lost to a power loss.
    @Test("a checkpoint into an existing empty directory survives power loss")
    func checkpointIntoExistingDirectory() throws {
        let fileSystem = try Self.freshFileSystem()
        let store = try Store(path: FaultRun.path, options: FaultRun.options(fileSystem, trace: nil))
        defer { try? store.close() }
        try store.write(durability: .synced) { tx in try tx.put(Array("key".utf8), Array("value".utf8)) }
        let copy = "/faults/copy"
        try fileSystem.createDirectory(copy)
        try store.checkpoint(to: copy)
        #expect(try Self.survivesPowerLoss(fileSystem, path: copy, key: "key", value: "value"))
    }
}
