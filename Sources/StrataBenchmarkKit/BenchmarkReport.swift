// The human-readable table: ops/s of every engine on every workload, the best peer, and
// Strata's ratio to it (shared/bench/WORKLOADS.md, "Output"). Markdown, so it can be pasted
// into docs/benchmarks.md as it is.
import Foundation

public struct BenchmarkReport: Sendable {
    /// The engines as columns, in order: (name, display name).
    public var engines: [(name: String, displayName: String)]
    public var results: [BenchmarkResult]
    /// Engines that could not run, with why.
    public var skipped: [(name: String, reason: String)] = []
    /// One line per engine on how it was configured.
    public var configurations: [(displayName: String, text: String)] = []

    public init(engines: [(name: String, displayName: String)], results: [BenchmarkResult]) {
        self.engines = engines
        self.results = results
    }

    /// Strata's name in the results.
    public static let subject = "strata"

    public func render() -> String {
        let workloads = Workload.allCases.filter { workload in results.contains { $0.workload == workload } }
        let peers = engines.filter { $0.name != Self.subject }
        let hasSubject = engines.contains { $0.name == Self.subject }
        var header = ["workload"] + engines.map(\.displayName)
        if !peers.isEmpty { header.append("best peer") }
        if hasSubject && !peers.isEmpty { header.append("Strata / best") }
        var lines = [
            "| " + header.joined(separator: " | ") + " |",
            "|" + header.indices.map { $0 == 0 || header[$0] == "best peer" ? "---|" : "---:|" }.joined()
        ]
        var notes: [String] = []
        for workload in workloads {
            var row = [workload.rawValue]
            for engine in engines {
                if let result = result(engine.name, workload) {
                    row.append(Self.grouped(result.opsPerSecond) + (result.note != nil ? " *" : ""))
                    if let note = result.note { notes.append("\(engine.displayName) \(workload.rawValue): \(note)") }
                } else {
                    row.append("–")
                }
            }
            let best = peers.compactMap { peer in result(peer.name, workload).map { (peer.displayName, $0.opsPerSecond) } }
                .max { $0.1 < $1.1 }
            if !peers.isEmpty { row.append(best?.0 ?? "–") }
            if hasSubject && !peers.isEmpty {
                if let best, best.1 > 0, let subject = result(Self.subject, workload) {
                    row.append(String(format: "%.2fx", subject.opsPerSecond / best.1))
                } else {
                    row.append("–")
                }
            }
            lines.append("| " + row.joined(separator: " | ") + " |")
        }
        if !notes.isEmpty {
            lines.append("")
            lines.append(contentsOf: notes.map { "\\* \($0)" })
        }
        if !skipped.isEmpty {
            lines.append("")
            lines.append(contentsOf: skipped.map { "Not measured: \($0.reason)" })
        }
        if !configurations.isEmpty {
            lines.append("")
            lines.append("Configurations:")
            lines.append(contentsOf: configurations.map { "- \($0.displayName): \($0.text)" })
        }
        return lines.joined(separator: "\n")
    }

    private func result(_ engine: String, _ workload: Workload) -> BenchmarkResult? {
        results.first { $0.engine == engine && $0.workload == workload }
    }

    /// 1234567.8 → "1,234,568".
    public static func grouped(_ value: Double) -> String {
        let digits = String(Int(value.rounded()))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 && character != "-" && out != "-" { out.append(",") }
            out.append(character)
        }
        return out
    }
}
