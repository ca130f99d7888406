// How the scale run reports: one readable line (or a few) per step, or with --json one JSON
// object per step on stdout and the readable lines on stderr.
import Foundation
import Strata
import StrataBenchmarkKit

/// A JSON value whose objects keep their keys in the order given.
enum JSON {
    case int(Int)
    case double(Double)
    case string(String)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    static func optional(_ value: Int?) -> JSON { value.map { .int($0) } ?? .null }
    static func optional(_ value: Double?) -> JSON { value.map { .double($0) } ?? .null }

    var text: String {
        switch self {
        case .int(let value): return String(value)
        case .double(let value):
            guard value.isFinite else { return "null" }
            if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
            return String((value * 1_000_000).rounded() / 1_000_000)
        case .string(let value): return Self.quoted(value)
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array(let values): return "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let fields): return "{" + fields.map { Self.quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    private static func quoted(_ text: String) -> String {
        BenchmarkResult.jsonString(text)
    }
}

/// Results to stdout, progress to stderr, each line written whole.
enum Console {
    static func output(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// Where a step's figures go.
struct Reporter {
    var json: Bool

    /// Prints a step: its readable lines (stdout, or stderr with --json) and, with --json,
    /// its JSON object on stdout.
    func step(_ lines: [String], _ object: [(String, JSON)]) {
        for line in lines {
            if json { Console.progress(line) } else { Console.output(line) }
        }
        if json { Console.output(JSON.object(object).text) }
    }

    func progress(_ line: String) {
        Console.progress(line)
    }
}

enum Format {
    /// 1234567 → "1,234,567".
    static func count(_ value: Int) -> String { BenchmarkReport.grouped(Double(value)) }

    static func rate(_ value: Double) -> String { BenchmarkReport.grouped(value) }

    /// Bytes in MB (10^6 bytes), the unit of the thresholds.
    static func megabytes(_ bytes: Int?) -> String {
        guard let bytes else { return "n/a" }
        return String(format: "%.1f MB", Double(bytes) / 1e6)
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

    static func ratio(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "n/a" }
        return String(format: "%.2f", value)
    }

    /// "L0 4 files 31.2 MB, L1 2 files 16.0 MB", or "none".
    static func levels(_ levels: [StoreStats.LevelStats]) -> String {
        let used = levels.filter { $0.files > 0 || $0.bytes > 0 }
        guard !used.isEmpty else { return "none" }
        return used.map { "L\($0.level) \($0.files) files \(megabytes($0.bytes))" }.joined(separator: ", ")
    }

    /// The `stats()` figures the issue asks about, in words.
    static func stats(_ stats: StoreStats) -> String {
        "levels: \(levels(stats.levels)); memtable \(megabytes(stats.memtableBytes)) "
            + "(\(count(stats.memtableEntries)) entries, \(stats.sealedMemtables) sealed); "
            + "WAL \(stats.walSegments) segments \(megabytes(stats.walBytes)); "
            + "flushes \(stats.flushes), compactions \(stats.compactions), "
            + "write stalls \(stats.writeStalls) (\(seconds(stats.writeStallSeconds)))"
    }

    static func statsJSON(_ stats: StoreStats) -> JSON {
        .object([
            ("levels", .array(stats.levels.map { level in
                .object([("level", .int(level.level)), ("files", .int(level.files)),
                         ("bytes", .int(level.bytes)), ("entries", .int(level.entries))])
            })),
            ("segment_files", .int(stats.segmentFiles)),
            ("segment_bytes", .int(stats.segmentBytes)),
            ("memtable_bytes", .int(stats.memtableBytes)),
            ("memtable_entries", .int(stats.memtableEntries)),
            ("sealed_memtables", .int(stats.sealedMemtables)),
            ("wal_segments", .int(stats.walSegments)),
            ("wal_bytes", .int(stats.walBytes)),
            ("flushes", .int(stats.flushes)),
            ("compactions", .int(stats.compactions)),
            ("write_stalls", .int(stats.writeStalls)),
            ("write_stall_seconds", .double(stats.writeStallSeconds)),
            ("space_amplification", .optional(stats.spaceAmplification)),
        ])
    }

    static func usage(_ usage: DirectoryUsage) -> String {
        "\(megabytes(usage.bytes)) in \(usage.files) files (allocated \(megabytes(usage.allocatedBytes)); "
            + usage.kinds.map { "\($0.name) \($0.files) × \(megabytes($0.bytes))" }.joined(separator: ", ") + ")"
    }

    static func usageJSON(_ usage: DirectoryUsage) -> JSON {
        .object([
            ("files", .int(usage.files)),
            ("bytes", .int(usage.bytes)),
            ("allocated_bytes", .int(usage.allocatedBytes)),
            ("kinds", .array(usage.kinds.map { .object([("kind", .string($0.name)), ("files", .int($0.files)), ("bytes", .int($0.bytes))]) })),
        ])
    }
}
