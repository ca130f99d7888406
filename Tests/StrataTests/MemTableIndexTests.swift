import Strata
import StrataTestSupport
import Testing

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
}
