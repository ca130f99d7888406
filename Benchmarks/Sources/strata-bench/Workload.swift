import Foundation
import Strata

/// One measured run: what the WORKLOADS page calls a result line.
struct BenchResult: Codable {
    var engine: String
    var workload: String
    var ops: Int
    var seconds: Double
    var ops_per_s: Double
}

/// Key i of the standard workloads: 16 ASCII digits, zero-padded, so byte order is numeric.
func benchKey(_ i: Int) -> [UInt8] {
    let digits = String(i)
    return Array((String(repeating: "0", count: max(0, 16 - digits.count)) + digits).utf8)
}

/// 100 pseudo-random bytes, fresh for every put.
struct ValueSource {
    var state: UInt64
    mutating func next() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 100)
        for i in stride(from: 0, to: 100, by: 8) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            var word = state ^ (state >> 29)
            for j in i..<min(i + 8, 100) {
                bytes[j] = UInt8(truncatingIfNeeded: word)
                word >>= 8
            }
        }
        return bytes
    }
}

func measure(_ body: () throws -> Int) rethrows -> (ops: Int, seconds: Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let ops = try body()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return (ops, seconds)
}

/// Strata's side of the synced-commit workloads.
enum StrataWorkloads {
    /// fillsync: `count` transactions of one put each, each durable before the next starts.
    static func fillsync(directory: String, count: Int) throws -> BenchResult {
        let store = try Store(path: directory)
        defer { try? store.close() }
        var values = ValueSource(state: 1)
        let (ops, seconds) = try measure {
            for i in 0..<count {
                let value = values.next()
                try store.write(durability: .synced) { tx in try tx.put(benchKey(i), value) }
            }
            return count
        }
        try verify(store, keys: count)
        return BenchResult(engine: "strata", workload: "fillsync", ops: ops, seconds: seconds, ops_per_s: Double(ops) / seconds)
    }

    /// syncconc8: `threads` threads at once, each `count / threads` synced one-put transactions.
    static func syncconc(directory: String, count: Int, threads: Int) throws -> BenchResult {
        let store = try Store(path: directory)
        defer { try? store.close() }
        let perThread = count / threads
        let failures = FailureBox()
        let (ops, seconds) = measure {
            // Real threads, not concurrentPerform: that runs only as many workers as there are
            // cores, and the workload is about 8 writers waiting at once.
            let group = DispatchGroup()
            for t in 0..<threads {
                group.enter()
                let thread = Thread {
                    var values = ValueSource(state: UInt64(t + 1))
                    for i in 0..<perThread {
                        let value = values.next()
                        do {
                            try store.write(durability: .synced) { tx in try tx.put(benchKey(t * perThread + i), value) }
                        } catch {
                            failures.record(error)
                        }
                    }
                    group.leave()
                }
                thread.start()
            }
            group.wait()
            return perThread * threads
        }
        if let error = failures.first { throw error }
        try verify(store, keys: perThread * threads)
        return BenchResult(engine: "strata", workload: "syncconc\(threads)", ops: ops, seconds: seconds, ops_per_s: Double(ops) / seconds)
    }

    /// A wrong answer fails the run: every key is there with a 100-byte value.
    static func verify(_ store: Store, keys: Int) throws {
        let entries = try store.read { tx in try tx.scan(from: []).map { $0 } }
        guard entries.count == keys, entries.allSatisfy({ $0.value.count == 100 }) else {
            throw BenchError.wrongAnswer("expected \(keys) entries of 100 bytes, found \(entries.count)")
        }
    }
}

enum BenchError: Error, CustomStringConvertible {
    case wrongAnswer(String)
    var description: String {
        switch self {
        case .wrongAnswer(let text): return "wrong answer: \(text)"
        }
    }
}

final class FailureBox: @unchecked Sendable {
    // @unchecked Sendable: `errors` is only touched under `lock`.
    private let lock = NSLock()
    private var errors: [any Error] = []
    func record(_ error: any Error) { lock.withLock { errors.append(error) } }
    var first: (any Error)? { lock.withLock { errors.first } }
}
