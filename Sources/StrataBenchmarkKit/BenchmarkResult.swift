// One measured result and its JSON line (shared/bench/WORKLOADS.md, "Output"):
//   {"engine":"strata","workload":"fillseq","ops":1000000,"seconds":0.91,"ops_per_s":1098901}
// The five fields come first, in that order. Then "num", the run's N (`--num`), when known, so
// results of runs at several sizes can be drawn together (scripts/scale-chart); and, for a
// result whose workload could not run in full (overwrite without compaction), "note", saying
// what was left out. Then, for an engine that reports them (Strata), "write_stalls" and
// "write_stall_seconds": how often and how long its writes waited for a flush or compaction
// during the workload.
import Foundation

/// How often and how long an engine's writes waited for its background work (a flush or a
/// compaction) during one workload.
public struct WriteStalls: Sendable, Equatable {
    public var count: Int
    public var seconds: Double

    public init(count: Int, seconds: Double) {
        self.count = count
        self.seconds = seconds
    }

    /// The later minus the earlier of two cumulative readings.
    public func since(_ earlier: WriteStalls) -> WriteStalls {
        WriteStalls(count: count - earlier.count, seconds: seconds - earlier.seconds)
    }
}

public struct BenchmarkResult: Sendable, Equatable {
    /// The engine's lower-case name ("strata").
    public var engine: String
    public var workload: Workload
    /// Ops counted (puts, gets, entries or commits: `workload.unit`).
    public var ops: Int
    /// Wall-clock seconds of the measured part.
    public var seconds: Double
    /// The run's N (`--num`): what a chart of several runs puts on its x axis.
    public var num: Int?
    /// What the result leaves out, when something was (for example "no compaction: ...").
    public var note: String?
    /// The checks the result passed, in words ("1000000 gets found, every value 100 bytes").
    public var verification: String
    /// The engine's write stalls during the workload, when it reports them.
    public var writeStalls: WriteStalls?

    public init(
        engine: String, workload: Workload, ops: Int, seconds: Double, num: Int? = nil, note: String? = nil,
        verification: String
    ) {
        self.engine = engine
        self.num = num
        self.workload = workload
        self.ops = ops
        self.seconds = seconds
        self.note = note
        self.verification = verification
    }

    public var opsPerSecond: Double {
        seconds > 0 ? Double(ops) / seconds : 0
    }

    /// The result as one JSON object on one line.
    public var jsonLine: String {
        let roundedSeconds = (seconds * 1_000_000).rounded() / 1_000_000
        var line = "{\"engine\":\(Self.jsonString(engine)),\"workload\":\(Self.jsonString(workload.rawValue)),"
        line += "\"ops\":\(ops),\"seconds\":\(roundedSeconds),\"ops_per_s\":\(Int(opsPerSecond.rounded()))"
        if let num { line += ",\"num\":\(num)" }
        if let note { line += ",\"note\":\(Self.jsonString(note))" }
        if let writeStalls {
            let roundedStallSeconds = (writeStalls.seconds * 1000).rounded() / 1000
            line += ",\"write_stalls\":\(writeStalls.count),\"write_stall_seconds\":\(roundedStallSeconds)"
        }
        return line + "}"
    }

    /// Reads a line `jsonLine` wrote. `verification` is not part of the line and comes back
    /// empty.
    public init(jsonLine: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(jsonLine.utf8)) as? [String: Any],
            let engine = object["engine"] as? String,
            let workloadName = object["workload"] as? String, let workload = Workload(rawValue: workloadName),
            let ops = (object["ops"] as? NSNumber)?.intValue,
            let seconds = (object["seconds"] as? NSNumber)?.doubleValue,
            object["ops_per_s"] is NSNumber
        else {
            throw BenchmarkUsageError("not a result line: \(jsonLine)")
        }
        self.init(
            engine: engine, workload: workload, ops: ops, seconds: seconds,
            num: (object["num"] as? NSNumber)?.intValue, note: object["note"] as? String, verification: "")
        if let count = (object["write_stalls"] as? NSNumber)?.intValue,
            let stallSeconds = (object["write_stall_seconds"] as? NSNumber)?.doubleValue
        {
            writeStalls = WriteStalls(count: count, seconds: stallSeconds)
        }
    }

    /// `text` as a JSON string literal, quotes included.
    public static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A wrong answer: the run fails, naming the engine and the workload.
public struct BenchmarkCheckFailure: Error, CustomStringConvertible {
    public var engine: String
    public var workload: Workload
    public var problem: String

    public init(engine: String, workload: Workload, problem: String) {
        self.engine = engine
        self.workload = workload
        self.problem = problem
    }

    public var description: String {
        "wrong answer from \(engine) in \(workload.rawValue): \(problem)"
    }
}

/// An engine error (not a wrong answer) during a workload, with where it happened.
public struct BenchmarkEngineFailure: Error, CustomStringConvertible {
    public var engine: String
    public var workload: Workload
    public var underlying: any Error

    public init(engine: String, workload: Workload, underlying: any Error) {
        self.engine = engine
        self.workload = workload
        self.underlying = underlying
    }

    public var description: String {
        "\(engine) failed in \(workload.rawValue): \(underlying)"
    }
}
