import Foundation

/// The command line, parsed by hand so the tool builds with Foundation alone.
struct ChartOptions {
    static let usage = """
        usage: strata-chart [--workloads W1,W2] [--title TEXT] --output FILE.svg INPUT...

        Draws ops/s against N, one panel per workload, from the JSON lines strata-bench --json
        prints, and prints the same figures as a markdown table on stdout.

          INPUT            a file of strata-bench --json output, or - for stdin; lines that do
                           not start with { are skipped, so whole logs can be passed
          --output FILE    where to write the SVG (required)
          --workloads LIST comma-separated workloads to draw, in this order
                           (default: every workload in the input, in order of first appearance)
          --title TEXT     the chart's title
          --help           print this text

        Several results for the same engine, workload and N are drawn as their median with a
        bar from the lowest to the highest.
        """

    static let defaultTitle = "Throughput by N"

    var output: String?
    var workloads: [String]?
    var title = Self.defaultTitle
    var inputs: [String] = []
    var showHelp = false

    init(arguments: [String]) throws(ChartError) {
        var remaining = arguments[...]
        var optionsEnded = false
        while let argument = remaining.popFirst() {
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                inputs.append(argument)
                continue
            }
            // --name=value and --name value are both accepted.
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            var inlineValue = parts.count == 2 ? String(parts[1]) : nil
            func value() throws(ChartError) -> String {
                if let given = inlineValue {
                    inlineValue = nil
                    return given
                }
                guard let next = remaining.popFirst() else {
                    throw ChartError("\(name) needs a value; see strata-chart --help")
                }
                return next
            }
            switch name {
            case "--":
                optionsEnded = true
            case "--help", "-h":
                showHelp = true
            case "--output":
                output = try value()
            case "--title":
                title = try value()
            case "--workloads":
                let names = try value().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard !names.isEmpty else {
                    throw ChartError("--workloads is empty; give comma-separated names such as fillrandom,readrandom")
                }
                workloads = names
            default:
                throw ChartError("unknown option \(argument); see strata-chart --help")
            }
            if inlineValue != nil {
                throw ChartError("\(name) takes no value; see strata-chart --help")
            }
        }
        if showHelp { return }
        guard output != nil else {
            throw ChartError("missing --output FILE.svg: say where to write the chart")
        }
        guard !inputs.isEmpty else {
            throw ChartError("no input: give one or more files of strata-bench --json output, or - to read stdin")
        }
    }
}
