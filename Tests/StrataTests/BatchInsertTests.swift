// A commit's writes go from the transaction's batch buffer (BatchBuffer) to the log as they
// are, and into the memtable in one pass that indexes each node a few inserts late
// (MemTable.insert(count:sequence:_:)). These check both against plain models: the bytes
// against BatchFormat.Encoder's, the table against a dictionary, and a transaction that
// rewrites its own keys through a reopen. Replay a failure with STRATA_SEED=<seed>.
import Foundation
@_spi(Engine) import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@_spi(Testing) @testable import Strata

@Suite("BatchInsert")
struct BatchInsertTests {
    static func randomBytes(_ random: inout SeededRandom, maxCount: Int) -> [UInt8] {
        (0..<Int(random.next() % UInt64(maxCount + 1))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// Operations stored in place read back as the encoder's: value lengths of one and two
    /// varint bytes, empty keys and values, deletes, and growth from a small buffer.
    @Test func bufferHoldsTheEncodersBytes() {
        let seed = TestSeeds.seed(0xBA7C, test: "bufferHoldsTheEncodersBytes")
        var random = SeededRandom(seed: seed)
        for round in 0..<50 {
            let buffer = BatchBuffer(capacity: 1)
            var encoder = BatchFormat.Encoder(sequence: UInt64(round) + 7, syncedThrough: 4_096)
            var operations = 0
            for _ in 0..<Int(random.next() % 40) {
                let key = Self.randomBytes(&random, maxCount: 20)
                let value: [UInt8]? = random.next() % 4 == 0 ? nil : Self.randomBytes(&random, maxCount: 300)
                let stored = key.withUnsafeBytes { k in
                    value.map { v in v.withUnsafeBytes { buffer.append(key: k, value: $0) } } ?? buffer.append(key: k, value: nil)
                }
                #expect(Array(buffer.bytes(at: stored.key, count: key.count)) == key, "seed \(seed)")
                if let value {
                    #expect(Array(buffer.bytes(at: stored.value, count: value.count)) == value, "seed \(seed)")
                    encoder.put(key, value)
                } else {
                    encoder.delete(key)
                }
                operations += 1
            }
            buffer.finish(sequence: UInt64(round) + 7, syncedThrough: 4_096, operations: operations)
            #expect(Array(buffer.payload) == encoder.finish(), "seed \(seed), round \(round)")
        }
    }

    /// Batches of every size around the index lag: each key's newest version is found through
    /// the index, older snapshots still see theirs, while the index grows.
    @Test func batchInsertIndexesEveryNode() {
        let seed = TestSeeds.seed(0x1A6, test: "batchInsertIndexesEveryNode")
        var random = SeededRandom(seed: seed)
        let table = MemTable(runLength: 64)
        var model: [[UInt8]: [(sequence: UInt64, value: [UInt8]?)]] = [:]
        var sequence: UInt64 = 0
        let lag = MemTable.indexLag
        for count in [0, 1, lag - 1, lag, lag + 1, 3 * lag + 5, 2_000, 5, 4_000] {
            sequence += 1
            var keys = Set<[UInt8]>()
            while keys.count < count { keys.insert(Array("k\(random.next() % 6_000)".utf8)) }
            var ordered = Array(keys)
            if random.next() % 2 == 0 { ordered.sort { $0.lexicographicallyPrecedes($1) } }
            let values: [[UInt8]?] = ordered.map { _ in random.next() % 5 == 0 ? nil : Self.randomBytes(&random, maxCount: 12) }
            // Pointers that stay valid through the call: every key and value copied to one block.
            var block: [UInt8] = []
            var spans: [(key: Range<Int>, value: Range<Int>?)] = []
            for (key, value) in zip(ordered, values) {
                let keyStart = block.count
                block += key
                let valueStart = block.count
                if let value { block += value }
                spans.append((keyStart..<(keyStart + key.count), value.map { _ in valueStart..<block.count }))
                model[key, default: []].insert((sequence, value), at: 0)
            }
            block.withUnsafeBytes { bytes in
                table.insert(count: spans.count, sequence: sequence) { i in
                    (UnsafeRawBufferPointer(rebasing: bytes[spans[i].key]), spans[i].value.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) })
                }
            }
            #expect(table.count == model.values.reduce(0) { $0 + $1.count }, "seed \(seed)")
        }
        table.checkInvariants()
        for (key, versions) in model {
            for at in [sequence, sequence / 2, 1] {
                let expected = versions.first { $0.sequence <= at }
                let found = key.withUnsafeBytes { table.findVisible($0, at: at) }
                #expect(found?.sequence == expected?.sequence, "key \(key) at \(at), seed \(seed)")
                if let found, let expected {
                    #expect(found.isTombstone == (expected.value == nil), "seed \(seed)")
                    if let value = expected.value { #expect(Array(found.value) == value, "seed \(seed)") }
                }
            }
        }
    }

    /// The order the memtable inserts a transaction's writes in is their key order, a
    /// permutation of them: keys sharing long prefixes, equal in the six bytes the sort packs
    /// and differing after them, shorter than the shared prefix plus eight, and more writes
    /// than the packed sort takes (65,536).
    @Test func keyOrderIsThePermutationInKeyOrder() throws {
        let seed = TestSeeds.seed(0x50E7, test: "keyOrderIsThePermutationInKeyOrder")
        var random = SeededRandom(seed: seed)
        for count in [0, 1, 2, 3, 50, 1_000, 70_000] {
            let transaction = WriteTransaction(head: Version(memtable: MemTable(), storeID: UUID(), droppedDeletions: 0), version: 0)
            var written = Set<[UInt8]>()
            while written.count < count {
                // A shared prefix, a few values of the next six bytes, then a tail of 0 to 3.
                var key: [UInt8] = Array("user/".utf8)
                key += (0..<6).map { _ in UInt8(ascii: "a") + UInt8(random.next() % 2) }
                key += (0..<Int(random.next() % 4)).map { _ in UInt8(truncatingIfNeeded: random.next() % 3) }
                if count > 1_000 { key += withUnsafeBytes(of: UInt32(written.count).bigEndian, Array.init) }
                if written.insert(key).inserted { try transaction.put(key, [1]) }
            }
            let keys = transaction.entries.map { Array(transaction.key(of: $0)) }
            let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
            if let order = transaction.keyOrder() {
                #expect(order.map { keys[$0] } == sorted, "\(count) writes, seed \(seed)")
            } else {
                #expect(keys == sorted, "\(count) writes given no order though not in key order, seed \(seed)")
            }
        }
    }

    /// A transaction that writes keys again, deletes one it wrote and writes it once more:
    /// its own reads see the last write, observers and change feeds get one change per key,
    /// and after a reopen (the log replayed, where a key twice in one batch would break the
    /// memtable's invariant 4) the store holds the last write of each.
    @Test func rewrittenKeysCommitTheirLastWrite() async throws {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        let store = try Store(path: "/store", options: options)
        let feed = store.changes(from: [], to: nil)
        try Self.writeRewrites(store)
        var changes: [Change] = []
        for try await change in feed {
            changes.append(change)
            if changes.count == 4 { break }
        }
        #expect(changes.map(\.key) == [[1], [2], [3], Array(repeating: 9, count: 40)])
        #expect(changes.map(\.value) == [[11], [21], [30], nil])
        try store.close()
        try Self.checkLastWrites(options)
    }

    static func writeRewrites(_ store: Store) throws {
        try store.write { tx in
            try tx.put([1], [10])
            try tx.put([2], [20])
            try tx.put([1], [11])
            #expect(try tx.get([1]) == [11])
            try tx.delete([2])
            #expect(try tx.get([2]) == nil)
            try tx.put([3], [30])
            try tx.put([2], [21])
            try tx.withUnsafeValue([2]) { value in
                #expect(value.map(Array.init) == [21])
                // A write while the value is borrowed: the borrowed bytes stay as they were.
                try tx.put(Array(repeating: 9, count: 40), Array(repeating: 9, count: 100_000))
                #expect(value.map(Array.init) == [21])
            }
            try tx.delete(Array(repeating: 9, count: 40))
        }
    }

    static func checkLastWrites(_ options: StoreOptions) throws {
        let reopened = try Store(path: "/store", options: options)
        defer { try? reopened.close() }
        let keys: [[UInt8]] = [[1], [2], [3], Array(repeating: 9, count: 40)]
        let values = try reopened.read { tx in try keys.map { try tx.get($0) } }
        #expect(values == [[11], [21], [30], nil])
    }
}
