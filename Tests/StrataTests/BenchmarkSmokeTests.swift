import Foundation
import StrataBenchmarkKit
// Every standard workload, tiny, on Strata alone: the benchmark code (drivers, checks, JSON
// lines) runs with the test suite and cannot rot. The figures themselves mean nothing here.
import StrataIO
import Synchronization
import Testing

@Suite("BenchmarkSmoke")
struct BenchmarkSmokeTests {
    static func tinySettings() -> BenchmarkSettings {
        var settings = BenchmarkSettings(keyCount: 2000)
        settings.batchSize = 250
        settings.syncCommits = 40
        settings.commitsPerThread = 5
        return settings
    }

    @Test func everyWorkloadRunsVerifiedOnStrata() async throws {
        try await TestEnvironment.withTemporaryDirectory("bench-smoke") { directory in
            let settings = Self.tinySettings()
            let runner = BenchmarkRunner(settings: settings, directory: directory)
            let results = try runner.run(StrataEngine(), workloads: Workload.allCases)

            #expect(results.map(\.workload) == Workload.allCases)
            for result in results {
                #expect(result.engine == "strata")
                #expect(result.seconds > 0, "\(result.workload): no time measured")
                #expect(!result.verification.isEmpty, "\(result.workload): nothing checked")
                let expectedOps =
                    switch result.workload {
                    case .fillsync: settings.syncCommits
                    case .syncconc8: settings.concurrentThreads * settings.commitsPerThread
                    case .fillsingle, .fillrandom1k, .readrandom1k: settings.keyCount / 10
                    default: settings.keyCount
                    }
                #expect(result.ops == expectedOps, "\(result.workload)")

                // The JSON line: the page's five fields, in its order, and it reads back.
                let line = result.jsonLine
                #expect(line.hasPrefix("{\"engine\":\"strata\",\"workload\":\"\(result.workload.rawValue)\",\"ops\":\(result.ops),\"seconds\":"))
                #expect(line.contains(",\"ops_per_s\":"))
                #expect(!line.contains("\n"))
                let parsed = try BenchmarkResult(jsonLine: line)
                #expect(parsed.engine == result.engine && parsed.workload == result.workload && parsed.ops == result.ops)
                #expect(abs(parsed.seconds - result.seconds) < 1e-6)
                // Strata reports its write stalls for every workload (none, at this size).
                let stalls = try #require(result.writeStalls, "\(result.workload): no write stalls reported")
                #expect(stalls.count >= 0 && stalls.seconds >= 0)
                #expect(parsed.writeStalls?.count == stalls.count)
            }
            // Overwrite ends with a full compaction, so it carries no "no compaction" note.
            let overwrite = try #require(results.first { $0.workload == .overwrite })
            #expect(overwrite.note == nil)
            // Nothing left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test func readsAloneMakeTheirOwnStore() async throws {
        try await TestEnvironment.withTemporaryDirectory("bench-smoke-reads") { directory in
            let runner = BenchmarkRunner(settings: Self.tinySettings(), directory: directory)
            let results = try runner.run(StrataEngine(), workloads: [.readseq, .readrandom])
            #expect(results.map(\.workload) == [.readrandom, .readseq])
        }
    }

    /// The 1k rows as the workload page defines them: N/10 puts in transactions of 100, then
    /// N/10 gets of keys the fill wrote (they once ran N puts in transactions of 1000).
    @Test func theOneKilobyteRowsFollowTheWorkloadPage() async throws {
        try await TestEnvironment.withTemporaryDirectory("bench-smoke-1k") { directory in
            let settings = Self.tinySettings()
            let engine = InMemoryEngine()
            let runner = BenchmarkRunner(settings: settings, directory: directory)
            let results = try runner.run(engine, workloads: [.fillrandom1k, .readrandom1k])
            let tenth = settings.keyCount / 10
            #expect(results.map(\.ops) == [tenth, tenth])
            let log = engine.log.withLock { $0 }
            #expect(log.transactionSizes == Array(repeating: 100, count: tenth / 100))
            #expect(log.valueLengths == [1000])
            // Every key of 0..<N/10, each once (counts, so a failure prints two numbers).
            #expect(log.keysPut.count == tenth)
            #expect(log.keysPut.filter { (BenchmarkKey.index(of: $0) ?? tenth) < tenth }.count == tenth)
            // The timed gets (the checking scan is not a get), all of keys the fill wrote.
            #expect(log.gets.count == tenth)
            #expect(log.gets.filter { !log.keysPut.contains($0) }.count == 0)
        }
    }

    @Test func aWrongAnswerFailsTheRun() async throws {
        try await TestEnvironment.withTemporaryDirectory("bench-smoke-wrong") { directory in
            let runner = BenchmarkRunner(settings: Self.tinySettings(), directory: directory)
            #expect {
                _ = try runner.run(InMemoryEngine(forgetful: true), workloads: [.fillseq])
            } throws: { error in
                guard let failure = error as? BenchmarkCheckFailure else { return false }
                return failure.engine == "forgetful" && failure.workload == .fillseq
            }
            #expect {
                _ = try runner.run(InMemoryEngine(forgetful: true), workloads: [.readrandom])
            } throws: { error in
                (error as? BenchmarkCheckFailure)?.workload == .fillrandom
            }
        }
    }

    @Test func dataRules() throws {
        #expect(BenchmarkKey.make(42) == Array("0000000000000042".utf8))
        #expect(BenchmarkKey.make(9_999_999_999_999_999) == Array("9999999999999999".utf8))
        #expect(BenchmarkKey.index(of: BenchmarkKey.make(123_456)) == 123_456)
        #expect(BenchmarkKey.make(9).lexicographicallyPrecedes(BenchmarkKey.make(10)))

        var values = BenchmarkValues(seed: 7)
        let first = values.next()
        let second = values.next()
        #expect(first.count == 100 && second.count == 100 && first != second)
        var again = BenchmarkValues(seed: 7)
        #expect(again.next() == first)
        #expect(Set(first).count > 50, "values should look random")

        let permutation = BenchmarkRandom.permutation(count: 1000, seed: 3)
        #expect(permutation.sorted() == Array(0..<1000))
        #expect(permutation != Array(0..<1000))
        #expect(permutation == BenchmarkRandom.permutation(count: 1000, seed: 3))

        #expect(try Workload.parseList("overwrite, fillseq") == [.fillseq, .overwrite])
        #expect(try Workload.parseList("") == Workload.allCases)
        #expect(throws: BenchmarkUsageError.self) { try Workload.parseList("fillsequential") }
    }

    @Test func jsonLineEscapesTheNote() throws {
        let result = BenchmarkResult(
            engine: "strata", workload: .fillseq, ops: 1_000_000, seconds: 0.91,
            note: "a \"quoted\" note", verification: "checked")
        #expect(result.jsonLine == #"{"engine":"strata","workload":"fillseq","ops":1000000,"seconds":0.91,"ops_per_s":1098901,"note":"a \"quoted\" note"}"#)
        #expect(try BenchmarkResult(jsonLine: result.jsonLine).note == "a \"quoted\" note")
    }

    @Test func jsonLineCarriesTheRunsN() throws {
        let result = BenchmarkResult(
            engine: "lmdb", workload: .readrandom, ops: 500, seconds: 0.5, num: 10_000_000, verification: "checked")
        #expect(result.jsonLine == #"{"engine":"lmdb","workload":"readrandom","ops":500,"seconds":0.5,"ops_per_s":1000,"num":10000000}"#)
        #expect(try BenchmarkResult(jsonLine: result.jsonLine).num == 10_000_000)
        #expect(try BenchmarkResult(jsonLine: #"{"engine":"lmdb","workload":"readrandom","ops":5,"seconds":1,"ops_per_s":5}"#).num == nil)
    }

    @Test func jsonLineCarriesWriteStalls() throws {
        var result = BenchmarkResult(engine: "strata", workload: .fillrandom1k, ops: 1000, seconds: 2, verification: "checked")
        result.writeStalls = WriteStalls(count: 3, seconds: 1.23456)
        #expect(
            result.jsonLine
                == #"{"engine":"strata","workload":"fillrandom1k","ops":1000,"seconds":2.0,"ops_per_s":500,"write_stalls":3,"write_stall_seconds":1.235}"#)
        #expect(try BenchmarkResult(jsonLine: result.jsonLine).writeStalls == WriteStalls(count: 3, seconds: 1.235))
        #expect(WriteStalls(count: 5, seconds: 2).since(WriteStalls(count: 2, seconds: 0.5)) == WriteStalls(count: 3, seconds: 1.5))
    }
}

/// An in-memory engine that records what the driver asks of it and, when `forgetful`, loses
/// every 100th put (the checks must catch that).
private final class InMemoryEngine: BenchmarkEngine, Sendable {
    struct Log {
        var map: [[UInt8]: Int] = [:]
        var puts = 0
        var transactionSizes: [Int] = []
        var valueLengths: Set<Int> = []
        var keysPut: Set<[UInt8]> = []
        var gets: [[UInt8]] = []
    }
    let log = Locked(Log())
    let forgetful: Bool

    init(forgetful: Bool = false) {
        self.forgetful = forgetful
    }

    var name: String { forgetful ? "forgetful" : "recording" }
    var displayName: String { forgetful ? "Forgetful" : "Recording" }
    func configuration(for durability: BenchmarkDurability) -> String { forgetful ? "in memory, loses puts" : "in memory, records every call" }
    var compaction: CompactionSupport { .notApplicable("in memory") }

    func open(directory: String, durability: BenchmarkDurability) throws -> any BenchmarkStore {
        Store(engine: self)
    }

    final class Store: BenchmarkStore {
        let engine: InMemoryEngine
        init(engine: InMemoryEngine) { self.engine = engine }

        func write(_ pairs: [KeyValue]) throws {
            engine.log.withLock { log in
                log.transactionSizes.append(pairs.count)
                for pair in pairs {
                    log.puts += 1
                    log.valueLengths.insert(pair.value.count)
                    log.keysPut.insert(pair.key)
                    if !engine.forgetful || log.puts % 100 != 0 { log.map[pair.key] = pair.value.count }
                }
            }
        }

        func sync() throws {}
        func close() throws {}
        func makeReader() throws -> any BenchmarkReader { Reader(engine: engine) }

        final class Reader: BenchmarkReader {
            let engine: InMemoryEngine
            init(engine: InMemoryEngine) { self.engine = engine }
            func valueLength(_ key: [UInt8]) throws -> Int? {
                engine.log.withLock { log in
                    log.gets.append(key)
                    return log.map[key]
                }
            }
            func scanAll(expectedValueLength: Int) throws -> ScanTally {
                engine.log.withLock { log in
                    ScanTally(entries: log.map.count, wrongValueLengths: log.map.values.filter { $0 != expectedValueLength }.count)
                }
            }
            func close() {}
        }
    }
}
