// One measured row, and the tables: every row's rate, then the ratios the rows are there for.
import Foundation
import StrataBenchmarkKit

struct Row {
    let id: String
    let label: String
    let ops: Int
    let seconds: Double
    /// Mean bytes of a stored value, for the rows that store one.
    let valueBytes: Double?

    init(_ id: String, _ label: String, _ ops: Int, _ seconds: Double, valueBytes: Double? = nil) {
        self.id = id
        self.label = label
        self.ops = ops
        self.seconds = seconds
        self.valueBytes = valueBytes
    }

    var opsPerSecond: Double { Double(ops) / seconds }
    var microseconds: Double { seconds * 1e6 / Double(ops) }

    var jsonLine: String {
        var line = "{\"row\":\"\(id)\",\"ops\":\(ops)," + String(format: "\"seconds\":%.6f,\"ops_per_s\":%.0f", seconds, opsPerSecond)
        if let valueBytes { line += String(format: ",\"value_bytes\":%.1f", valueBytes) }
        return line + "}"
    }

    var progressLine: String {
        "\(id): \(BenchmarkReport.grouped(opsPerSecond)) ops/s"
    }
}

extension StrataRecordsBench {
    static func report(_ rows: [Row], num: Int, sqliteVersion: String?, load: (start: String, end: String)) -> String {
        var lines: [String] = []
        lines.append(
            "strata-records, N = \(BenchmarkReport.grouped(Double(num))) records {id: Int, name: 10 letters, "
                + "email: 20 characters, age: Int}, ids put in order, gets of uniformly random ids; higher ops/s is better")
        lines.append(
            "Strata: \(batch) records per `.buffered` transaction, one `sync()` at the end of each fill (timed); "
                + "each get is one `store.read`, on the store reopened")
        if let sqliteVersion {
            lines.append(
                "SQLite \(sqliteVersion): `\(SQLiteRows.table)`, WAL, `synchronous=NORMAL`, BEGIN IMMEDIATE/COMMIT, "
                    + "`PRAGMA wal_checkpoint(FULL)` at the end of each fill (timed); gets on a new connection")
        } else {
            lines.append("SQLite: skipped, its library did not load")
        }
        lines.append("load average (1, 5, 15 min): \(load.start) at the start, \(load.end) at the end")
        lines.append("")
        lines.append("| row | ops | ops/s | µs/op | value bytes |")
        lines.append("|---|---:|---:|---:|---:|")
        for row in rows {
            let size = row.valueBytes.map { String(format: "%.1f", $0) } ?? ""
            lines.append(
                "| \(row.label) | \(BenchmarkReport.grouped(Double(row.ops))) | \(BenchmarkReport.grouped(row.opsPerSecond)) | "
                    + String(format: "%.2f", row.microseconds) + " | \(size) |")
        }

        let byID = Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func ratio(_ over: String, _ under: String) -> String {
            guard let over = byID[over], let under = byID[under] else { return "–" }
            return String(format: "%.2f", over.opsPerSecond / under.opsPerSecond)
        }
        func difference(_ slower: String, _ faster: String) -> String {
            guard let slower = byID[slower], let faster = byID[faster] else { return "–" }
            return String(format: "%.2f µs", slower.microseconds - faster.microseconds)
        }
        lines.append("")
        lines.append("| ratio of ops/s | value |")
        lines.append("|---|---:|")
        let ratios: [(String, String, String)] = [
            ("put: typed / raw, the collection's bytes", "put.typed", "put.raw.same"),
            ("put: typed / raw, hand-packed", "put.typed", "put.raw.hand"),
            ("put: typed / raw, JSONEncoder", "put.typed", "put.raw.json"),
            ("put: typed / SQLite", "put.typed", "put.sqlite"),
            ("get: typed / raw, bytes only", "get.typed", "get.raw.bytes"),
            ("get: typed / raw, hand-packed decoded", "get.typed", "get.raw.hand"),
            ("get: typed / raw, JSONDecoder", "get.typed", "get.raw.json"),
            ("get: typed / SQLite", "get.typed", "get.sqlite"),
            ("put, one per transaction: typed / raw, hand-packed", "put1.typed", "put1.raw.hand"),
            ("put, one per transaction: typed / SQLite", "put1.typed", "put1.sqlite")
        ]
        for (label, over, under) in ratios {
            lines.append("| \(label) | \(ratio(over, under)) |")
        }
        lines.append("")
        lines.append("| time per record, from the differences of µs/op | put | get |")
        lines.append("|---|---:|---:|")
        lines.append(
            "| the records layer: typed minus raw on the same bytes, key made before the clock | "
                + "\(difference("put.typed", "put.raw.same")) | \(difference("get.typed", "get.raw.bytes")) |")
        lines.append(
            "| of which the key: raw with the key made in the loop minus made before | "
                + "\(difference("put.raw.same.key", "put.raw.same")) | \(difference("get.raw.bytes.key", "get.raw.bytes")) |")
        lines.append(
            "| the rest (encoding or decoding the value, and the layer's own steps): typed minus raw with the key made in the loop | "
                + "\(difference("put.typed", "put.raw.same.key")) | \(difference("get.typed", "get.raw.bytes.key")) |")
        return lines.joined(separator: "\n")
    }
}
