import Foundation
import Strata
import StrataTestSupport
import Testing

// `WriteTransaction.savepoint`: a step that throws is undone, so the transaction is exactly
// as before it (its reads, its scans, what it commits), and a step that returns keeps its
// writes. Checked by hand for the shapes that matter (a key replaced in the step, nesting,
// writes in key order and out of it), and against a model with random steps.

private struct StepFailed: Error {}

private func withStore<T>(_ body: (Store) throws -> T) throws -> T {
    let directory = try TemporaryDirectory(label: "savepoints")
    defer { directory.remove() }
    let store = try Store(path: directory.path("store"))
    defer { try? store.close() }
    return try body(store)
}

private func allEntries(_ store: Store) throws -> [String: String] {
    try store.read { tx in
        var found: [String: String] = [:]
        for entry in try tx.scan(from: [], to: nil) { found[String(decoding: entry.key, as: UTF8.self)] = String(decoding: entry.value, as: UTF8.self) }
        return found
    }
}

@Suite struct SavepointTests {
    @Test("a step that throws is undone; the writes around it commit")
    func undoneStep() throws {
        try withStore { store in
            try store.write { tx in try tx.put("kept", "old") }
            try store.write { tx in
                try tx.put("a", "1")
                try tx.put("kept", "new")
                #expect(throws: StepFailed.self) {
                    try tx.savepoint {
                        try tx.put("b", "2")
                        try tx.put("a", "replaced")
                        try tx.put("a", "replaced again")
                        try tx.delete("kept")
                        throw StepFailed()
                    }
                }
                #expect(try tx.get("a", as: String.self) == "1")
                #expect(try tx.get("b", as: String.self) == nil)
                #expect(try tx.get("kept", as: String.self) == "new")
                #expect(try tx.scan(prefix: "").map { String(decoding: $0.key, as: UTF8.self) } == ["a", "kept"])
                try tx.put("c", "3")
            }
            #expect(try allEntries(store) == ["a": "1", "kept": "new", "c": "3"])
        }
    }

    @Test("a step that returns keeps its writes and its value")
    func keptStep() throws {
        try withStore { store in
            let value = try store.write { tx in
                try tx.savepoint {
                    try tx.put("a", "1")
                    return 7
                }
            }
            #expect(value == 7)
            #expect(try allEntries(store) == ["a": "1"])
        }
    }

    @Test("nested savepoints: an inner undo keeps the outer step's writes; an outer undo drops the inner ones")
    func nested() throws {
        try withStore { store in
            try store.write { tx in
                try tx.savepoint {
                    try tx.put("outer", "1")
                    _ = try? tx.savepoint {
                        try tx.put("inner", "1")
                        try tx.put("outer", "inner's")
                        throw StepFailed()
                    }
                    #expect(try tx.get("outer", as: String.self) == "1")
                }
                _ = try? tx.savepoint {
                    try tx.savepoint { try tx.put("kept by inner", "1") }
                    throw StepFailed()
                }
                #expect(try tx.get("kept by inner", as: String.self) == nil)
            }
            #expect(try allEntries(store) == ["outer": "1"])
        }
    }

    @Test("an undo of keys written in ascending order, then more writes in and out of order")
    func keyOrderAfterUndo() throws {
        try withStore { store in
            try store.write { tx in
                for i in 0..<10 { try tx.put("k\(i)", "v\(i)") }
                _ = try? tx.savepoint {
                    for i in 10..<20 { try tx.put("k\(i)", "undone") }
                    try tx.put("k0", "undone")
                    throw StepFailed()
                }
                // In order again after the undo, then a repeat and one out of order.
                try tx.put("k90", "x")
                try tx.put("k5", "five")
                try tx.put("a", "first")
                #expect(try tx.get("k5", as: String.self) == "five")
                #expect(try tx.get("k15", as: String.self) == nil)
            }
            var expected: [String: String] = [:]
            for i in 0..<10 { expected["k\(i)"] = "v\(i)" }
            expected["k5"] = "five"
            expected["k90"] = "x"
            expected["a"] = "first"
            #expect(try allEntries(store) == expected)
        }
    }

    @Test("a refused call inside a step is undone with the step")
    func refusedCallInStep() throws {
        try withStore { store in
            try store.write { tx in
                _ = #expect(throws: StoreError.self) {
                    try tx.savepoint {
                        try tx.put("a", "1")
                        try tx.put([UInt8](repeating: 1, count: StoreLimits.maxKeyBytes + 1), [])
                    }
                }
            }
            #expect(try allEntries(store).isEmpty)
            #expect(store.version == 0)
        }
    }

    @Test("random steps, nested and failing, against a model")
    func randomAgainstModel() throws {
        let seed = TestSeeds.seed(0x5A5E_901D, test: "SavepointTests.randomAgainstModel")
        var random = SeededRandom(seed: seed)
        try withStore { store in
            var committed: [String: String] = [:]
            for round in 0..<TestSeeds.scaled(40) {
                var model = committed
                try store.write { tx in
                    func step(depth: Int) throws {
                        let saved = model
                        do {
                            try tx.savepoint {
                                for _ in 0..<Int.random(in: 0..<12, using: &random) {
                                    let key = "k\(Int.random(in: 0..<30, using: &random))"
                                    switch Int.random(in: 0..<10, using: &random) {
                                    case 0..<6:
                                        let value = "r\(round)-\(Int.random(in: 0..<1000, using: &random))"
                                        try tx.put(key, value)
                                        model[key] = value
                                    case 6..<8:
                                        try tx.delete(key)
                                        model[key] = nil
                                    case 8:
                                        if depth < 3 { try step(depth: depth + 1) }
                                    default:
                                        #expect(try tx.get(key, as: String.self) == model[key], "seed \(seed), round \(round)")
                                    }
                                }
                                if Int.random(in: 0..<3, using: &random) == 0 { throw StepFailed() }
                            }
                        } catch is StepFailed {
                            model = saved
                        }
                    }
                    try step(depth: 0)
                    let seen = try tx.scan(prefix: "").map { (String(decoding: $0.key, as: UTF8.self), String(decoding: $0.value, as: UTF8.self)) }
                    #expect(seen.map(\.0) == model.keys.sorted(), "seed \(seed), round \(round)")
                    #expect(Dictionary(uniqueKeysWithValues: seen) == model, "seed \(seed), round \(round)")
                }
                committed = model
                let stored = try allEntries(store)
                if stored != committed {
                    Issue.record("seed \(seed) (replay with STRATA_SEED=\(seed)), round \(round): store \(stored), model \(committed)")
                    return
                }
            }
        }
    }

    @Test("a deleteRange the transaction's size limit refuses midway deletes nothing")
    func deleteRangeRefusedMidway() throws {
        try withStore { store in
            // Ten keys of 1,000 bytes; deleting them adds their key bytes to the transaction.
            let doomed = (0..<10).map { index in [UInt8(ascii: "d"), UInt8(index)] + [UInt8](repeating: 0x2E, count: 998) }
            try store.write { tx in for key in doomed { try tx.put(key, "x") } }
            // The transaction is thrown away at the end: only what it read inside counts.
            do {
                try store.write { tx in
                    // Fill the transaction to 2,500 bytes under its limit: room for two deletes.
                    let big = [UInt8](repeating: 1, count: StoreLimits.maxValueBytes - 1)
                    let fitting = StoreLimits.maxTransactionBytes / StoreLimits.maxValueBytes - 1
                    for index in 0..<fitting { try tx.put([UInt8(index)], big) }
                    try tx.put([0xF0], [UInt8](repeating: 1, count: StoreLimits.maxValueBytes - 1 - 2_500))
                    let error = #expect(throws: StoreError.self) { try tx.deleteRange(from: [UInt8(ascii: "d")], to: [UInt8(ascii: "e")]) }
                    #expect(error?.code == .invalidArgument)
                    for key in doomed { #expect(try tx.get(key) == Array("x".utf8), "a refused deleteRange deleted a key") }
                    throw StepFailed()
                }
            } catch is StepFailed {}
        }
    }
}
