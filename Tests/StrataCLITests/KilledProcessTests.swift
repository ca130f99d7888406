import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Kills a real `strata import` process with SIGKILL at random moments and checks what the
/// store kept: every acknowledged record, and otherwise a clean prefix of the input.
///
/// `STRATA_SEED=<n>` replays a run; `STRATA_LONG_TESTS=1` runs more kill rounds.
@Suite("strata import killed mid-write")
struct CrashRecoveryTests {
    /// How the killed import commits: one synced record per transaction, or several
    /// buffered records per transaction, which must survive whole or not at all.
    struct ImportMode: Sendable, CustomTestStringConvertible {
        var batch: Int
        var durability: String
        var testDescription: String { "--batch \(batch) --durability \(durability)" }
    }

    @Test(arguments: [ImportMode(batch: 1, durability: "synced"), ImportMode(batch: 7, durability: "buffered")])
    func killedImportKeepsEveryAcknowledgedRecordAndNothingPartial(mode: ImportMode) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["STRATA_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let rounds = environment["STRATA_LONG_TESTS"] == "1" ? 40 : 8
        var random = SeededRandom(seed: seed)

        try await withTemporaryDirectory { dir in
            let path = dir.path("crash.strata")
            // Records k00000000..k(present-1) are known to be in the store, in `commits`
            // transactions.
            var present = 0
            var commits: UInt64 = 0

            for round in 0..<rounds {
                let context = "seed \(seed) (set STRATA_SEED to replay), \(mode.testDescription), round \(round)"
                let start = present
                let acks = Acks()
                let child = try StrataProcess(
                    ["import", path, "--batch", String(mode.batch), "--durability", mode.durability],
                    onStdout: acks.consume)
                let stop = PipeWriter.Stop()
                let feed = RecordFeed(from: start)
                PipeWriter.start(child.stdin, stop: stop, next: feed.nextChunk)

                // Most rounds kill mid-import; one in four counts from launch, so the kill
                // can also land while the store is being opened and its log replayed.
                let fromLaunch = Int.random(in: 0..<4, using: &random) == 0
                let delay = Int.random(in: 20...300, using: &random)
                let killer = TimedKill(child, afterFirstAck: fromLaunch ? nil : acks, delayMilliseconds: delay)
                let outcome = await killer.outcome()
                stop.set()
                guard try await finishKilled(child, outcome, name: "import", context: context) != nil else { return }
                let acked = start + acks.last

                // Open the store in this process, as recovery after a crash would.
                guard let found = readAfterKill(path, acked: acked, context: context) else { return }
                let recovery = found.recovery
                #expect(found.count >= start, "\(context): the store held \(start) records before this round, now \(found.count); recovery: \(recovery)")
                // Input never ends, so every commit is a full batch: a count between batch
                // boundaries means a transaction was partly applied.
                let added = found.count - start
                #expect(added % mode.batch == 0, "\(context): \(added) records were added, not a whole number of \(mode.batch)-record transactions")
                let expectedSequence = commits + UInt64(max(0, added) / mode.batch)
                #expect(
                    recovery.lastSequence == expectedSequence,
                    "\(context): \(found.count) records should be \(expectedSequence) commits, but recovery ends at sequence \(recovery.lastSequence)")
                guard found.problems.isEmpty, added >= 0, added % mode.batch == 0 else { return }
                present = found.count
                commits = expectedSequence
            }
            #expect(present > 0, "seed \(seed): no record was committed in \(rounds) rounds")
        }
    }
}

/// What a store holds, checked against the records `RecordFeed` sends.
struct StoreContents {
    /// How many entries the store holds, apart from `others`.
    var count: Int
    /// The first few entries that differ from the record of their position.
    var problems: [String]
    var recovery: RecoveryReport
    /// The entries whose keys were passed as `otherKeys`: written by someone else, not
    /// counted as records.
    var others: [[UInt8]: [UInt8]] = [:]

    static func read(_ path: String, otherKeys: Set<[UInt8]> = []) throws -> StoreContents {
        let store = try Store(path: path, options: testStoreOptions)
        defer { try? store.close() }
        var contents = StoreContents(count: 0, problems: [], recovery: store.recovery)
        try store.read { tx in
            for entry in try tx.scan(from: []) {
                if otherKeys.contains(entry.key) {
                    contents.others[entry.key] = entry.value
                    continue
                }
                let index = contents.count
                if entry.key != RecordFeed.key(index) || entry.value != RecordFeed.value(index), contents.problems.count < 5 {
                    contents.problems.append(
                        "entry \(index) is \(String(decoding: entry.key, as: UTF8.self)) = \(String(decoding: entry.value, as: UTF8.self))")
                }
                contents.count += 1
            }
        }
        try store.close()
        return contents
    }
}

/// The import's input: JSON lines for k%08d -> v%08d-<padding>, from a start index on,
/// generated as the writer asks. Padding lengths vary so records straddle WAL blocks and
/// segments at different offsets.
final class RecordFeed: Sendable {
    private let next: Locked<Int>
    private let end: Int

    /// Feeds at most `limit` records, so a round stays small even if the kill comes late
    /// (a busy machine can delay it by seconds). After that it sends nothing but keeps the
    /// pipe open: end of input would let the import exit before it is killed.
    init(from start: Int, limit: Int = 5000) {
        next = Locked(start)
        end = start + limit
    }

    /// About 4 KiB of lines; an empty chunk, after a pause, once the limit is reached.
    func nextChunk() -> [UInt8]? {
        next.withLock { next in
            var chunk: [UInt8] = []
            if next >= end {
                usleep(10_000)
                return chunk
            }
            while chunk.count < 4096 && next < end {
                chunk.append(contentsOf: #"{"key":""#.utf8)
                chunk.append(contentsOf: Self.key(next))
                chunk.append(contentsOf: #"","value":""#.utf8)
                chunk.append(contentsOf: Self.value(next))
                chunk.append(contentsOf: "\"}\n".utf8)
                next += 1
            }
            return chunk
        }
    }

    static func key(_ index: Int) -> [UInt8] {
        Array("k\(digits(index))".utf8)
    }

    static func value(_ index: Int) -> [UInt8] {
        Array("v\(digits(index))-\(String(repeating: "p", count: (index &* 7919) % 211))".utf8)
    }

    private static func digits(_ index: Int) -> String {
        let text = String(index)
        return String(repeating: "0", count: max(0, 8 - text.count)) + text
    }
}

/// Opens a killed child's store in this process, as recovery after a crash would, and checks
/// what every kill test promises: the records are a clean prefix k00000000... holding at
/// least the `acked` ones. Nil, with the issue recorded, when the store cannot be opened.
func readAfterKill(_ path: String, otherKeys: Set<[UInt8]> = [], acked: Int, context: String, detail: String = "") -> StoreContents? {
    let found: StoreContents
    do {
        found = try StoreContents.read(path, otherKeys: otherKeys)
    } catch {
        Issue.record("\(context): reopening the store after the kill failed: \(error)")
        return nil
    }
    let recovery = found.recovery
    #expect(found.problems.isEmpty, "\(context): the store is not the prefix k00000000..k\(found.count - 1): \(found.problems); recovery: \(recovery)")
    #expect(found.count >= acked, "\(context): \(acked) records were acknowledged but only \(found.count) survived\(detail); recovery: \(recovery)")
    return found
}

/// Waits for a child the test killed. Nil, with the issue recorded, unless it was running
/// when the kill came; throws unless it ended on the signal.
@discardableResult
func finishKilled(_ child: StrataProcess, _ outcome: TimedKill.Outcome, name: String, context: String) async throws -> CLIResult? {
    let result: CLIResult
    do {
        result = try await child.finish()
    } catch {
        Issue.record("\(context): \(error)")
        return nil
    }
    switch outcome {
    case .killed:
        break
    case .noAckInTime:
        Issue.record("\(context): the \(name) acknowledged nothing in 20 s: \(result)")
        return nil
    case .exitedEarly:
        Issue.record("\(context): the \(name) exited before it was killed: \(result)")
        return nil
    }
    try #require(result.signaled, "\(context): the \(name) was killed but did not end on a signal: \(result)")
    return result
}

/// Sends SIGKILL (or SIGSTOP) to a child after a delay, timed on its own thread: a test's own sleep can
/// resume late when other tests keep Swift concurrency's few threads busy.
final class TimedKill: Sendable {
    enum Outcome: Sendable {
        /// The child was running when the signal was sent.
        case killed
        /// It was waiting for a first `ack` that never came (it was killed anyway).
        case noAckInTime
        /// The child had already exited.
        case exitedEarly
    }

    private let result = Locked<Outcome?>(nil)

    /// Waits for the first `ack` when `afterFirstAck` is given, then for the delay, then
    /// sends `signal`: SIGKILL, or SIGSTOP to freeze the child (as the system freezes a
    /// suspended app) and kill it later.
    init(_ child: StrataProcess, afterFirstAck acks: Acks?, delayMilliseconds delay: Int, signal: Int32 = SIGKILL) {
        Thread.detachNewThread {
            let outcome = Self.run(child, acks, delay, signal)
            self.result.withLock { $0 = outcome }
        }
    }

    private static func run(_ child: StrataProcess, _ acks: Acks?, _ delay: Int, _ signal: Int32) -> Outcome {
        if let acks {
            let deadline = ContinuousClock.now + .seconds(20)
            while acks.last < 1 && child.isRunning {
                if ContinuousClock.now >= deadline {
                    kill(child.pid, SIGKILL)
                    return .noAckInTime
                }
                usleep(1000)
            }
        }
        usleep(UInt32(delay * 1000))
        guard child.isRunning else { return .exitedEarly }
        kill(child.pid, signal)
        return .killed
    }

    /// The outcome, once the kill (or the decision not to) has happened.
    func outcome() async -> Outcome {
        while true {
            if let outcome = result.withLock({ $0 }) { return outcome }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
