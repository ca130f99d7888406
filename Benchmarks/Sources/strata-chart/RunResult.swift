import Foundation

/// One result line of strata-bench --json: what ran, at which N, and how fast.
struct RunResult {
    let engine: String
    let workload: String
    let num: Int
    let opsPerSecond: Double

    /// The results in `text`, which came from `source` (a file name, or stdin). Lines that do
    /// not start with `{` are progress or table output from the same run and are skipped; a
    /// `{` line that is not a result is an error, since dropping it would silently change the
    /// chart.
    static func read(_ text: String, source: String) throws(ChartError) -> [RunResult] {
        var results: [RunResult] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            guard line.hasPrefix("{") else { continue }
            results.append(try parse(line, at: "\(source):\(index + 1)"))
        }
        return results
    }

    private static func parse(_ line: String, at place: String) throws(ChartError) -> RunResult {
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw ChartError("\(place): the line starts with { but is not a JSON object; fix or delete it")
            }
            object = parsed
        } catch let error as ChartError {
            throw error
        } catch {
            throw ChartError("\(place): the line starts with { but is not valid JSON; fix or delete it")
        }
        func text(_ key: String) throws(ChartError) -> String {
            guard let value = object[key] as? String, !value.isEmpty else {
                throw ChartError("\(place): the result has no \"\(key)\" string; is this strata-bench --json output?")
            }
            return value
        }
        func positiveNumber(_ key: String, hint: String) throws(ChartError) -> Double {
            guard let number = object[key] as? NSNumber else {
                throw ChartError("\(place): the result has no \"\(key)\" number; \(hint)")
            }
            let value = number.doubleValue
            // Both axes are logarithmic, where zero and below have no place; the upper bound
            // keeps every figure a whole number the table can print.
            guard value.isFinite && value > 0 && value < 1e15 else {
                throw ChartError("\(place): \"\(key)\" is \(number), but the chart needs a positive number below 10^15; fix or delete the line")
            }
            return value
        }
        let engine = try text("engine")
        let workload = try text("workload")
        let opsPerSecond = try positiveNumber("ops_per_s", hint: "is this strata-bench --json output?")
        let num = try positiveNumber("num", hint: "add the run's N as \"num\", or rerun with a strata-bench that records it")
        guard num == num.rounded() else {
            throw ChartError("\(place): \"num\" must be a whole number of keys; fix or delete the line")
        }
        return RunResult(engine: engine, workload: workload, num: Int(num), opsPerSecond: opsPerSecond)
    }
}
