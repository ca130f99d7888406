/// The results grouped into points: one per engine, workload and N, with the median of
/// its runs and their spread.
struct ChartData {
    /// One plotted point. `runs` above 1 means `lowest` and `highest` are worth a range bar.
    struct Point {
        let num: Int
        let median: Double
        let lowest: Double
        let highest: Double
        let runs: Int

        init(num: Int, runs values: [Double]) {
            let sorted = values.sorted()
            let middle = sorted.count / 2
            self.num = num
            median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            lowest = sorted[0]
            highest = sorted[sorted.count - 1]
            runs = sorted.count
        }
    }

    private struct Key: Hashable {
        let workload: String
        let engine: String
        let num: Int
    }

    /// In order of first appearance, the default order of the panels.
    let workloads: [String]
    /// The engines with known colours first, in their fixed order, then the others in order of
    /// first appearance, so the legend reads the same way on every chart.
    let engines: [String]
    private let points: [Key: Point]

    init(results: [RunResult]) {
        var workloads: [String] = []
        var engines: [String] = []
        var runs: [Key: [Double]] = [:]
        for result in results {
            if !workloads.contains(result.workload) { workloads.append(result.workload) }
            if !engines.contains(result.engine) { engines.append(result.engine) }
            runs[Key(workload: result.workload, engine: result.engine, num: result.num), default: []].append(result.opsPerSecond)
        }
        self.workloads = workloads
        self.engines = EnginePalette.ordered(engines)
        // Iterating a dictionary here is safe for determinism: the result is a dictionary too,
        // and every output walks ordered arrays of workloads, engines and sizes.
        var points: [Key: Point] = [:]
        for (key, values) in runs {
            points[key] = Point(num: key.num, runs: values)
        }
        self.points = points
    }

    private init(workloads: [String], engines: [String], points: [Key: Point]) {
        self.workloads = workloads
        self.engines = engines
        self.points = points
    }

    /// Only `chosen`, in that order, and only the engines that ran one of them.
    func restricted(to chosen: [String]) throws(ChartError) -> ChartData {
        for workload in chosen where !workloads.contains(workload) {
            throw ChartError(
                "the input has no results for workload \(workload); it has \(workloads.joined(separator: ", ")). Fix --workloads")
        }
        let kept = points.filter { chosen.contains($0.key.workload) }
        let engines = engines.filter { engine in kept.keys.contains { $0.engine == engine } }
        return ChartData(workloads: chosen, engines: engines, points: kept)
    }

    /// Every N any engine ran `workload` at, smallest first.
    func sizes(of workload: String) -> [Int] {
        Set(points.keys.filter { $0.workload == workload }.map(\.num)).sorted()
    }

    /// `engine`'s points on `workload`, smallest N first; empty when it did not run it.
    func series(workload: String, engine: String) -> [Point] {
        sizes(of: workload).compactMap { point(workload: workload, engine: engine, num: $0) }
    }

    func point(workload: String, engine: String, num: Int) -> Point? {
        points[Key(workload: workload, engine: engine, num: num)]
    }

    /// Whether any point had several runs, which is when the chart explains its range bars.
    var hasRepeatedRuns: Bool {
        points.values.contains { $0.runs > 1 }
    }
}
