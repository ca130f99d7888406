import Strata
import StrataTestSupport
import Testing

/// `forEachUnsafe` must visit exactly what `scan` returns, in the same order.
struct BorrowedScanTests {
    static func visit(_ tx: some ReadableTransaction, from: [UInt8], to: [UInt8]?, reverse: Bool, limit: Int = .max) throws -> [Entry] {
        var seen: [Entry] = []
        try tx.forEachUnsafe(from: from, to: to, reverse: reverse) { key, value in
            seen.append(Entry(key: Array(key), value: Array(value)))
            return seen.count < limit
        }
        return seen
    }

    @Test func visitsWhatScanReturns() throws {
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/store", options: options)
        defer { try? store.close() }
        var random = SeededRandom(seed: 5)
        for round in 0..<20 {
            try store.write { tx in
                for _ in 0..<30 {
                    let key = [UInt8(Int.random(in: 0..<8, using: &random)), UInt8(Int.random(in: 0..<8, using: &random))]
                    if Bool.random(using: &random) { try tx.put(key, [UInt8(round)]) } else { try tx.delete(key) }
                }
            }
        }
        let bounds: [([UInt8], [UInt8]?)] = [([], nil), ([2], [5]), ([3, 3], [3, 7]), ([7, 7], nil), ([9], nil)]
        try store.read { tx in
            for (from, to) in bounds {
                for reverse in [false, true] {
                    let expected = Array(try tx.scan(from: from, to: to, reverse: reverse))
                    #expect(try Self.visit(tx, from: from, to: to, reverse: reverse) == expected, "\(from)..<\(String(describing: to)) reverse \(reverse)")
                    #expect(try Self.visit(tx, from: from, to: to, reverse: reverse, limit: 3) == Array(expected.prefix(3)))
                }
            }
        }
        // Inside a write transaction, its own writes are visited too.
        try store.write { tx in
            try tx.put([4, 4], [99])
            try tx.delete([2, 2])
            for (from, to) in bounds {
                for reverse in [false, true] {
                    let expected = Array(try tx.scan(from: from, to: to, reverse: reverse))
                    #expect(try Self.visit(tx, from: from, to: to, reverse: reverse) == expected)
                }
            }
        }
    }
}
