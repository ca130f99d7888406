// The chunks of flushed memtables kept for the next ones (ArenaChunkPool): reused, bounded,
// and given back when the store is suspended.
import StrataTestSupport
import Testing

@_spi(Testing) @testable import Strata

@Suite struct ArenaChunkPoolTests {
    /// Fills `table` until its arena has taken `chunks` standard chunks.
    private static func fill(_ table: MemTable, chunks: Int) {
        let value = [UInt8](repeating: 0x5A, count: 200)
        var i = 0
        while table.approximateBytes < chunks * Arena.chunkBytes {
            let key = Array("key-\(i)".utf8)
            key.withUnsafeBytes { key in value.withUnsafeBytes { table.insert(key: key, sequence: UInt64(i + 1), value: $0) } }
            i += 1
        }
    }

    /// A pool of `limit` after a table that took `chunks` chunks from it has gone.
    private static func poolAfterATable(limit: Int, chunks: Int) -> ArenaChunkPool {
        let pool = ArenaChunkPool(limit: limit)
        do {
            let table = MemTable(chunkPool: pool)
            fill(table, chunks: chunks)
            #expect(pool.count == 0)
        }
        return pool
    }

    @Test func aFreedTablesChunksGoToTheNextTable() {
        let pool = Self.poolAfterATable(limit: 4, chunks: 3)
        // The first table is gone: its standard chunks wait in the pool, up to the limit.
        #expect(pool.count >= 3 && pool.count <= 4)
        let held = pool.count
        let second = MemTable(chunkPool: pool)
        Self.fill(second, chunks: 2)
        #expect(pool.count < held)
        // The reused memory reads back as written.
        let key = Array("key-0".utf8)
        let found = key.withUnsafeBytes { second.findVisible($0, hash: hashKey($0), at: .max) }
        #expect(found.map { Array($0.value) } == [UInt8](repeating: 0x5A, count: 200))
    }

    @Test func thePoolKeepsNoMoreThanItsLimit() {
        let pool = Self.poolAfterATable(limit: 2, chunks: 5)
        #expect(pool.count == 2)
        pool.trim()
        #expect(pool.count == 0)
        #expect(pool.take() == nil)
    }

    @Test func aTableMadeBeforeItsWriterTakesThePoolOnce() {
        let pool = ArenaChunkPool(limit: 8)
        let other = ArenaChunkPool(limit: 8)
        do {
            let table = MemTable()
            table.useChunkPool(pool)
            table.useChunkPool(other)  // the first pool stays
            Self.fill(table, chunks: 2)
        }
        #expect(pool.count >= 2)
        #expect(other.count == 0)
    }

    /// A store that flushed several memtables holds chunks for the next; suspending it gives
    /// them all back, and writing after the resume works as before.
    @Test func suspendingTheStoreEmptiesItsPool() throws {
        var options = APITestSimulated.options(SimulatedFileSystem())
        options.memtableBytes = 2 * Arena.chunkBytes
        let store = try Store(path: APITestSimulated.path, options: options)
        defer { try? store.close() }
        let value = [UInt8](repeating: 1, count: 1000)
        for batch in 0..<20 {
            try store.write(durability: .buffered) { tx in
                for i in 0..<500 { try tx.put(Array("k\(batch)-\(i)".utf8), value) }
            }
        }
        try store.compact()
        let pool = try #require(store.engine.writing?.writer.chunkPool)
        #expect(pool.count > 0)
        try store.suspend()
        #expect(pool.count == 0)
        _ = try store.resume()
        try store.write(durability: .buffered) { tx in try tx.put(Array("after".utf8), value) }
        #expect(try store.get(Array("after".utf8)) == value)
        #expect(try store.get(Array("k0-0".utf8)) == value)
    }
}
