import StrataTestSupport
import Testing

@testable import Strata

/// A write transaction finds its own earlier writes of a key through `TransactionKeyIndex`:
/// a later put or delete of the same key replaces the first, and reads inside the
/// transaction see the latest. Checked against a dictionary, over keys written out of order
/// and again, through several growths of the table.
struct TransactionKeyIndexTests {
    /// The index alone, against a dictionary: every key found at the position it was added
    /// at, none found that was not added, through growths from the smallest table.
    @Test func findsEveryKeyItAddedThroughGrowth() {
        var random = SeededRandom(seed: TestSeeds.seed(0x7A11, test: "TransactionKeyIndex"))
        var keys: [[UInt8]] = []
        var model: [[UInt8]: Int] = [:]
        let index = TransactionKeyIndex(capacity: 1)
        for _ in 0..<TestSeeds.scaled(20_000) {
            // Short keys from a small alphabet, so keys repeat and prefixes are shared.
            let key = (0..<Int.random(in: 0...6, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) }
            let found = key.withUnsafeBytes { bytes in
                index.position(of: bytes, hash: hashKey(bytes), inserting: keys.count) { keys[$0] == key }
            }
            #expect(found == model[key], "key \(key)")
            if found == nil {
                model[key] = keys.count
                keys.append(key)
            }
        }
        for (key, position) in model {
            let found = key.withUnsafeBytes { bytes in index.position(of: bytes, hash: hashKey(bytes), inserting: nil) { keys[$0] == key } }
            #expect(found == position)
        }
        let absent: [UInt8] = [9, 9, 9]
        let found = absent.withUnsafeBytes { bytes in index.position(of: bytes, hash: hashKey(bytes), inserting: nil) { keys[$0] == absent } }
        #expect(found == nil)
    }

    /// Through the store: one transaction puts and deletes random keys in random order, some
    /// many times, reading its own writes as it goes; what commits is the last write of each.
    @Test func aTransactionSeesAndCommitsTheLastWriteOfEachKey() throws {
        var random = SeededRandom(seed: TestSeeds.seed(0x7A12, test: "TransactionKeyIndex.store"))
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/store", options: options)
        defer { try? store.close() }
        try store.write { tx in
            for i in 0..<100 { try tx.put(Array("k\(1000 + i)".utf8), [0]) }
        }
        var model: [[UInt8]: [UInt8]] = [:]
        for i in 0..<100 { model[Array("k\(1000 + i)".utf8)] = [0] }
        try store.write { tx in
            // In order first (no index yet), then out of order (the index is built from
            // what came before), repeats and deletes.
            for i in 0..<50 {
                let key = Array("k\(2000 + i)".utf8)
                try tx.put(key, [1])
                model[key] = [1]
            }
            for step in 0..<TestSeeds.scaled(6_000) {
                let key = Array("k\(Int.random(in: 1000..<2100, using: &random))".utf8)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    try tx.delete(key)
                    model[key] = nil
                } else {
                    let value = [UInt8(truncatingIfNeeded: step), UInt8(truncatingIfNeeded: step >> 8)]
                    try tx.put(key, value)
                    model[key] = value
                }
                if step % 7 == 0 {
                    let probe = Array("k\(Int.random(in: 1000..<2100, using: &random))".utf8)
                    #expect(try tx.get(probe) == model[probe], "own write of \(String(decoding: probe, as: UTF8.self))")
                }
            }
        }
        try store.read { tx in
            var seen = 0
            for entry in try tx.scan(from: [], to: nil) {
                #expect(model[entry.key] == entry.value, "committed \(String(decoding: entry.key, as: UTF8.self))")
                seen += 1
            }
            #expect(seen == model.count)
        }
    }
}
