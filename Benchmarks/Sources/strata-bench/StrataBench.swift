import ArgumentParser
import Dispatch
import Foundation
import StrataBenchmarkKit

/// The comparison: every standard workload on Strata and on its peers, side by side in one
/// run (shared/bench/WORKLOADS.md). Results on stdout, progress on stderr.
@main
struct StrataBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Measures Strata and its peers (SQLite, LMDB, LevelDB, RocksDB) on the standard workloads.",
        discussion: """
            Workloads: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).
            Every answer is checked; a wrong one fails the run. A peer whose library is missing \
            is skipped with the Debian package to install.
            """)

    @Option(help: "Comma-separated engines: \(EngineCatalog.names.joined(separator: ", ")), or all.")
    var engines: String = "all"

    @Option(help: "Comma-separated workloads, or all.")
    var workloads: String = "all"

    @Option(help: "N: keys per fill, gets per read, puts of overwrite (N/10 for fillsingle and the 1k rows).")
    var num: Int = 1_000_000

    @Option(help: "Directory for the stores, left in place afterwards (default: a fresh temporary directory, removed after).")
    var dir: String?

    @Flag(help: "Print one JSON object per result line instead of the table.")
    var json = false

    @Option(help: "Also append each result's JSON line to this file, beside the table (input for strata-chart).")
    var jsonFile: String? = nil

    @Flag(
        help: """
            Measure instead how many durable commits the disk under --dir allows (no engine), for 1 and 8 commits per \
            fdatasync, and 8 threads sharing each fdatasync, asleep or polling while they wait.
            """)
    var syncProbe = false

    func validate() throws {
        guard num > 0 else { throw ValidationError("--num must be positive") }
    }

    func run() throws {
        let chosenWorkloads: [Workload]
        do {
            chosenWorkloads = try Workload.parseList(workloads)
        } catch {
            throw ValidationError(error.description)
        }
        let chosenEngines = try EngineCatalog.parseList(engines)

        let root: String
        if let dir {
            root = dir
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        } else {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        }
        defer {
            if dir == nil { try? FileManager.default.removeItem(atPath: root) }
        }

        if syncProbe {
            // A record as syncconc8 logs it: a 16-byte key, a 100-byte value and framing.
            for figure in try SyncProbe.run(directory: root, writers: 8, recordBytes: 140, seconds: 3) {
                let layout = figure.layout.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
                Console.output(
                    "sync probe: \(layout) "
                        + (figure.layout == .threads || figure.layout == .polling
                            ? "\(figure.commitsPerSync) threads sharing each fdatasync: "
                            : "\(figure.commitsPerSync) commit(s) per fdatasync: ")
                        + String(format: "%8.0f fdatasync/s, %8.0f commits/s", figure.syncsPerSecond, figure.commitsPerSecond))
            }
            return
        }

        var loaded: [any BenchmarkEngine] = []
        var skipped: [(name: String, reason: String)] = []
        for name in chosenEngines {
            do {
                loaded.append(try EngineCatalog.make(name))
            } catch {
                Console.progress("warning: \(error)")
                skipped.append((name, "\(error)"))
            }
        }

        let settings = BenchmarkSettings(keyCount: num)
        let runner = BenchmarkRunner(
            settings: settings, directory: root, removeStores: dir == nil,
            progress: { Console.progress($0) })
        Console.progress(
            "strata-bench: N = \(num), workloads \(chosenWorkloads.map(\.rawValue).joined(separator: ",")), "
                + "engines \(loaded.map(\.name).joined(separator: ","))")
        let start = DispatchTime.now().uptimeNanoseconds
        var results: [BenchmarkResult] = []
        var failures: [String] = []
        for engine in loaded {
            do {
                try runner.run(engine, workloads: chosenWorkloads) { result in
                    results.append(result)
                    var line = result
                    line.num = num
                    if json { Console.output(line.jsonLine) }
                    if let jsonFile { Console.append(line.jsonLine, toFile: jsonFile) }
                }
            } catch {
                Console.progress("error: \(error)")
                failures.append("\(error)")
            }
        }
        let minutes = Double(DispatchTime.now().uptimeNanoseconds - start) / 60e9
        Console.progress(String(format: "strata-bench: done in %.1f min", minutes))

        if !json {
            var report = BenchmarkReport(engines: chosenEngines.map { ($0, EngineCatalog.displayName($0)) }, results: results)
            report.skipped = skipped
            report.configurations = loaded.map { engine in
                (
                    engine.displayName,
                    "fills, reads and overwrite: \(engine.configuration(for: .buffered)); "
                        + "fillsync and syncconc8: \(engine.configuration(for: .synced))"
                )
            }
            Console.output("ops/s, N = \(BenchmarkReport.grouped(Double(num))) (16-byte keys, 100-byte values); higher is better\n")
            Console.output(report.render())
        }
        if !failures.isEmpty {
            Console.progress("strata-bench FAILED:\n" + failures.map { "  \($0)" }.joined(separator: "\n"))
            throw ExitCode(1)
        }
        // An engine named explicitly but missing is a failure too; with the default (all),
        // the others' figures are still worth having.
        if !skipped.isEmpty && engines != "all" {
            throw ExitCode(2)
        }
    }
}

enum EngineCatalog {
    static let names = ["strata", "sqlite", "lmdb", "leveldb", "rocksdb"]

    static func displayName(_ name: String) -> String {
        switch name {
        case "strata": "Strata"
        case "sqlite": "SQLite"
        case "lmdb": "LMDB"
        case "leveldb": "LevelDB"
        case "rocksdb": "RocksDB"
        default: name
        }
    }

    static func parseList(_ text: String) throws -> [String] {
        let chosen = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        if chosen.isEmpty || chosen == ["all"] { return names }
        for name in chosen where !names.contains(name) {
            throw ValidationError("unknown engine \"\(name)\"; known: \(names.joined(separator: ", "))")
        }
        return names.filter(chosen.contains)
    }

    /// Loads an engine; a peer's throws `PeerLibrary.Unavailable` when its library is missing.
    static func make(_ name: String) throws -> any BenchmarkEngine {
        switch name {
        case "strata": return StrataEngine()
        case "sqlite": return try SQLiteEngine()
        case "lmdb": return try LMDBEngine()
        case "leveldb": return try LSMEngine.levelDB()
        case "rocksdb": return try LSMEngine.rocksDB()
        default: throw ValidationError("unknown engine \(name)")
        }
    }
}

/// Results to stdout, everything else to stderr, each line written whole.
enum Console {
    static func output(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Appends `line` to `path`, creating the file if needed; a failure is reported, not fatal,
    /// since the table on stdout still has every figure.
    static func append(_ line: String, toFile path: String) {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            progress("warning: cannot write \(path); its result line is only in the table")
            return
        }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data((line + "\n").utf8))
    }
}
