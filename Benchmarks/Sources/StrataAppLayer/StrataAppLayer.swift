// Figures for the app-facing layer, each against its own baseline in the same run:
// - commit throughput (one thread, single-put `.buffered` transactions) with 100 observations
//   on ranges the commits never touch, against none: the cost of the commit hook;
// - the time of `checkpoint(to:)` on a store of `--num` keys, against copying its files.
//
//   swift run -c release --package-path Benchmarks strata-app-layer --num 1000000
//
// The two throughput configurations alternate, `--rounds` times each, so drift on a shared
// machine hits both alike; the medians and their ratio are printed.
import ArgumentParser
import Dispatch
import Foundation
import Strata
import Synchronization

@main
struct StrataAppLayer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-app-layer", abstract: "Observation overhead on commits, and checkpoint time.")

    @Option(help: "Directory for the stores (fresh subdirectories are created and removed).")
    var dir: String = NSTemporaryDirectory()

    @Option(help: "Keys in the store that is checkpointed.")
    var num: Int = 1_000_000

    @Option(help: "Single-put commits per throughput round.")
    var commits: Int = 50_000

    @Option(help: "Rounds of each throughput configuration.")
    var rounds: Int = 5

    mutating func run() async throws {
        let base = (dir as NSString).appendingPathComponent("strata-app-layer-\(getpid())")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }

        var without: [Double] = []
        var with: [Double] = []
        for round in 0..<rounds {
            without.append(try await Self.commitRate(path: "\(base)/plain-\(round)", commits: commits, observers: 0))
            with.append(try await Self.commitRate(path: "\(base)/observed-\(round)", commits: commits, observers: 100))
        }
        let plain = median(without)
        let observed = median(with)
        print("commits/s, no observers:            \(Int(plain))  (rounds: \(without.map { Int($0) }))")
        print("commits/s, 100 unrelated observers: \(Int(observed))  (rounds: \(with.map { Int($0) }))")
        print(String(format: "ratio observed/plain: %.3f", observed / plain))

        let (checkpoint, copy) = try Self.checkpointTimes(base: base, num: num)
        print(String(format: "checkpoint of %d keys: %.3f s; cp -R of the same directory: %.3f s", num, checkpoint, copy))
    }

    private static func options() -> StoreOptions {
        var options = StoreOptions()
        options.logger.logLevel = .critical
        return options
    }

    /// Commits per second of one thread writing single puts, with `observers` observations
    /// of prefixes no commit writes, each consumed by a task of its own.
    private static func commitRate(path: String, commits: Int, observers: Int) async throws -> Double {
        let store = try Store(path: path, options: options())
        var consumers: [Task<Void, Never>] = []
        let ready = Counter()
        for i in 0..<observers {
            let observed: StoreIO<ReadOnly, [Entry]> = .scan(prefix: Array("observed/\(i)/".utf8))
            consumers.append(
                Task {
                    for await _ in store.observe(observed) { ready.value.add(1, ordering: .relaxed) }
                })
        }
        // The clock starts once every observation has delivered its first value: what is
        // measured is commits beside registered observers, not their first evaluations.
        while ready.value.load(ordering: .relaxed) < observers { try await Task.sleep(for: .milliseconds(1)) }
        let start = DispatchTime.now()
        try write(store, commits)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        for consumer in consumers { consumer.cancel() }
        try store.close()
        try? FileManager.default.removeItem(atPath: path)
        return Double(commits) / elapsed
    }

    /// Kept out of the async context, whose overloads of `write` suspend.
    private static func write(_ store: Store, _ commits: Int) throws {
        let value = [UInt8](repeating: 0x5A, count: 100)
        for i in 0..<commits {
            try store.write(durability: .buffered) { tx in try tx.put(Array(String(format: "k%010d", i).utf8), value) }
        }
    }

    /// Seconds for `checkpoint(to:)` of a store of `num` keys (a part still in memory, as in
    /// use), and for copying the same directory byte by byte.
    private static func checkpointTimes(base: String, num: Int) throws -> (Double, Double) {
        let path = "\(base)/source"
        let store = try Store(path: path, options: options())
        let value = [UInt8](repeating: 0xA5, count: 100)
        for start in stride(from: 0, to: num, by: 1000) {
            try store.write(durability: .buffered) { tx in
                for i in start..<min(start + 1000, num) { try tx.put(Array(String(format: "k%010d", i).utf8), value) }
            }
        }
        let start = DispatchTime.now()
        try store.checkpoint(to: "\(base)/checkpoint")
        let checkpoint = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        try store.close()
        let copyStart = DispatchTime.now()
        try FileManager.default.copyItem(atPath: path, toPath: "\(base)/copy")
        let copy = Double(DispatchTime.now().uptimeNanoseconds - copyStart.uptimeNanoseconds) / 1e9
        return (checkpoint, copy)
    }
}

private final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}
