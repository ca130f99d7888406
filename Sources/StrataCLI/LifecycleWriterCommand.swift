import ArgumentParser
import Dispatch
import Foundation
import Strata
import Synchronization

/// `strata lifecycle-writer`: writes numbered records while suspending and resuming the
/// store, so a test (or a person at a terminal) can freeze, kill, or share the store with
/// another process at any moment of the lifecycle and then check what survived.
struct LifecycleWriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lifecycle-writer",
        abstract: "Write numbered records while suspending and resuming the store (for lifecycle tests).",
        discussion: """
            Writes k00000000, k00000001, ... (from --from on), one record per transaction; \
            the value of record i is "v" and i in eight digits, "-", and (i * 7919) % 211 \
            letters "p". After each commit it prints `ack N`, N the records committed by this \
            run, and `retried R` first when the store refused that write R times because it \
            was suspended (such writes are retried).

            With --suspend-every N, a second thread calls suspend() and then resume() after \
            every N commits while writes go on, printing `suspended` and then `resumed \
            unchanged` or `resumed reloaded FROM TO`; every other cycle uses the async \
            suspend(). A resume refused because another process holds the store is retried.

            Without --records it writes until killed. With --records M it stops after M \
            records and closes the store, or with --suspend-and-wait suspends it, prints \
            `suspended`, and waits for commands on standard input, one per line: `resume` \
            (prints `resumed ...`, or `resume refused: CODE: MESSAGE` and stays suspended), \
            `suspend` (prints `suspended`), `write N` (N more records, acknowledged as \
            above; `write refused: CODE: MESSAGE` while suspended). At the end of input it \
            waits to be killed.
            """
    )

    @Argument(help: "The store's directory; created when missing.")
    var path: String

    @Option(help: "How durable each commit is before its `ack`: synced (on disk) or buffered (handed to the OS).")
    var durability: DurabilityOption = .synced

    @Option(help: "The index of the first record to write.")
    var from = 0

    @Option(help: "Suspend and resume the store after every N commits (0: never).")
    var suspendEvery = 0

    @Option(help: "How long each cycle of --suspend-every stays suspended before it resumes, in milliseconds.")
    var suspendedFor = 0

    @Option(help: "Stop after this many records (default: write until killed).")
    var records: Int?

    @Flag(help: "After --records, suspend the store and wait for commands on standard input instead of closing it.")
    var suspendAndWait = false

    @OptionGroup
    var opening: StoreOpeningOptions

    func validate() throws {
        if from < 0 { throw ValidationError("--from must be 0 or more.") }
        if suspendEvery < 0 { throw ValidationError("--suspend-every must be 0 or more.") }
        if suspendedFor < 0 { throw ValidationError("--suspended-for must be 0 or more.") }
        if let records, records < 0 { throw ValidationError("--records must be 0 or more.") }
        if suspendAndWait && records == nil { throw ValidationError("--suspend-and-wait needs --records.") }
    }

    func run() throws {
        var options = opening.storeOptions
        options.createIfMissing = true
        let store = try Store(path: path, options: options)
        let writer = RecordWriter(store: store, next: from, durability: durability.durability)
        let cycler = suspendEvery > 0 ? SuspendCycler(store: store, suspendedFor: suspendedFor) : nil
        do {
            while records.map({ writer.committed < $0 }) ?? true {
                try writer.writeOne(retrying: true)
                if let cycler, writer.committed % suspendEvery == 0 { cycler.request() }
            }
            cycler?.waitUntilIdle()
        } catch {
            try? store.close()
            throw error
        }
        if suspendAndWait {
            try store.suspend()
            Console.printOut("suspended")
            try Self.serveCommands(store, writer)
            Self.waitToBeKilled()
        }
        try store.close()
    }

    /// Runs the standard-input commands until the end of input.
    private static func serveCommands(_ store: Store, _ writer: RecordWriter) throws {
        var reader = LineReader(descriptor: 0)
        while let line = try reader.next() {
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            switch (words.first, words.count) {
            case (nil, _):
                continue
            case ("resume", 1):
                do {
                    Console.printOut(SuspendCycler.describe(try store.resume()))
                } catch let error as StoreError {
                    Console.printOut("resume refused: \(error.code): \(error.message)")
                }
            case ("suspend", 1):
                try store.suspend()
                Console.printOut("suspended")
            case ("write", 2):
                guard let count = Int(words[1]), count >= 0 else { throw CLIError("write needs a count of 0 or more, not \(words[1])") }
                do {
                    for _ in 0..<count { try writer.writeOne(retrying: false) }
                } catch let error as StoreError {
                    Console.printOut("write refused: \(error.code): \(error.message)")
                }
            default:
                throw CLIError("unknown command \(String(decoding: line, as: UTF8.self).debugDescription); expected resume, suspend or write N")
            }
        }
    }

    private static func waitToBeKilled() -> Never {
        while true { sleep(3600) }
    }
}

/// The records `lifecycle-writer` writes, one per transaction, in order.
final class RecordWriter: Sendable {
    private struct State {
        var next: Int
        var committed = 0
    }

    private let store: Store
    private let durability: Durability
    private let state: Mutex<State>

    init(store: Store, next: Int, durability: Durability) {
        self.store = store
        self.durability = durability
        self.state = Mutex(State(next: next))
    }

    /// Records committed so far by this run.
    var committed: Int { state.withLock { $0.committed } }

    /// Writes the next record and prints its `ack`. A write refused because the store is
    /// suspended is retried every half millisecond when `retrying`, and thrown otherwise.
    func writeOne(retrying: Bool) throws {
        let index = state.withLock { $0.next }
        let key = Self.key(index)
        let value = Self.value(index)
        var refusals = 0
        while true {
            do {
                try store.write(durability: durability) { tx in try tx.put(key, value) }
                break
            } catch let error as StoreError where error.code == .suspended && retrying {
                refusals += 1
                usleep(500)
            }
        }
        let committed = state.withLock { state in
            state.next += 1
            state.committed += 1
            return state.committed
        }
        if refusals > 0 { Console.printOut("retried \(refusals)") }
        Console.printOut("ack \(committed)")
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

/// Suspends and resumes the store on its own thread, once per request, while the writer
/// goes on writing (and retrying what the suspension refuses).
final class SuspendCycler: Sendable {
    private struct State {
        var requested = 0
        var finished = 0
    }

    private let store: Store
    private let suspendedFor: Int
    private let requests = DispatchSemaphore(value: 0)
    private let state = Mutex(State())

    /// Each cycle stays suspended `suspendedFor` milliseconds.
    init(store: Store, suspendedFor: Int) {
        self.store = store
        self.suspendedFor = suspendedFor
        Thread.detachNewThread { self.serve() }
    }

    /// Asks for one more suspend-and-resume cycle; does not wait for it.
    func request() {
        state.withLock { $0.requested += 1 }
        requests.signal()
    }

    /// Waits until every requested cycle has finished.
    func waitUntilIdle() {
        while state.withLock({ $0.finished < $0.requested }) { usleep(1000) }
    }

    static func describe(_ outcome: ResumeOutcome) -> String {
        switch outcome {
        case .unchanged: "resumed unchanged"
        case .reloaded(let from, let to): "resumed reloaded \(from) \(to)"
        }
    }

    private func serve() {
        var cycle = 0
        while true {
            requests.wait()
            cycle += 1
            do {
                if cycle % 2 == 0 {
                    try suspendAsynchronously()
                } else {
                    try store.suspend()
                }
                Console.printOut("suspended")
                if suspendedFor > 0 { usleep(UInt32(suspendedFor) * 1000) }
                Console.printOut(Self.describe(try resumeWhenUnlocked()))
            } catch {
                Console.printError("strata: suspend-and-resume cycle \(cycle) failed: \(error)")
                exit(ExitCode.failure.rawValue)
            }
            state.withLock { $0.finished += 1 }
        }
    }

    /// The async `suspend()`, awaited from this thread.
    private func suspendAsynchronously() throws {
        let done = DispatchSemaphore(value: 0)
        let failure = FailureBox()
        let store = self.store
        Task {
            do {
                try await store.suspend()
            } catch {
                failure.record(error)
            }
            done.signal()
        }
        done.wait()
        if let error = failure.error { throw error }
    }

    /// `resume()`, retried while another process holds the lock.
    private func resumeWhenUnlocked() throws -> ResumeOutcome {
        while true {
            do {
                return try store.resume()
            } catch let error as StoreError where error.code == .locked {
                usleep(10_000)
            }
        }
    }
}

/// Carries an error out of a task.
private final class FailureBox: Sendable {
    private let value = Mutex<(any Error)?>(nil)

    var error: (any Error)? { value.withLock { $0 } }

    func record(_ error: any Error) {
        value.withLock { $0 = error }
    }
}
