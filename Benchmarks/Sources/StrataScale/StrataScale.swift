import ArgumentParser
import Foundation
import StrataBenchmarkKit

/// How Strata holds up at scale, through its public API only: memory while loading N keys,
/// the time to reopen, random reads at N against a smaller store, and the space left after
/// overwriting every key once on average and compacting. Figures on stdout (or JSON with
/// --json, the readable lines then going to stderr), progress on stderr.
@main
struct StrataScale: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-scale",
        abstract: "Measures Strata at scale: load memory, reopen time, readrandom at N vs a small store, space after overwrite + compact.",
        discussion: """
            Steps: 1 load N keys (random order, 1000 puts per write, .buffered, one sync), \
            sampling RSS every 100k puts; 2 close and reopen 3 times; 3 readrandom; \
            4 the same at --small keys; 5 overwrite N random keys, compact, measure the directory.

            Keys are 16 digits, values 100 incompressible bytes (shared/bench/WORKLOADS.md); every \
            value read is checked byte for byte. MB = 10^6 bytes.

            Checks: peak RSS during the load < 400 MB; readrandom(N) >= 60% of readrandom(small); \
            reopen (median) < 1 s; directory after overwrite + compact <= 1.5 x live data \
            (N x 116 bytes).

            Exit status: 0 every check passed; 1 a check failed or could not run (compact() \
            failing marks step 5 "not run"); 2 a read returned a wrong value, or the engine \
            failed in steps 1-4.
            """)

    @Option(help: "Directory for the stores, left in place afterwards (default: a fresh temporary directory, removed after).")
    var dir: String?

    @Option(help: "N: keys of the large store, and puts of overwrite.")
    var num: Int = 10_000_000

    @Option(help: "Keys of the small store readrandom(N) is compared with.")
    var small: Int = 1_000_000

    @Option(help: "Random gets per readrandom measurement (default: as many as the store holds keys, as readrandom in WORKLOADS.md does).")
    var reads: Int?

    @Option(help: "Seed of every key order, value and random pick.")
    var seed: UInt64 = BenchmarkSettings().seed

    @Flag(help: "Print one JSON object per step on stdout (the readable lines go to stderr).")
    var json = false

    @Flag(help: "Only time readrandom on the stores an earlier run left in --dir (for profiling reads).")
    var readsOnly = false

    func validate() throws {
        guard num > 0, small > 0, reads.map({ $0 > 0 }) ?? true else { throw ValidationError("--num, --small and --reads must be positive") }
        guard num <= Int(UInt32.max), small <= Int(UInt32.max) else {
            throw ValidationError("--num and --small must be at most \(UInt32.max)")
        }
        if small >= num { Console.progress("warning: --small (\(small)) is not smaller than --num (\(num))") }
    }

    func run() throws {
        let root: String
        if let dir {
            root = dir
        } else {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("strata-scale-\(UUID().uuidString)").path
        }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer {
            if dir == nil { try? FileManager.default.removeItem(atPath: root) }
        }

        let run = ScaleRun(root: root, num: num, small: small, reads: reads,
                           data: ScaleData(seed: seed), reporter: Reporter(json: json))
        if readsOnly {
            guard dir != nil else { throw ValidationError("--reads-only needs --dir, holding an earlier run's stores") }
            try run.readsOnly()
            return
        }
        let checks: [Check]
        do {
            checks = try run.execute()
        } catch let wrong as WrongValue {
            Console.progress("strata-scale FAILED: \(wrong)")
            throw ExitCode(2)
        } catch let failure as StepFailure {
            Console.progress("strata-scale FAILED: \(failure)")
            throw ExitCode(2)
        }
        if !checks.allSatisfy(\.passed) { throw ExitCode(1) }
    }
}

/// The engine (or the file system) failed during a step that cannot go on without it.
struct StepFailure: Error, CustomStringConvertible {
    var step: String
    var underlying: any Error

    var description: String { "\(step): \(underlying)" }
}
