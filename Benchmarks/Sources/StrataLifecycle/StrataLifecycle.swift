// Suspension latency under load: how long `suspend()` takes while 8 writers run and a large
// compaction is in progress, and how long `resume()` takes, unchanged and after another
// process wrote. An app has about 5 seconds from the moment it is told it will be frozen:
// a suspension that waited for a whole merge would not fit.
//
//   swift run -c release --package-path Benchmarks strata-lifecycle --num 2000000
//
// Each cycle starts a full compaction (a merge of every file of the store, seconds long at
// this size), lets it and the writers run for a random 20 to 120 ms, then suspends: the
// suspension must abandon the merge, let the writers' group in flight commit, fail what is
// queued, sync, and release the lock. Every tenth cycle another Store opens the suspended
// store, writes and closes, so the next resume reloads.
import ArgumentParser
import Dispatch
import Foundation
import Strata
import Synchronization

@main
struct StrataLifecycle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-lifecycle", abstract: "Times suspend() and resume() under load (issue: lifecycle and suspension).")

    @Option(help: "Directory for the store (a fresh subdirectory is created and removed).")
    var dir: String = NSTemporaryDirectory()

    @Option(help: "Keys loaded before the cycles.")
    var num: Int = 2_000_000

    @Option(help: "Suspend/resume cycles.")
    var suspends: Int = 200

    @Option(help: "Writer threads running throughout.")
    var writers: Int = 8

    mutating func run() throws {
        let path = (dir as NSString).appendingPathComponent("strata-lifecycle-\(getpid())")
        try? FileManager.default.removeItem(atPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = StoreOptions()
        options.logger.logLevel = .critical
        let store = try Store(path: path, options: options)

        let loadStart = DispatchTime.now()
        let batch = 1000
        for start in stride(from: 0, to: num, by: batch) {
            try store.write(durability: .buffered) { tx in
                for i in start..<min(start + batch, num) { try tx.put(key(i), value(i)) }
            }
        }
        try store.compact()
        print("loaded \(num) keys and compacted in \(seconds(since: loadStart)) s")

        let stop = Atomic<Bool>(false)
        let committed = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        let writersDone = DispatchGroup()
        for writer in 0..<writers {
            writersDone.enter()
            Thread.detachNewThread { [num] in
                var random = SystemRandomNumberGenerator()
                while !stop.load(ordering: .relaxed) {
                    let k = Int.random(in: 0..<num, using: &random)
                    do {
                        try store.write(durability: writer % 2 == 0 ? .buffered : .synced) { tx in try tx.put(key(k), value(k &+ 1)) }
                        committed.add(1, ordering: .relaxed)
                    } catch {
                        // Suspended: an app would retry after resume; here the loop does.
                        refused.add(1, ordering: .relaxed)
                        usleep(200)
                    }
                }
                writersDone.leave()
            }
        }

        var suspendTimes: [Double] = []
        var resumeUnchanged: [Double] = []
        var resumeReloaded: [Double] = []
        var abandoned = 0
        var compactionsFinished = 0
        var random = SystemRandomNumberGenerator()
        for cycle in 0..<suspends {
            let compaction = DispatchSemaphore(value: 0)
            let outcome = Locked<(any Error)?>(nil)
            Thread.detachNewThread {
                do { try store.compact() } catch { outcome.withLock { $0 = error } }
                compaction.signal()
            }
            usleep(UInt32.random(in: 20_000...120_000, using: &random))
            let start = DispatchTime.now()
            try store.suspend()
            suspendTimes.append(milliseconds(since: start))
            compaction.wait()
            if let error = outcome.withLock({ $0 }) as? StoreError, error.code == .suspended { abandoned += 1 } else { compactionsFinished += 1 }

            if cycle % 10 == 9 {
                let other = try Store(path: path, options: options)
                try other.write { tx in try tx.put(Array("other-\(cycle)".utf8), Array("x".utf8)) }
                try other.close()
                let resumeStart = DispatchTime.now()
                let result = try store.resume()
                resumeReloaded.append(milliseconds(since: resumeStart))
                guard case .reloaded = result else { throw ValidationError("resume after another Store wrote did not reload") }
            } else {
                let resumeStart = DispatchTime.now()
                let result = try store.resume()
                resumeUnchanged.append(milliseconds(since: resumeStart))
                guard result == .unchanged else { throw ValidationError("resume reloaded though nobody else wrote") }
            }
            usleep(20_000)
        }
        stop.store(true, ordering: .relaxed)
        writersDone.wait()
        try store.close()

        print(
            "\(suspends) cycles, \(writers) writers: \(committed.load(ordering: .relaxed)) commits, \(refused.load(ordering: .relaxed)) calls refused while suspended and retried"
        )
        print("full compactions abandoned by a suspension: \(abandoned), finished before it: \(compactionsFinished)")
        report("suspend", suspendTimes)
        report("resume, unchanged", resumeUnchanged)
        report("resume, after another Store wrote (reload)", resumeReloaded)
    }
}

/// A lock around a value, for the compaction thread's outcome.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

func key(_ i: Int) -> [UInt8] { Array(String(format: "key%013d", i).utf8) }

func value(_ i: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 100)
    var x = UInt64(truncatingIfNeeded: i) &* 0x9E37_79B9_7F4A_7C15
    for j in bytes.indices {
        x ^= x >> 29
        x &*= 0xBF58_476D_1CE4_E5B9
        bytes[j] = UInt8(truncatingIfNeeded: x)
    }
    return bytes
}

func seconds(since start: DispatchTime) -> String {
    String(format: "%.1f", Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
}

func milliseconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
}

func report(_ name: String, _ times: [Double]) {
    guard !times.isEmpty else { return }
    let sorted = times.sorted()
    let median = sorted[sorted.count / 2]
    let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
    print(String(format: "%@: n=%d  median %.2f ms  p99 %.2f ms  worst %.2f ms", name, sorted.count, median, p99, sorted.last!))
}
