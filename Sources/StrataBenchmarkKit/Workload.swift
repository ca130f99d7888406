// The eight standard workloads (shared/bench/WORKLOADS.md, "Workloads"), in the page's order,
// which is also the order they run in, then the rows added for the ways apps write
// (fillsingle: one put per transaction, as most app code commits; readrandom4: readers on
// four threads; fillrandom1k and readrandom1k: values the size of a small JSON record).
import Foundation

public enum Workload: String, CaseIterable, Sendable {
    case fillseq
    case fillrandom
    case readrandom
    case readseq
    case fillsync
    case syncconc8
    case readwhilewriting
    case overwrite
    case fillsingle
    case readrandom4
    case fillrandom1k
    case readrandom1k

    /// What the workload does, as the page says it.
    public var summary: String {
        switch self {
        case .fillseq: "fresh store, put keys 0..<N in order, 1000 puts per transaction, buffered, one sync at the end"
        case .fillrandom: "fresh store, the same with keys in a seeded random permutation"
        case .readrandom: "on the fillrandom store, reopened: N gets of uniformly random existing keys"
        case .readseq: "on the same store: one full scan in key order"
        case .fillsync: "1000 transactions of one put each, each durable before the next starts"
        case .syncconc8: "8 threads, each 125 transactions of one put, each durable, all at once"
        case .readwhilewriting: "readrandom on 1 thread while another thread overwrites random keys in 1000-put transactions"
        case .overwrite: "on the fillrandom store: N puts to random existing keys, 1000 per transaction, then compact"
        case .fillsingle: "fresh store, N/10 transactions of one put each in random key order, buffered, one thread, one sync at the end"
        case .readrandom4: "on the fillrandom store: N gets of uniformly random existing keys, split over 4 threads with a reader each"
        case .fillrandom1k: "fresh store, N/10 puts in a seeded random permutation, 1,000-byte values, 100 puts per transaction, buffered, one sync at the end"
        case .readrandom1k: "on the fillrandom1k store, reopened: N/10 gets of uniformly random existing keys"
        }
    }

    /// What one op is.
    public var unit: String {
        switch self {
        case .fillseq, .fillrandom, .overwrite, .fillrandom1k: "put"
        case .readrandom, .readwhilewriting, .readrandom4, .readrandom1k: "get"
        case .readseq: "entry"
        case .fillsync, .syncconc8, .fillsingle: "commit"
        }
    }

    /// The unit, plural ("puts", "entries").
    public var unitPlural: String {
        unit == "entry" ? "entries" : unit + "s"
    }

    /// The fill whose store this workload runs on, or nil when it makes its own.
    public var baseFill: Workload? {
        switch self {
        case .readrandom, .readseq, .readwhilewriting, .overwrite, .readrandom4: .fillrandom
        case .readrandom1k: .fillrandom1k
        case .fillseq, .fillrandom, .fillsync, .syncconc8, .fillsingle, .fillrandom1k: nil
        }
    }

    /// Bytes per value: the run's (100 by default), or 1,000 for the 1k rows.
    public func valueLength(_ settings: BenchmarkSettings) -> Int {
        switch self {
        case .fillrandom1k, .readrandom1k: 1_000
        default: settings.valueLength
        }
    }

    /// Keys this workload's store holds and gets it makes: N, or N/10 for the 1k rows and
    /// fillsingle, as the workload page says (a tenth of the keys at ten times the value
    /// size keeps the 1k store the size of the 100-byte one).
    public func keyCount(_ settings: BenchmarkSettings) -> Int {
        switch self {
        case .fillrandom1k, .readrandom1k, .fillsingle: max(settings.keyCount / 10, 1)
        default: settings.keyCount
        }
    }

    /// Puts per transaction of a fill: the run's (1000 by default), or 100 for fillrandom1k.
    public func batchSize(_ settings: BenchmarkSettings) -> Int {
        switch self {
        case .fillrandom1k: min(settings.batchSize, 100)
        default: settings.batchSize
        }
    }

    /// Parses a comma list ("fillseq,readrandom"); "all" or an empty list means every
    /// workload. Returns the workloads in the page's order.
    public static func parseList(_ text: String) throws(BenchmarkUsageError) -> [Workload] {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if names.isEmpty || names == ["all"] { return allCases }
        var chosen = Set<Workload>()
        for name in names {
            guard let workload = Workload(rawValue: name.lowercased()) else {
                throw BenchmarkUsageError("unknown workload \"\(name)\"; known: \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            chosen.insert(workload)
        }
        return allCases.filter(chosen.contains)
    }
}

/// A command-line value the benchmark cannot use.
public struct BenchmarkUsageError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// The sizes of a run. The defaults are the page's; the smoke test shrinks them.
public struct BenchmarkSettings: Sendable {
    /// N: keys of the fills, gets of the reads, puts of overwrite.
    public var keyCount: Int = 1_000_000
    /// Puts per transaction in fillseq, fillrandom, overwrite and readwhilewriting's writer.
    public var batchSize: Int = 1000
    /// Transactions of fillsync.
    public var syncCommits: Int = 1000
    /// Threads of syncconc8 (the name says 8: keep it unless testing).
    public var concurrentThreads: Int = 8
    /// Transactions per thread of syncconc8.
    public var commitsPerThread: Int = 125
    /// Bytes per value.
    public var valueLength: Int = BenchmarkValues.standardLength
    /// Seeds every key order and value, so every engine gets the same data.
    public var seed: UInt64 = 0x5354_5241_5441_4231

    public init() {}

    public init(keyCount: Int) {
        self.keyCount = keyCount
    }
}
