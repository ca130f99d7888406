import Dispatch
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// `Store.get` and `Store.withUnsafeValue`: a point read of the latest commit without a read
/// transaction. They answer what `read { tx in tx.get(key) }` answers, wherever the value
/// lives (memtable, segment file, deleted), and refuse what a transaction would refuse.
struct StorePointReadTests {
    private static func open() throws -> Store {
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        return try Store(path: "/store", options: options)
    }

    private static func key(_ i: Int) -> [UInt8] { Array("key-\(i)".utf8) }

    /// Every key as the transaction sees it: a value, or nil.
    private static func expectSameAsTransaction(_ store: Store, keys: Range<Int>) throws {
        for i in keys {
            let key = Self.key(i)
            let expected = try store.read { tx in try tx.get(key) }
            #expect(try store.get(key) == expected, "get of key \(i)")
            let borrowed = try store.withUnsafeValue(key) { $0.map { Array($0) } }
            #expect(borrowed == expected, "withUnsafeValue of key \(i)")
        }
    }

    @Test func answersWhatATransactionAnswersFromMemoryAndFiles() throws {
        let store = try Self.open()
        defer { try? store.close() }
        try store.write { tx in
            for i in 0..<300 { try tx.put(Self.key(i), Array("first-\(i)".utf8)) }
        }
        // Into segment files; then newer versions and deletions in the memtable above them.
        try store.compact()
        try store.write { tx in
            for i in stride(from: 0, to: 300, by: 3) { try tx.put(Self.key(i), Array("second-\(i)".utf8)) }
            for i in stride(from: 1, to: 300, by: 5) { try tx.delete(Self.key(i)) }
        }
        try Self.expectSameAsTransaction(store, keys: 0..<310)
        #expect(try store.get(Self.key(3)) == Array("second-3".utf8))
        #expect(try store.get(Self.key(1)) == nil)
        #expect(try store.get(Self.key(305)) == nil)
        #expect(try store.get("key-4", as: String.self) == "first-4")
        #expect(try store.withUnsafeValue("key-9") { $0?.count } == "second-9".utf8.count)
        // Deletions and newer versions pushed down into the files too.
        try store.compact()
        try Self.expectSameAsTransaction(store, keys: 0..<310)
    }

    @Test func refusesWhatATransactionRefuses() throws {
        let store = try Self.open()
        try store.write { tx in try tx.put(Self.key(1), [1]) }
        let tooLong = [UInt8](repeating: 7, count: StoreLimits.maxKeyBytes + 1)
        #expect((#expect(throws: StoreError.self) { try store.get(tooLong) })?.code == .invalidArgument)
        #expect((#expect(throws: StoreError.self) { try store.get([]) })?.code == .invalidArgument)

        try store.suspend()
        #expect((#expect(throws: StoreError.self) { try store.get(Self.key(1)) })?.code == .suspended)
        #expect((#expect(throws: StoreError.self) { try store.withUnsafeValue(Self.key(1)) { $0 != nil } })?.code == .suspended)
        try store.resume()
        #expect(try store.get(Self.key(1)) == [1])

        try store.close()
        #expect((#expect(throws: StoreError.self) { try store.get(Self.key(1)) })?.code == .closed)
        #expect((#expect(throws: StoreError.self) { try store.withUnsafeValue(Self.key(1)) { $0 != nil } })?.code == .closed)
    }

    /// The body's error reaches the caller unchanged.
    @Test func theBodysErrorReachesTheCaller() throws {
        struct Marker: Error {}
        let store = try Self.open()
        defer { try? store.close() }
        try store.write { tx in try tx.put(Self.key(1), [1]) }
        #expect(throws: Marker.self) { try store.withUnsafeValue(Self.key(1)) { _ in throw Marker() } }
    }

    /// Readers on other threads hold borrowed bytes while the writer fills memtables that are
    /// sealed, flushed and compacted away: every value they see is whole (eight copies of
    /// one byte), never a freed or half-written one. Run under ThreadSanitizer in CI.
    @Test func borrowedBytesStayValidWhileTheWriterMovesOn() throws {
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        options.memtableBytes = 64 << 10
        options.durability = .buffered
        let store = try Store(path: "/store", options: options)
        defer { try? store.close() }
        let stop = Atomic<Bool>(false)
        let torn = Atomic<Int>(0)
        let readers = DispatchGroup()
        for t in 0..<2 {
            DispatchQueue.global().async(group: readers) {
                var random = SeededRandom(seed: TestSeeds.seed(0x9017 + UInt64(t), test: "StorePointRead.reader\(t)"))
                while !stop.load(ordering: .acquiring) {
                    let key = Self.key(Int.random(in: 0..<500, using: &random))
                    let whole =
                        (try? store.withUnsafeValue(key) { value -> Bool in
                            guard let value else { return true }
                            return value.count == 8 && value.allSatisfy { $0 == value[0] }
                        }) ?? true
                    if !whole { torn.add(1, ordering: .relaxed) }
                }
            }
        }
        for round in 0..<60 {
            try store.write { tx in
                for i in 0..<500 { try tx.put(Self.key(i), [UInt8](repeating: UInt8(truncatingIfNeeded: round &+ i), count: 8)) }
            }
            if round % 20 == 19 { try store.compact() }
        }
        stop.store(true, ordering: .releasing)
        readers.wait()
        #expect(torn.load(ordering: .relaxed) == 0)
    }
}
