import Foundation
import StrataIO
import StrataTestSupport
import Testing

@testable import Strata

/// `withUnsafeValue` must hand `body` exactly what `get` returns, wherever the value lives: the
/// active or a sealed memtable, level 0 or a deeper level, a mapped file or a decoded
/// (compressed, cached or not) block, and a write transaction's own writes.
@Suite struct BorrowedValueTests {
    /// Options that push a few hundred kilobytes through every level: small memtables,
    /// files and level 1.
    static func options(compressed: Bool, cacheBytes: Int, fileSystem: (any FileSystem)?) -> StoreOptions {
        var options = StoreOptions()
        options.durability = .buffered
        options.memtableBytes = 32 << 10
        options.segmentFileBytes = 32 << 10
        options.level1Bytes = 128 << 10
        options.blockCacheBytes = cacheBytes
        options.compressionFromLevel = compressed ? 0 : nil
        if let fileSystem { options.fileSystem = fileSystem }
        return options
    }

    /// Keys of 1 to 300 bytes, so some are longer than a point read's key buffer starts.
    static func key(_ i: Int) -> [UInt8] {
        let stem = Array(String(format: "k%05d", i).utf8)
        return i % 7 == 0 ? stem + Array(repeating: UInt8(i % 251), count: 60 + i % 240) : stem
    }

    static func borrowed(_ tx: some ReadableTransaction, _ key: [UInt8]) throws -> [UInt8]? {
        try tx.withUnsafeValue(key) { $0.map { Array($0) } }
    }

    /// Writes `rounds` rounds of random puts and deletes over `keyCount` keys, checking every
    /// key both ways after each round; returns the number of keys checked.
    static func exercise(_ store: Store, seed: UInt64, rounds: Int, keyCount: Int) throws -> Int {
        var random = SeededRandom(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        var checked = 0
        for round in 0..<rounds {
            try store.write { tx in
                for _ in 0..<200 {
                    let key = key(Int.random(in: 0..<keyCount, using: &random))
                    if Int.random(in: 0..<5, using: &random) == 0 {
                        try tx.delete(key)
                        model[key] = nil
                    } else {
                        let value = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                        try tx.put(key, value)
                        model[key] = value
                    }
                }
            }
            if round == rounds / 2 { try store.compact() }
            try store.read { tx in
                for i in 0..<keyCount {
                    let key = key(i)
                    let expected = model[key]
                    let copied = try tx.get(key)
                    let borrowed = try borrowed(tx, key)
                    #expect(copied == expected, "seed \(seed) round \(round): get \(i)")
                    #expect(borrowed == expected, "seed \(seed) round \(round): withUnsafeValue \(i)")
                    checked += 1
                }
            }
        }
        return checked
    }

    @Test(arguments: [false, true])
    func borrowedValuesMatchGetOnSimulatedFiles(compressed: Bool) throws {
        let seed = TestEnvironment.seed(41, test: "BorrowedValueTests.simulated")
        // A simulated file system maps nothing: every block is decoded. With no cache, a
        // decoded block is held only by the value borrowed from it.
        for cacheBytes in [0, 64 << 10] {
            let store = try Store(path: "/store", options: Self.options(compressed: compressed, cacheBytes: cacheBytes, fileSystem: SimulatedFileSystem()))
            defer { try? store.close() }
            let checked = try Self.exercise(store, seed: seed, rounds: 12, keyCount: 600)
            #expect(checked == 12 * 600)
            #expect(try store.stats().levels.dropFirst().contains { $0.files > 0 }, "the data reached a level below 0")
        }
    }

    @Test func borrowedValuesMatchGetOnMappedFiles() async throws {
        let seed = TestEnvironment.seed(43, test: "BorrowedValueTests.mapped")
        try await TestEnvironment.withTemporaryDirectory("borrowed-value") { path in
            let store = try Store(path: path, options: Self.options(compressed: false, cacheBytes: 0, fileSystem: nil))
            defer { try? store.close() }
            _ = try Self.exercise(store, seed: seed, rounds: 12, keyCount: 600)
        }
    }

    @Test func aWriteTransactionBorrowsItsOwnWritesFirst() throws {
        let store = try Store(path: "/store", options: Self.options(compressed: false, cacheBytes: 0, fileSystem: SimulatedFileSystem()))
        defer { try? store.close() }
        try store.write { tx in
            try tx.put([1], [10])
            try tx.put([2], [20])
        }
        try store.write { tx in
            try tx.put([1], [11])
            try tx.delete([2])
            try tx.put([3], [])
            #expect(try Self.borrowed(tx, [1]) == [11])
            #expect(try Self.borrowed(tx, [2]) == nil)
            #expect(try Self.borrowed(tx, [3]) == [])
            #expect(try Self.borrowed(tx, [4]) == nil)
        }
        try store.read { tx in
            #expect(try Self.borrowed(tx, [1]) == [11])
            #expect(try Self.borrowed(tx, [2]) == nil)
            // An empty value is not an absent one.
            #expect(try tx.withUnsafeValue([3]) { $0?.count } == 0)
            let missing = try tx.withUnsafeValue("missing") { $0 == nil }
            #expect(missing)
        }
    }

    struct BodyFailed: Error, Equatable {}

    @Test func bodyErrorsAndBadKeysThrowAsGetDoes() throws {
        let store = try Store(path: "/store", options: Self.options(compressed: false, cacheBytes: 0, fileSystem: SimulatedFileSystem()))
        defer { try? store.close() }
        try store.write { tx in try tx.put([1], [10]) }
        try store.read { tx in
            #expect(throws: BodyFailed()) { try tx.withUnsafeValue([1]) { _ in throw BodyFailed() } }
            #expect(throws: BodyFailed()) { try tx.withUnsafeValue([9]) { _ in throw BodyFailed() } }
            let tooLong = [UInt8](repeating: 1, count: StoreLimits.maxKeyBytes + 1)
            let viaGet = #expect(throws: StoreError.self) { try tx.get(tooLong) }
            let borrowed = #expect(throws: StoreError.self) { try tx.withUnsafeValue(tooLong) { _ in 0 } }
            #expect(borrowed?.code == viaGet?.code)
            #expect(borrowed?.code == .invalidArgument)
        }
    }
}
