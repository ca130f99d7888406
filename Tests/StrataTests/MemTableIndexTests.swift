import StrataTestSupport
import Testing

@testable import Strata

/// Point lookups go through the memtable's hash index, which grows many times on the way to
/// tens of thousands of keys. Every version must stay findable from every snapshot.
struct MemTableIndexTests {
    static func key(_ i: Int) -> [UInt8] { Array("key-\(i)".utf8) }

    @Test func lookupsSurviveIndexGrowthAcrossVersionsAndSnapshots() throws {
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/store", options: options)
        defer { try? store.close() }
        let count = 40_000
        for start in stride(from: 0, to: count, by: 5_000) {
            try store.write(durability: .buffered) { tx in
                for i in start..<(start + 5_000) { try tx.put(Self.key(i), [1, UInt8(i % 251)]) }
            }
        }
        let first = store.snapshot()
        // Second versions for the even keys, deletes for every fifth.
        try store.write(durability: .buffered) { tx in
            for i in stride(from: 0, to: count, by: 2) { try tx.put(Self.key(i), [2, UInt8(i % 251)]) }
            for i in stride(from: 0, to: count, by: 5) { try tx.delete(Self.key(i)) }
        }
        try first.read { tx in
            for i in 0..<count {
                let value = try tx.get(Self.key(i))
                #expect(value == [1, UInt8(i % 251)], "key \(i) in the first snapshot")
            }
            let absent = try tx.get(Self.key(count))
            #expect(absent == nil)
        }
        try store.read { tx in
            for i in 0..<count {
                let expected: [UInt8]? = i % 5 == 0 ? nil : (i % 2 == 0 ? [2, UInt8(i % 251)] : [1, UInt8(i % 251)])
                let value = try tx.get(Self.key(i))
                #expect(value == expected, "key \(i) now")
            }
        }
        first.close()
    }

    /// The index grows with the keys it holds, not with their versions: the memtable counts
    /// them (the index keeps no count, so its first line is never written by the writer).
    @Test func theIndexGrowsWithKeysNotVersions() {
        let table = MemTable()
        let value = [UInt8](repeating: 7, count: 20)
        func put(_ key: [UInt8], _ sequence: Int) {
            key.withUnsafeBytes { key in value.withUnsafeBytes { table.insert(key: key, sequence: UInt64(sequence), value: $0) } }
        }
        let rewritten = Self.key(0)
        put(rewritten, 1)
        let afterOne = table.approximateBytes
        let versions = 5_000
        for sequence in 2...versions { put(rewritten, sequence) }
        // Each version adds its node's payload only: no index grew.
        let perVersion = rewritten.count + value.count + 24 + 8 * 2
        #expect(table.approximateBytes - afterOne == (versions - 1) * perVersion)

        // 1,000 distinct keys pass 70% of the first index's 1,024 slots: it grows, and every
        // key is still found, at its newest version.
        let grownBefore = table.approximateBytes
        for i in 1...1_000 { put(Self.key(i), versions + i) }
        let payload = (1...1_000).reduce(0) { $0 + Self.key($1).count + value.count + 24 + 8 * 2 }
        #expect(table.approximateBytes - grownBefore == payload + 2_048 * 2 * 8, "the nodes and one index of 2,048 two-word slots")
        for i in 0...1_000 {
            let found = Self.key(i).withUnsafeBytes { table.findVisible($0, at: UInt64.max) }
            #expect(found?.sequence == UInt64(i == 0 ? versions : versions + i), "key \(i)")
        }
    }

    /// Past 91,750 keys the index's table grows to 2 MiB, then 4 MiB, the sizes of a full
    /// memtable's: every key stays findable across both growths.
    @Test func largeIndexTablesHoldEveryKey() {
        let table = MemTable()
        let count = 100_000
        let value: [UInt8] = [9]
        for i in 0..<count {
            Self.key(i).withUnsafeBytes { key in value.withUnsafeBytes { table.insert(key: key, sequence: UInt64(i + 1), value: $0) } }
        }
        var missing = 0
        for i in 0..<count {
            let found = Self.key(i).withUnsafeBytes { table.findVisible($0, at: UInt64.max) }
            if found?.sequence != UInt64(i + 1) { missing += 1 }
        }
        #expect(missing == 0)
        let absent = Self.key(count).withUnsafeBytes { table.findVisible($0, at: UInt64.max) }
        #expect(absent == nil)
    }

    /// A table's index starts at the size its predecessor's keys need, with a quarter to
    /// spare, below the 70% mark, and no larger than the bytes allowed.
    @Test(arguments: [
        (keys: 0, maxBytes: 4 << 20, capacity: 1_024),
        (keys: 700, maxBytes: 4 << 20, capacity: 2_048),  // 875 wanted: 1,024 slots hold 716
        (keys: 80_000, maxBytes: 4 << 20, capacity: 262_144),  // 100,000 wanted
        (keys: 80_000, maxBytes: 2 << 20, capacity: 131_072),  // capped: grows past 91,750
        (keys: 80_000, maxBytes: 1_000, capacity: 1_024)  // never below the first size
    ])
    func aNewIndexIsSizedForThePreviousTablesKeys(keys: Int, maxBytes: Int, capacity: Int) {
        #expect(MemTableHashIndex.capacity(expecting: keys, maxBytes: maxBytes) == capacity)
    }

    /// A table made with its index's size makes that index at its first insert (none before:
    /// an idle table holds no index), does not grow it while its keys fit, and counts it once.
    @Test func aPresizedIndexHoldsItsKeysWithoutGrowing() {
        let slots = 16_384
        let table = MemTable(indexCapacity: slots)
        #expect(table.indexCapacity == 0 && table.approximateBytes == 0, "no index before the first insert")
        let count = 11_000  // below 70% of the slots
        let value: [UInt8] = [3, 4]
        for i in 0..<count {
            Self.key(i).withUnsafeBytes { key in value.withUnsafeBytes { table.insert(key: key, sequence: UInt64(i + 1), value: $0) } }
        }
        #expect(table.indexCapacity == slots)
        let payload = (0..<count).reduce(0) { $0 + Self.key($1).count + value.count + 24 + 8 * 2 }
        #expect(table.approximateBytes == payload + slots * 2 * 8, "the nodes and the one index")
        var missing = 0
        for i in 0..<count where Self.key(i).withUnsafeBytes({ table.findVisible($0, at: .max) })?.sequence != UInt64(i + 1) {
            missing += 1
        }
        #expect(missing == 0)
        #expect(table.distinctKeys == count)
    }

    /// The writer makes each new memtable with the index its predecessor's keys need.
    @Test func theWriterSizesTheNextIndexFromTheSealedTable() throws {
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        options.memtableBytes = 1 << 20
        let store = try Store(path: "/store", options: options)
        defer { try? store.close() }
        let keys = 8_000  // about 1.2 MB of nodes: the table is sealed before the next write
        let value = [UInt8](repeating: 5, count: 100)
        try store.write(durability: .buffered) { tx in
            for i in 0..<keys { try tx.put(Self.key(i), value) }
        }
        try store.write(durability: .buffered) { tx in try tx.put(Self.key(keys), value) }
        let active = store.engine.versions.published.latest().version.memtable
        let expected = MemTableHashIndex.capacity(expecting: keys, maxBytes: (1 << 20) / 4)
        #expect(expected > MemTableHashIndex.initialCapacity)
        #expect(active.count == 1)
        #expect(active.indexCapacity == expected)
    }
}
