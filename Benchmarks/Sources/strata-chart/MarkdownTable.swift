import Foundation

/// The chart's figures as a markdown table, one row per workload and N, to paste into docs
/// next to the chart.
enum MarkdownTable {
    static func render(_ data: ChartData) -> String {
        let others = data.engines.filter { $0 != "strata" }
        // The ratio says how Strata compares with the strongest peer; without Strata or without
        // a peer there is nothing to compare.
        let showsRatio = data.engines.contains("strata") && !others.isEmpty
        var header = ["workload", "N"] + data.engines.map(cell)
        var alignment = ["---", "---:"] + data.engines.map { _ in "---:" }
        if showsRatio {
            header.append("strata vs best other")
            alignment.append("---:")
        }
        var lines = [row(header), row(alignment)]
        for workload in data.workloads {
            for num in data.sizes(of: workload) {
                let medians = data.engines.map { data.point(workload: workload, engine: $0, num: num)?.median }
                var cells = [cell(workload), NumberText.grouped(Double(num))]
                cells += medians.map { $0.map(NumberText.grouped) ?? "–" }
                if showsRatio {
                    let strata = data.point(workload: workload, engine: "strata", num: num)?.median
                    let best = others.compactMap { data.point(workload: workload, engine: $0, num: num)?.median }.max()
                    if let strata, let best {
                        cells.append(String(format: "%.2fx", strata / best))
                    } else {
                        cells.append("–")
                    }
                }
                lines.append(row(cells))
            }
        }
        lines.append("")
        lines.append(data.hasRepeatedRuns ? "ops/s, higher is better; medians where a point ran several times." : "ops/s, higher is better.")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func row(_ cells: [String]) -> String {
        "| " + cells.joined(separator: " | ") + " |"
    }

    /// A name safe inside a table cell, where a bare | would start a new column.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
    }
}
