import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lifecycle API (`suspend()`, `resume()`) in real processes: `strata lifecycle-writer`
/// children are frozen with SIGSTOP and killed with SIGKILL, and other processes open the
/// store while they are suspended.
///
/// `STRATA_SEED=<n>` replays a run; `STRATA_LONG_TESTS=1` runs more rounds.
@Suite("strata lifecycle-writer: suspension across processes")
struct LifecycleProcessTests {
    /// The key `strata put` writes from another process; not one of the writer's records.
    static let otherKey = "put-by-another-process"

    @Test(arguments: ["synced", "buffered"])
    func frozenAndKilledWhileCyclingKeepsEveryAcknowledgedRecord(durability: String) async throws {
        let (seed, long) = Self.seedAndLength()
        let rounds = long ? 40 : 10
        var random = SeededRandom(seed: seed)

        try await withTemporaryDirectory { dir in
            let path = dir.path("cycling.strata")
            // Records k00000000..k(present-1) are known to be in the store.
            var present = 0
            // What `strata put` wrote while a writer was frozen with the store unlocked.
            var others: [[UInt8]: [UInt8]] = [:]
            var cycles = 0
            var retries = 0
            var frozenUnlocked = 0
            for round in 0..<rounds {
                let suspendEvery = Int.random(in: 2...12, using: &random)
                // Cycles that stay suspended a while make freezes find the store unlocked.
                let suspendedFor = [0, 0, 2, 5, 10].randomElement(using: &random)!
                let context =
                    "seed \(seed) (set STRATA_SEED to replay), --durability \(durability), round \(round), --suspend-every \(suspendEvery) --suspended-for \(suspendedFor)"
                let start = present
                let acks = Acks()
                let lines = OutputLines()
                let child = try StrataProcess(
                    [
                        "lifecycle-writer", path, "--durability", durability, "--from", String(start), "--suspend-every", String(suspendEvery),
                        "--suspended-for", String(suspendedFor),
                        // Small memtables: flushes and compactions run often, so suspensions
                        // and kills land in them.
                        "--memtable-bytes", "65536"
                    ],
                    onStdout: { bytes in
                        acks.consume(bytes)
                        lines.consume(bytes)
                    })
                defer { Self.stop(child) }
                // One round in four counts the delay from launch, so the freeze can land while
                // the store is opened and its log replayed.
                let fromLaunch = Int.random(in: 0..<4, using: &random) == 0
                let delay = Int.random(in: 10...250, using: &random)
                let freezer = TimedKill(child, afterFirstAck: fromLaunch ? nil : acks, delayMilliseconds: delay, signal: SIGSTOP)
                let outcome = await freezer.outcome()
                if outcome == .killed {
                    // Frozen, as the system freezes an app. Holding the lock or not, the store
                    // must never be half-written: checked by another process, and written by
                    // one when the frozen writer has left it unlocked (suspended).
                    let check = try await strataFsck(path)
                    if check.status == 8 {
                        #expect(
                            check.errorText.contains("lock file \(path)/LOCK") || start == 0,
                            "\(context): strata-fsck on the frozen writer's store: \(check)")
                    } else {
                        frozenUnlocked += 1
                        #expect(check.status == 0, "\(context): the writer was frozen with the store unlocked, which must be clean: \(check)")
                        let key = "put-in-round-\(round)"
                        let put = try await strata("put", path, key, "while frozen")
                        #expect(put.status == 0, "\(context): strata put while the writer is frozen with the store unlocked: \(put)")
                        if put.status == 0 { others[Array(key.utf8)] = Array("while frozen".utf8) }
                    }
                    kill(child.pid, SIGKILL)
                }
                guard try await finishKilled(child, outcome, name: "writer", context: context) != nil else { return }
                let acked = start + acks.last
                let resumes = lines.all.filter { $0.hasPrefix("resumed") }
                cycles += resumes.count
                retries += lines.all.compactMap { $0.hasPrefix("retried ") ? Int($0.dropFirst(8)) : nil }.reduce(0, +)
                #expect(
                    resumes.allSatisfy { $0 == "resumed unchanged" },
                    "\(context): no other process touched the store while the writer ran, yet a resume reloaded it: \(resumes)")

                guard
                    let found = readAfterKill(
                        path, otherKeys: Set(others.keys), acked: acked, context: context, detail: " (last lines: \(lines.all.suffix(6)))")
                else { return }
                let recovery = found.recovery
                #expect(found.count >= start, "\(context): the store held \(start) records before this round, now \(found.count); recovery: \(recovery)")
                #expect(found.others == others, "\(context): what other processes wrote while writers were frozen: \(found.others)")
                // One record per transaction: a write refused with `.suspended` (and retried)
                // that had in fact committed would show as an extra sequence.
                let transactions = found.count + others.count
                #expect(
                    recovery.lastSequence == UInt64(transactions),
                    "\(context): \(transactions) one-record transactions should end at sequence \(transactions), but recovery ends at \(recovery.lastSequence)")
                guard found.problems.isEmpty, found.count >= start else { return }
                present = found.count
            }
            #expect(present > 0, "seed \(seed): no record was committed in \(rounds) rounds")
            #expect(cycles > 0, "seed \(seed): no suspend-and-resume cycle finished in \(rounds) rounds")
            let stats = try Self.stats(path)
            print(
                "lifecycle-writer --durability \(durability), seed \(seed): \(present) records, \(cycles) suspend cycles, \(retries) refused writes retried, \(frozenUnlocked) of \(rounds) freezes found the store unlocked; "
                    + "the store ends with \(stats.segmentFiles) segment files, levels \(stats.levels.filter { $0.files > 0 }.map { "L\($0.level):\($0.files)" })"
            )
        }
    }

    @Test func suspendedWriterLetsAnotherProcessWriteAndKeepsItsBufferedCommits() async throws {
        let (seed, long) = Self.seedAndLength()
        var random = SeededRandom(seed: seed)
        for round in 0..<(long ? 10 : 2) {
            let records = Int.random(in: 1...3000, using: &random)
            let value = "value \(UInt32.random(in: 0...UInt32.max, using: &random))"
            let context = "seed \(seed) (set STRATA_SEED to replay), round \(round), \(records) buffered records"
            try await withTemporaryDirectory { dir in
                let path = dir.path("shared.strata")
                let acks = Acks()
                let lines = OutputLines()
                let child = try Self.waitingWriter(path, records: records, durability: "buffered", acks: acks, lines: lines)
                defer { Self.stop(child) }
                _ = try await lines.waitForLine(from: 0, in: child, context) { $0 == "suspended" }
                #expect(acks.last == records, "\(context): \(acks.last) acknowledged before suspending")

                // Another process opens the store, sees the suspended writer's last buffered
                // commit, and writes.
                let put = try await strata("put", path, Self.otherKey, value)
                #expect(put.status == 0, "\(context): strata put on a store suspended by another process: \(put)")
                let get = try await strata("get", path, String(decoding: RecordFeed.key(records - 1), as: UTF8.self))
                #expect(get.status == 0 && get.stdout == RecordFeed.value(records - 1) + [0x0A], "\(context): \(get)")
                #expect(child.isRunning, "\(context): the suspended writer ended: \(lines.all.suffix(5))")

                kill(child.pid, SIGKILL)
                let result = try await child.finish()
                #expect(result.signaled, "\(context): \(result)")
                let found = try StoreContents.read(path, otherKeys: [Array(Self.otherKey.utf8)])
                #expect(found.problems.isEmpty, "\(context): \(found.problems)")
                #expect(found.count == records, "\(context): \(records) records were acknowledged, \(found.count) survived; recovery: \(found.recovery)")
                #expect(found.others == [Array(Self.otherKey.utf8): Array(value.utf8)], "\(context): the other process's write: \(found.others)")
                #expect(found.recovery.lastSequence == UInt64(records + 1), "\(context): recovery: \(found.recovery)")
            }
        }
    }

    @Test func aHeldLockIsNamedAndASuspendedStoreCanBeChecked() async throws {
        let (seed, _) = Self.seedAndLength()
        var random = SeededRandom(seed: seed)
        let records = Int.random(in: 1...3000, using: &random)
        let context = "seed \(seed) (set STRATA_SEED to replay), \(records) records"
        try await withTemporaryDirectory { dir in
            let path = dir.path("checked.strata")
            let lockPath = path + "/LOCK"
            let acks = Acks()
            let lines = OutputLines()
            let child = try Self.waitingWriter(path, records: records, durability: "buffered", acks: acks, lines: lines)
            defer { Self.stop(child) }
            var seen = try await lines.waitForLine(from: 0, in: child, context) { $0 == "suspended" }
            try child.stdin.write(contentsOf: Data("resume\n".utf8))
            seen = try await lines.waitForLine(from: seen + 1, in: child, context) { $0.hasPrefix("resume") }
            #expect(lines.all[seen] == "resumed unchanged", "\(context)")

            // Active: the writer holds the lock, and both tools say which file is locked.
            let put = try await strata("put", path, Self.otherKey, "refused")
            #expect(put.status == 1, "\(context): strata put while another process has the store open: \(put)")
            #expect(put.errorLines.count == 1 && put.errorText.hasPrefix("strata: locked: "), "\(context): \(put)")
            #expect(put.errorText.contains(lockPath) && put.errorText.contains("in use by another"), "\(context): \(put)")
            let busy = try await strataFsck(path)
            #expect(busy.status == 8, "\(context): strata-fsck on a store open elsewhere exits 8: \(busy)")
            #expect(busy.stdout.isEmpty, "\(context): \(busy)")
            #expect(busy.errorText.hasPrefix("strata-fsck: ") && busy.errorText.contains("lock file \(lockPath)"), "\(context): \(busy)")

            // Suspended: fsck takes the lock itself and finds the store clean.
            try child.stdin.write(contentsOf: Data("suspend\n".utf8))
            seen = try await lines.waitForLine(from: seen + 1, in: child, context) { $0 == "suspended" }
            let checked = try await strataFsck(path)
            #expect(checked.status == 0, "\(context): strata-fsck on a store suspended by another process: \(checked)")
            #expect(checked.output.contains(": clean ("), "\(context): \(checked)")
            // It released the lock: the writer can resume and write again.
            try child.stdin.write(contentsOf: Data("resume\nwrite 2\n".utf8))
            seen = try await lines.waitForLine(from: seen + 1, in: child, context) { $0.hasPrefix("resume") }
            #expect(lines.all[seen] == "resumed unchanged", "\(context)")
            let wrote = await lines.next(from: seen + 1, in: child) { $0 == "ack \(records + 2)" }
            #expect(wrote != nil, "\(context): the writer did not write after fsck: \(lines.all.suffix(5)) \(child.stderrReader.bytes)")

            kill(child.pid, SIGKILL)
            _ = try await child.finish()
            let found = try StoreContents.read(path)
            #expect(found.problems.isEmpty && found.count == records + 2, "\(context): \(found.count) records, \(found.problems)")
        }
    }

    @Test func resumeIsRefusedWhileLockedAndReloadsWhatAnotherProcessWrote() async throws {
        let (seed, _) = Self.seedAndLength()
        var random = SeededRandom(seed: seed)
        let records = Int.random(in: 1...200, using: &random)
        let more = Int.random(in: 1...50, using: &random)
        let context = "seed \(seed) (set STRATA_SEED to replay), \(records) + \(more) records"
        try await withTemporaryDirectory { dir in
            let path = dir.path("reloaded.strata")
            let acks = Acks()
            let lines = OutputLines()
            let child = try Self.waitingWriter(path, records: records, durability: "buffered", acks: acks, lines: lines)
            defer { Self.stop(child) }
            var seen = try await lines.waitForLine(from: 0, in: child, context) { $0 == "suspended" }

            // Someone else holds the lock: resume() refuses at once, and the store stays
            // suspended.
            let lock = try POSIXFileSystem().lockFile(path + "/LOCK")
            try child.stdin.write(contentsOf: Data("resume\nwrite 1\n".utf8))
            seen = try await lines.waitForLine(from: seen + 1, in: child, context) { $0.hasPrefix("resume") }
            #expect(lines.all[seen].hasPrefix("resume refused: locked: ") && lines.all[seen].contains(path + "/LOCK"), "\(context): \(lines.all[seen])")
            seen = try await lines.waitForLine(from: seen + 1, in: child, context) { $0.hasPrefix("write") || $0.hasPrefix("ack") }
            #expect(lines.all[seen].hasPrefix("write refused: suspended: "), "\(context): \(lines.all[seen])")
            try lock.unlock()

            // Another process writes; the writer's resume reloads and goes on from there.
            let put = try await strata("put", path, Self.otherKey, "from elsewhere")
            #expect(put.status == 0, "\(context): \(put)")
            try child.stdin.write(contentsOf: Data("resume\nwrite \(more)\n".utf8))
            seen = try await lines.waitForLine(from: seen + 1, in: child, context) { $0.hasPrefix("resume") }
            #expect(lines.all[seen] == "resumed reloaded \(records) \(records + 1)", "\(context): \(lines.all[seen])")
            let wrote = await lines.next(from: seen + 1, in: child) { $0 == "ack \(records + more)" }
            #expect(wrote != nil, "\(context): the writer did not write after reloading: \(lines.all.suffix(5)) \(child.stderrReader.bytes)")
            let second = try await strata("put", path, Self.otherKey, "from elsewhere")
            #expect(second.status == 1 && second.errorText.contains("locked"), "\(context): the resumed writer holds the lock again: \(second)")
            // A command that only reads opens the store read-only, beside the writer.
            let get = try await strata("get", path, Self.otherKey)
            #expect(get.status == 0 && get.output == "from elsewhere\n", "\(context): \(get)")

            kill(child.pid, SIGKILL)
            _ = try await child.finish()
            let found = try StoreContents.read(path, otherKeys: [Array(Self.otherKey.utf8)])
            #expect(found.problems.isEmpty, "\(context): \(found.problems)")
            #expect(
                found.count == records + more, "\(context): \(records + more) records were acknowledged, \(found.count) survived; recovery: \(found.recovery)")
            #expect(found.others == [Array(Self.otherKey.utf8): Array("from elsewhere".utf8)], "\(context): \(found.others)")
            #expect(found.recovery.lastSequence == UInt64(records + more + 1), "\(context): recovery: \(found.recovery)")
        }
    }

    // MARK: Helpers

    static func seedAndLength() -> (seed: UInt64, long: Bool) {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["STRATA_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        return (seed, environment["STRATA_LONG_TESTS"] == "1")
    }

    static func stats(_ path: String) throws -> StoreStats {
        let store = try Store(path: path, options: testStoreOptions)
        defer { try? store.close() }
        return try store.stats()
    }

    /// Kills a child that a failed check left running (or frozen), so none outlives the test.
    static func stop(_ child: StrataProcess) {
        if child.isRunning { kill(child.pid, SIGKILL) }
        // Lets Foundation release the process (see `StrataProcess.finish`); quick, it has ended.
        child.process.waitUntilExit()
    }

    /// Starts a writer that commits `records` records, suspends the store and waits for
    /// commands on its stdin.
    static func waitingWriter(_ path: String, records: Int, durability: String, acks: Acks, lines: OutputLines) throws -> StrataProcess {
        try StrataProcess(
            ["lifecycle-writer", path, "--durability", durability, "--records", String(records), "--suspend-and-wait", "--memtable-bytes", "65536"],
            onStdout: { bytes in
                acks.consume(bytes)
                lines.consume(bytes)
            })
    }
}

/// Every complete line a child printed on stdout, in order.
final class OutputLines: Sendable {
    private let state = Locked<(pending: [UInt8], lines: [String])>(([], []))

    var all: [String] { state.withLock { $0.lines } }

    func consume(_ bytes: [UInt8]) {
        state.withLock { state in
            state.pending.append(contentsOf: bytes)
            while let newline = state.pending.firstIndex(of: 0x0A) {
                state.lines.append(String(decoding: state.pending[..<newline], as: UTF8.self))
                state.pending.removeSubrange(...newline)
            }
        }
    }

    /// The index of the first line at `index` or later that `matches`; throws when none came
    /// within `timeout`, or the child ended without printing one.
    func waitForLine(from index: Int, in child: StrataProcess, _ context: String, timeout: Duration = .seconds(30), where matches: (String) -> Bool)
        async throws -> Int
    {
        guard let found = await next(from: index, in: child, timeout: timeout, where: matches) else {
            throw MissingLine(context: context, lines: all, stderr: child.stderrReader.bytes, running: child.isRunning)
        }
        return found
    }

    /// The index of the first line at `index` or later that `matches`; nil when none came
    /// within `timeout`, or the child ended without printing one.
    func next(from index: Int, in child: StrataProcess, timeout: Duration = .seconds(30), where matches: (String) -> Bool) async -> Int? {
        func find() -> Int? {
            let lines = all
            guard index < lines.count else { return nil }
            return lines[index...].firstIndex(where: matches)
        }
        _ = await waitUntil(timeout: timeout) { find() != nil || (!child.isRunning && child.stdoutReader.isFinished) }
        return find()
    }
}

/// A line a child was expected to print and did not.
struct MissingLine: Error, CustomStringConvertible {
    var context: String
    var lines: [String]
    var stderr: [UInt8]
    var running: Bool

    var description: String {
        "\(context): the expected line did not come; the child \(running ? "is still running" : "ended"), its last lines: \(lines.suffix(6)), stderr: \(String(decoding: stderr, as: UTF8.self).debugDescription)"
    }
}
