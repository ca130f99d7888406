import Foundation
import Strata
import StrataTestSupport
import StrataVerifier
import Synchronization

/// Runs child processes one epoch at a time against one store, kills most of them at a
/// random moment (the others are asked to stop and close), and after each checks the store
/// against the model built from the journals: every acknowledged transaction is there, the
/// one in flight at the kill is there whole or not at all, nothing else is, the bank's total
/// holds, and the verifier finds nothing wrong.
struct SoakSupervisor {
    let directory: String
    let seed: UInt64
    let writers: Int
    let deadline: Date
    /// The model: what each writer key must hold after the last epoch checked.
    var expected: [[UInt8]: [UInt8]] = [:]
    var operations = 0
    var violations = 0
    var epochs = 0
    var kills = 0

    var storePath: String { directory + "/store" }

    mutating func run() throws {
        let store = try Store(path: storePath, options: SoakWorkload.options)
        try store.write { tx in
            for i in 0..<SoakWorkload.accounts { try tx.put(SoakWorkload.account(i), Array(String(SoakWorkload.openingBalance).utf8)) }
        }
        try store.close()
        var rng = SeededRandom(seed: seed, stream: 0xE90C)
        var lastReport = Date()
        while Date() < deadline {
            epochs += 1
            let kill = rng.next() % 4 != 0
            let seconds = 0.3 + Double(rng.next() % 3_700) / 1_000
            try runEpoch(UInt64(epochs), seconds: seconds, kill: kill)
            if Date().timeIntervalSince(lastReport) > 30 {
                print("epoch \(epochs): \(operations) operations, \(violations) violations, \(kills) kills so far")
                lastReport = Date()
            }
        }
    }

    private mutating func record(_ violation: String) {
        violations += 1
        print("violation (epoch \(epochs), seed \(seed)): \(violation)")
    }

    private mutating func runEpoch(_ epoch: UInt64, seconds: Double, kill: Bool) throws {
        let journalPath = directory + "/journal-\(epoch).txt"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        process.arguments = [
            "child", "--store", storePath, "--journal", journalPath, "--epoch", "\(epoch)", "--seed", "\(seed)", "--writers", "\(writers)"
        ]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let lines = Mutex<[String]>([])
        let reader = Thread {
            var pending = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
        }
        try process.run()
        reader.start()
        Thread.sleep(forTimeInterval: seconds)
        if kill {
            Foundation.kill(process.processIdentifier, SIGKILL)
            kills += 1
        } else {
            try input.fileHandleForWriting.close()
        }
        let started = Date()
        while process.isRunning {
            if Date().timeIntervalSince(started) > 120 {
                record("the child did not stop within 120 s of being asked; killed")
                Foundation.kill(process.processIdentifier, SIGKILL)
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.05)  // the reader drains the pipe
        let said = lines.withLock { $0 }
        if !kill && process.terminationStatus != 0 {
            record("the child exited with status \(process.terminationStatus)")
        }
        for line in said where line.hasPrefix("V ") { record("child: " + line.dropFirst(2)) }
        operations += said.last { $0.hasPrefix("P ") }.flatMap { Int($0.dropFirst(2)) } ?? 0
        try check(journal: try Journal.read(journalPath))
        try? FileManager.default.removeItem(atPath: journalPath)
    }

    /// Opens the store as the next process would, compares it with the model, closes it, and
    /// runs the verifier on the closed store.
    private mutating func check(journal: [JournalEntry]) throws {
        let store: Store
        do {
            store = try Store(path: storePath, options: SoakWorkload.options)
        } catch {
            record("the store does not open after the epoch: \(error)")
            throw error
        }
        let found = try store.read { tx in
            Dictionary(uniqueKeysWithValues: try tx.scan(from: Array("w".utf8), to: Array("x".utf8)).map { ($0.key, $0.value) })
        }
        switch try store.read({ tx in try SoakWorkload.bankSum(tx) }) {
        case .success(let sum) where sum == SoakWorkload.bankTotal: break
        case .success(let sum): record("the bank's total is \(sum), not \(SoakWorkload.bankTotal)")
        case .failure(let why): record("the bank: \(why)")
        }
        operations += 2
        try store.close()

        for entry in journal {
            let applied = entry.writes.map { write -> ([UInt8], [UInt8]?) in
                let key = SoakWorkload.key(writer: entry.writer, slot: write.slot)
                return (key, write.put ? SoakWorkload.value(txid: entry.txid, key: key) : nil)
            }
            if entry.acknowledged {
                for (key, value) in applied { expected[key] = value }
                continue
            }
            // In flight when the child ended: all of it or none of it.
            let all = applied.allSatisfy { found[$0.0] == $0.1 }
            let none = applied.allSatisfy { found[$0.0] == expected[$0.0] }
            if all && !none {
                for (key, value) in applied { expected[key] = value }
            } else if !all && !none {
                record("transaction \(entry.txid), in flight at the end, is there in part")
                for (key, value) in applied { expected[key] = found[key] ?? value.map { _ in nil } ?? nil }
            }
        }
        for key in Set(expected.keys).union(found.keys) where expected[key] != found[key] {
            let name = String(decoding: key, as: UTF8.self)
            record("\(name): the store holds \(describe(found[key])), the acknowledged commits say \(describe(expected[key]))")
            expected[key] = found[key]
        }

        let report = try Verifier.verify(path: storePath)
        operations += 1
        if !report.isClean {
            record("the verifier: " + report.findings.filter(\.isProblemLeft).map { "\($0)" }.joined(separator: "; "))
        }
    }

    private func describe(_ value: [UInt8]?) -> String {
        guard let value else { return "nothing" }
        return "the value of transaction " + String(decoding: value.prefix { $0 != 0x20 }, as: UTF8.self)
    }
}
