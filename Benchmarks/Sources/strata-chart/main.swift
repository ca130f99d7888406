// strata-chart: draws strata-bench results at several sizes as one SVG chart, ops/s against N
// on log scales, one panel per workload and one line per engine, and prints the same figures
// as a markdown table to paste next to it. Repeated runs of a point are drawn as their median
// with a bar from the lowest to the highest run.
//
// To regenerate a scaling chart, run strata-bench once per size with --json, from the
// repository root:
//   swift run -c release --package-path Benchmarks strata-bench --num 10000000 \
//       --workloads fillrandom,readrandom --engines strata,lmdb,leveldb,rocksdb --json > scale-10M.jsonl
// (and the same with --num 100000 > scale-100k.jsonl, --num 1000000 > scale-1M.jsonl), then:
//   swift run -c release --package-path Benchmarks strata-chart --output docs/scale.svg scale-*.jsonl
//
// The tool depends on Foundation alone, so it builds quickly and never needs the peers'
// libraries. The SVG holds nothing but the input's figures (no date, no host), so the same
// input gives a byte-identical file and a regenerated chart changes only when results do.

import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("strata-chart: \(message)\n".utf8))
    exit(1)
}

func readInput(_ name: String) throws(ChartError) -> [RunResult] {
    let contents: Data
    let source: String
    if name == "-" {
        contents = FileHandle.standardInput.readDataToEndOfFile()
        source = "stdin"
    } else {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory) else {
            throw ChartError("cannot read \(name): there is no such file")
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: name) else {
            throw ChartError("cannot read \(name): give a readable file of strata-bench --json output")
        }
        contents = data
        source = name
    }
    return try RunResult.read(String(decoding: contents, as: UTF8.self), source: source)
}

func writeOutput(_ text: String, to path: String) throws(ChartError) {
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    let directory = url.deletingLastPathComponent().path
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw ChartError("cannot write \(path): the directory \(directory) does not exist; create it or choose another --output")
    }
    do {
        try Data(text.utf8).write(to: url, options: .atomic)
    } catch {
        throw ChartError("cannot write \(path): \(error.localizedDescription); check that it is writable")
    }
}

do {
    let options = try ChartOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    if options.showHelp {
        print(ChartOptions.usage)
        exit(0)
    }
    var results: [RunResult] = []
    for input in options.inputs {
        results += try readInput(input)
    }
    guard !results.isEmpty else {
        throw ChartError(
            "no results in \(options.inputs.joined(separator: ", ")): no line starts with {; produce them with strata-bench --json")
    }
    var data = ChartData(results: results)
    data = try data.restricted(to: options.workloads ?? data.workloads)
    try writeOutput(SVGChart(data: data, title: options.title).render(), to: options.output ?? "")
    print(MarkdownTable.render(data), terminator: "")
} catch let error as ChartError {
    fail(error.message)
} catch {
    fail("\(error)")
}
