import Dispatch
import Foundation
import Strata
import StrataTestSupport
import Synchronization

/// One epoch of the soak, in a process the supervisor may kill at any moment: writers,
/// a bank teller moving money between accounts, readers checking snapshots, and a thread
/// that suspends and resumes the store. It runs until its standard input closes, then
/// closes the store and exits; progress and violations go to standard output as lines
/// (`P <operations>`, `V <what>`).
final class SoakChild: Sendable {
    let store: Store
    let journal: Journal
    let epoch: UInt64
    let seed: UInt64
    let writers: Int
    let stop = Atomic<Bool>(false)
    let operations = Atomic<Int>(0)
    let output = Mutex(())

    init(store: Store, journal: Journal, epoch: UInt64, seed: UInt64, writers: Int) {
        self.store = store
        self.journal = journal
        self.epoch = epoch
        self.seed = seed
        self.writers = writers
    }

    static func run(storePath: String, journalPath: String, epoch: UInt64, seed: UInt64, writers: Int) throws {
        let store = try Store(path: storePath, options: SoakWorkload.options)
        let child = SoakChild(store: store, journal: try Journal(path: journalPath), epoch: epoch, seed: seed, writers: writers)
        try child.runThreads()
        try store.close()
        child.say("P \(child.operations.load(ordering: .relaxed))")
    }

    func say(_ line: String) {
        output.withLock { _ in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }

    func violation(_ what: String) {
        say("V \(what)")
    }

    private func runThreads() throws {
        let group = DispatchGroup()
        func spawn(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }
        let me = self
        for writer in 0..<writers { spawn { me.writerLoop(writer) } }
        spawn { me.tellerLoop() }
        for reader in 0..<2 { spawn { me.readerLoop(reader) } }
        spawn { me.lifecycleLoop() }
        spawn {
            while !me.stop.load(ordering: .relaxed) {
                me.say("P \(me.operations.load(ordering: .relaxed))")
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        // Standard input closing is the supervisor's request for a clean stop.
        while let line = readLine(), !line.isEmpty {}
        stop.store(true, ordering: .relaxed)
        group.wait()
    }

    private func random(_ stream: UInt64) -> SeededRandom {
        SeededRandom(seed: seed, stream: epoch << 8 | stream)
    }

    /// Runs `body` until it is not refused for a suspension (the lifecycle thread resumes the
    /// store shortly); false when the soak is stopping.
    private func retryingSuspended<T>(_ body: () throws -> T) throws -> T? {
        while !stop.load(ordering: .relaxed) {
            do {
                return try body()
            } catch let error as StoreError where error.code == .suspended {
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
        return nil
    }

    private func writerLoop(_ writer: Int) {
        var rng = random(UInt64(writer))
        var counter: UInt64 = 0
        while !stop.load(ordering: .relaxed) {
            counter += 1
            let txid = epoch << 32 | UInt64(writer) << 24 | counter
            var slots = Set<Int>()
            for _ in 0..<(1 + Int(rng.next() % 3)) { slots.insert(Int(rng.next() % UInt64(SoakWorkload.keysPerWriter))) }
            let writes = slots.sorted().map { (slot: $0, put: rng.next() % 5 != 0) }
            journal.append("I \(writer) \(txid) " + writes.map { "\($0.slot)=\($0.put ? "P" : "D")" }.joined(separator: " "))
            do {
                let done = try retryingSuspended {
                    try store.write { tx in
                        for write in writes {
                            let key = SoakWorkload.key(writer: writer, slot: write.slot)
                            if write.put { try tx.put(key, SoakWorkload.value(txid: txid, key: key)) } else { try tx.delete(key) }
                        }
                        return true
                    }
                }
                guard done != nil else { return }
                journal.append("A \(writer) \(txid)")
                operations.add(1, ordering: .relaxed)
            } catch {
                violation("writer \(writer): transaction \(txid) failed: \(error)")
                return
            }
        }
    }

    /// Moves money between two accounts in one transaction; the total must never change.
    private func tellerLoop() {
        var rng = random(100)
        while !stop.load(ordering: .relaxed) {
            let from = Int(rng.next() % UInt64(SoakWorkload.accounts))
            let to = (from + 1 + Int(rng.next() % UInt64(SoakWorkload.accounts - 1))) % SoakWorkload.accounts
            let fraction = rng.next() % 100
            do {
                let done = try retryingSuspended {
                    try store.write { tx in
                        func balance(_ i: Int) throws -> Int {
                            guard let bytes = try tx.get(SoakWorkload.account(i)), let value = Int(String(decoding: bytes, as: UTF8.self)) else {
                                throw SoakViolation("account \(i) is missing inside a transaction")
                            }
                            return value
                        }
                        let (a, b) = (try balance(from), try balance(to))
                        let amount = a * Int(fraction) / 100
                        try tx.put(SoakWorkload.account(from), Array(String(a - amount).utf8))
                        try tx.put(SoakWorkload.account(to), Array(String(b + amount).utf8))
                        return true
                    }
                }
                guard done != nil else { return }
                operations.add(1, ordering: .relaxed)
            } catch {
                violation("teller: transfer failed: \(error)")
                return
            }
        }
    }

    /// Reads the bank twice from one snapshot with a pause between (the total must hold and
    /// the snapshot must not move), and checks that every writer value names its own key.
    private func readerLoop(_ reader: Int) {
        var rng = random(200 + UInt64(reader))
        while !stop.load(ordering: .relaxed) {
            do {
                let checked = try retryingSuspended { () throws -> Bool in
                    let snapshot = store.snapshot()
                    defer { snapshot.close() }
                    let first = try snapshot.read { tx in try SoakWorkload.bankSum(tx) }
                    Thread.sleep(forTimeInterval: Double(rng.next() % 20) / 1_000)
                    let again = try snapshot.read { tx in try SoakWorkload.bankSum(tx) }
                    switch (first, again) {
                    case (.success(let a), .success(let b)) where a == SoakWorkload.bankTotal && b == a: break
                    default: violation("reader \(reader): the bank's total is \(first) then \(again) in one snapshot, not \(SoakWorkload.bankTotal)")
                    }
                    let entries = try snapshot.read { tx in try Array(tx.scan(from: Array("w".utf8), to: Array("x".utf8))) }
                    for entry in entries {
                        guard let space = entry.value.firstIndex(of: 0x20), let txid = UInt64(String(decoding: entry.value[..<space], as: UTF8.self)),
                            entry.value == SoakWorkload.value(txid: txid, key: entry.key)
                        else {
                            violation("reader \(reader): \(String(decoding: entry.key, as: UTF8.self)) holds a value no transaction wrote there")
                            continue
                        }
                    }
                    return true
                }
                guard checked != nil else { return }
                operations.add(1, ordering: .relaxed)
            } catch {
                violation("reader \(reader): \(error)")
                return
            }
        }
    }

    private func lifecycleLoop() {
        var rng = random(300)
        while !stop.load(ordering: .relaxed) {
            Thread.sleep(forTimeInterval: Double(100 + rng.next() % 400) / 1_000)
            do {
                try store.suspend()
                Thread.sleep(forTimeInterval: Double(rng.next() % 30) / 1_000)
                try store.resume()
                operations.add(1, ordering: .relaxed)
            } catch {
                violation("lifecycle: \(error)")
                return
            }
        }
    }
}
