import ArgumentParser
import Foundation

@main
struct StrataBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Measures Strata on the standard workloads and prints ops/s per workload.")

    @Option(help: "Comma-separated workloads: fillsync, syncconc8.")
    var workloads: String = "fillsync,syncconc8"

    @Option(help: "Transactions per synced workload.")
    var num: Int = 1000

    @Option(help: "Directory where the stores are created (a fresh one per workload).")
    var dir: String = NSTemporaryDirectory()

    @Flag(help: "Print one JSON object per result line.")
    var json = false

    @Option(help: "Repeat each workload this many times and keep the median.")
    var repeats: Int = 3

    func run() throws {
        var results: [BenchResult] = []
        for workload in workloads.split(separator: ",").map(String.init) {
            var runs: [BenchResult] = []
            for attempt in 0..<repeats {
                let path = (dir as NSString).appendingPathComponent("strata-bench-\(workload)-\(ProcessInfo.processInfo.processIdentifier)-\(attempt)")
                try? FileManager.default.removeItem(atPath: path)
                defer { try? FileManager.default.removeItem(atPath: path) }
                switch workload {
                case "fillsync": runs.append(try StrataWorkloads.fillsync(directory: path, count: num))
                case "syncconc8": runs.append(try StrataWorkloads.syncconc(directory: path, count: num, threads: 8))
                default: throw ValidationError("unknown workload \(workload)")
                }
            }
            let median = runs.sorted { $0.ops_per_s < $1.ops_per_s }[runs.count / 2]
            results.append(median)
            if json {
                let data = try JSONEncoder().encode(median)
                print(String(decoding: data, as: UTF8.self))
            }
        }
        if !json {
            print("workload      ops      seconds   ops/s")
            for r in results {
                print(r.workload.padding(toLength: 12, withPad: " ", startingAt: 0),
                      String(r.ops).padding(toLength: 8, withPad: " ", startingAt: 0),
                      String(format: "%8.3f", r.seconds),
                      String(format: "%10.0f", r.ops_per_s))
            }
            if let single = results.first(where: { $0.workload == "fillsync" }),
               let concurrent = results.first(where: { $0.workload == "syncconc8" }) {
                print(String(format: "group commit: syncconc8 / fillsync = %.2fx", concurrent.ops_per_s / single.ops_per_s))
            }
        }
    }
}
