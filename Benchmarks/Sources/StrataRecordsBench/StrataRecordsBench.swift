// What the typed-records layer costs: put and get of a small record through
// RecordCollection, against the byte API on the same data (the collection's own bytes, and
// hand-packed, JSON and property-list values), and against SQLite's INSERT and SELECT of the
// same fields, in one run:
//
//   swift run -c release --package-path Benchmarks strata-records --num 200000
//
// Records are {id: Int, name: 10 letters, email: 20 characters, age: Int}, with ids 0..<N
// put in order. Making the records, and the prepared keys and values of the rows that say
// so, is not timed; building keys and encoding or decoding values inside a row is. Every
// answer is checked; a wrong one fails the run.
import ArgumentParser
import Foundation
import PeerSupport
import StrataBenchmarkKit

@main
struct StrataRecordsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-records",
        abstract: "Typed records (RecordCollection) against Strata's byte API and SQLite, and the value codecs alone.")

    @Option(help: "N: records put by the batched fills, and gets per read row (the one-record-per-transaction rows put N/10).")
    var num: Int = 200_000

    @Option(help: "Directory for the stores, left in place afterwards (default: a fresh temporary directory, removed after).")
    var dir: String?

    @Flag(help: "Print one JSON object per row instead of the tables.")
    var json = false

    static let batch = 1_000
    static let seed: UInt64 = 0x5EC0_2D5B

    func validate() throws {
        guard num >= 10 else { throw ValidationError("--num must be at least 10") }
    }

    func run() throws {
        let root: String
        if let dir {
            root = dir
        } else {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("strata-records-\(UUID().uuidString)").path
        }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer {
            if dir == nil { try? FileManager.default.removeItem(atPath: root) }
        }

        let loadAtStart = Self.loadAverage()
        let people = People.make(count: num, seed: Self.seed)
        let ids = People.randomIDs(count: num, bound: num, seed: Self.seed ^ 1)
        let singles = num / 10
        let strata = StrataRows(root: root, people: people)
        var sqlite: SQLiteRows?
        do {
            sqlite = SQLiteRows(api: try SQLiteAPI.load(), root: root, people: people)
        } catch {
            Self.progress("warning: \(error)")
        }
        var rows: [Row] = []
        func record(_ row: Row) {
            rows.append(row)
            if json { Self.output(row.jsonLine) } else { Self.progress(row.progressLine) }
        }
        Self.progress("strata-records: N = \(num) in \(root)")

        // Puts, N records in transactions of 1,000.
        let codecs = [ValueCodec.hand(), ValueCodec.json(), ValueCodec.propertyList()]
        let sizes = Dictionary(
            uniqueKeysWithValues: try codecs.map { codec in
                (codec.name, Self.meanSize(try people.map(codec.encode)))
            })
        let typedPut = try strata.putTyped("typed", count: num, batch: Self.batch)
        let stored = try strata.storedPairs("typed")
        let storedSize = Self.meanSize(stored.map(\.value))
        record(Row("put.typed", "put, typed: RecordCollection.put", num, typedPut, valueBytes: storedSize))
        record(
            Row(
                "put.raw.same", "put, raw: the collection's keys and values, made before the clock", num,
                try strata.putPrepared("same", stored, batch: Self.batch), valueBytes: storedSize))
        record(
            Row(
                "put.raw.same.key", "put, raw: key made in the loop, the collection's value made before the clock", num,
                try strata.putKeyed("same-keyed", stored.map(\.value), batch: Self.batch), valueBytes: storedSize))
        for codec in codecs {
            record(
                Row(
                    "put.raw.\(codec.name)", "put, raw: key + \(Self.describe(codec)) value, made in the loop", num,
                    try strata.putEncoded(codec.name, count: num, batch: Self.batch, codec.encode),
                    valueBytes: sizes[codec.name]))
        }
        if let sqlite {
            record(
                Row(
                    "put.sqlite", "put, SQLite: prepared INSERT, four bound fields", num,
                    try sqlite.fill("people", count: num, batch: Self.batch)))
        }

        // Gets, N random ids, one read transaction (one statement) each.
        record(Row("get.typed", "get, typed: RecordCollection.get", num, try strata.getTyped("typed", ids)))
        let keys = ids.map(StrataRows.key)
        record(
            Row(
                "get.raw.bytes", "get, raw: tx.get of a key made before the clock, bytes only (typed store)", num,
                try strata.getBytes("typed", ids, keys: keys, expectedLengths: stored.map(\.value.count))))
        record(
            Row(
                "get.raw.bytes.key", "get, raw: key made in the loop, tx.get, bytes only (typed store)", num,
                try strata.getKeyedBytes("typed", ids, expectedLengths: stored.map(\.value.count))))
        for codec in codecs {
            record(
                Row(
                    "get.raw.\(codec.name)", "get, raw: key made in the loop, tx.get, \(Self.describe(codec, decoding: true)) decode", num,
                    try strata.getDecoded(codec.name, ids, codec.decode)))
        }
        if let sqlite {
            record(Row("get.sqlite", "get, SQLite: prepared SELECT into the struct", num, try sqlite.gets("people", ids)))
        }

        // One record per transaction, N/10 of them.
        record(
            Row(
                "put1.typed", "put, one per transaction, typed", singles,
                try strata.putTyped("typed-single", count: singles, batch: 1)))
        record(
            Row(
                "put1.raw.hand", "put, one per transaction, raw: key + hand-packed value", singles,
                try strata.putEncoded("hand-single", count: singles, batch: 1, ValueCodec.hand().encode)))
        if let sqlite {
            record(
                Row(
                    "put1.sqlite", "put, one per transaction, SQLite", singles,
                    try sqlite.fill("people-single", count: singles, batch: 1)))
        }

        // The codecs alone, in memory.
        for codec in codecs {
            let (encode, _, decode) = try codec.timed(people)
            record(Row("codec.\(codec.name).encode", "\(Self.describe(codec)) encode, in memory", num, encode))
            record(Row("codec.\(codec.name).decode", "\(Self.describe(codec, decoding: true)) decode, in memory", num, decode))
        }
        let loadAtEnd = Self.loadAverage()

        if !json {
            Self.output(Self.report(rows, num: num, sqliteVersion: sqlite?.api.version, load: (loadAtStart, loadAtEnd)))
        }
        if sqlite == nil { throw ExitCode(2) }
    }

    static func describe(_ codec: ValueCodec, decoding: Bool = false) -> String {
        switch codec.name {
        case "hand": "hand-packed"
        case "json": decoding ? "JSONDecoder" : "JSONEncoder"
        case "plist": decoding ? "binary PropertyListDecoder" : "binary PropertyListEncoder"
        default: codec.name
        }
    }

    static func meanSize(_ values: [[UInt8]]) -> Double {
        Double(values.reduce(0) { $0 + $1.count }) / Double(max(values.count, 1))
    }

    /// The 1, 5 and 15 minute load averages, where the system reports them.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func output(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
