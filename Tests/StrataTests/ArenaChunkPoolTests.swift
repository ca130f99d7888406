// The chunks of flushed memtables kept for the next ones (ArenaChunkPool): reused, bounded,
// and given back when the store is suspended; and the chunks set up ahead of a store's first
// memtables (refills).
import CStrata
import StrataTestSupport
import Testing

@_spi(Testing) @testable import Strata

#if canImport(Glibc)
    import Glibc
#endif

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

    /// A chunk that can be written and read back whole: a refill hands out set-up memory.
    private static func checkWritable(_ chunk: UnsafeMutableRawPointer) {
        chunk.initializeMemory(as: UInt8.self, repeating: 0xA5, count: Arena.chunkBytes)
        #expect(chunk.load(fromByteOffset: Arena.chunkBytes - 1, as: UInt8.self) == 0xA5)
    }

    /// A standard chunk is one large page (`strata_map_pages`): aligned to 2 MiB, zero-filled,
    /// writable end to end, and given back with `Arena.freeChunk`.
    @Test func aFreshChunkIsALargePageOfZeros() {
        #expect(Arena.chunkBytes == Int(STRATA_LARGE_PAGE_BYTES))
        let chunk = Arena.freshChunk()
        defer { Arena.freeChunk(chunk) }
        #expect(Int(bitPattern: chunk) % Arena.chunkBytes == 0)
        #expect(strata_is_all_zero(chunk, Arena.chunkBytes) == 1)
        Self.checkWritable(chunk)
    }

    #if os(Linux)
        /// `strata_map_pages` hands out memory whose every page is already set up (resident, by
        /// `mincore`), so the writer that fills it takes no page faults, and zero-filled, over
        /// several large pages as over one.
        @Test func mappedPagesAreSetUpBeforeTheyAreHandedOut() {
            for bytes in [Arena.chunkBytes, 3 * Arena.chunkBytes] {
                let mapping = strata_map_pages(bytes)!
                defer { strata_unmap_pages(mapping, bytes) }
                let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
                var resident = [UInt8](repeating: 0, count: bytes / pageSize)
                #expect(mincore(mapping, bytes, &resident) == 0)
                #expect(resident.allSatisfy { $0 & 1 == 1 }, "\(resident.count { $0 & 1 == 0 }) of \(resident.count) pages not resident")
                #expect(strata_is_all_zero(mapping, bytes) == 1)
            }
        }
    #endif

    /// A memtable of 100,000 keys grows its hash index past 2 MiB, into mapped large pages
    /// (`MemTableHashIndex.mappedBytes`): every key is still found, and freeing the table
    /// gives the pages back.
    @Test func aLargeHashIndexFindsEveryKey() {
        let table = MemTable()
        let count = 100_000
        for i in 0..<count {
            let key = Array("key-\(i)".utf8)
            key.withUnsafeBytes { key in key.withUnsafeBytes { table.insert(key: key, sequence: UInt64(i + 1), value: $0) } }
        }
        for i in stride(from: 0, to: count, by: 997) {
            let key = Array("key-\(i)".utf8)
            let found = key.withUnsafeBytes { key in table.findVisible(key, at: UInt64(count)).map { Array($0.value) } }
            #expect(found == key, "key \(i)")
        }
        #expect(Array("absent".utf8).withUnsafeBytes { table.findVisible($0, at: UInt64(count)) } == nil)
    }

    @Test func aTakeThatLeavesTooFewStartsARefill() {
        let pool = ArenaChunkPool(limit: 8, spares: 3)
        // Empty: the caller sets its own chunk up, and the refill readies three more.
        #expect(pool.take() == nil)
        pool.waitForRefill()
        #expect(pool.count == 3)
        let chunk = try! #require(pool.take())
        Self.checkWritable(chunk)
        pool.waitForRefill()
        #expect(pool.count == 3)
        Arena.freeChunk(chunk)
    }

    @Test func aTakeThatMayNotRefillLeavesThePoolAlone() {
        let pool = ArenaChunkPool(limit: 8, spares: 3)
        #expect(pool.take(mayRefill: false) == nil)
        pool.waitForRefill()
        #expect(pool.count == 0)
    }

    /// A store on a simulated file system with memtables of eight chunks, and its writer's pool.
    private static func storeAndPool() throws -> (Store, ArenaChunkPool) {
        var options = APITestSimulated.options(SimulatedFileSystem())
        options.memtableBytes = 8 * Arena.chunkBytes
        let store = try Store(path: APITestSimulated.path, options: options)
        return (store, try #require(store.engine.writing?.writer.chunkPool))
    }

    /// A store that writes less than a chunk (its table's first) holds no spares
    /// (`aStoresFirstMemtableTakesReadiedChunks` writes past it).
    @Test func aSmallWriteSetsNoChunksUp() throws {
        let (store, pool) = try Self.storeAndPool()
        defer { try? store.close() }
        try store.write(durability: .buffered) { tx in
            for i in 0..<20 { try tx.put(Array("small-\(i)".utf8), [UInt8](repeating: 1, count: 100)) }
        }
        pool.waitForRefill()
        #expect(pool.count == 0)
    }

    @Test func aRefillStopsAtTheLimit() {
        let pool = ArenaChunkPool(limit: 2, spares: 5)
        #expect(pool.spares == 2)
        _ = pool.take()
        pool.waitForRefill()
        #expect(pool.count == 2)
    }

    @Test func aPoolWithoutSparesNeverRefills() {
        let pool = ArenaChunkPool(limit: 8)
        #expect(pool.take() == nil)
        pool.waitForRefill()
        #expect(pool.count == 0)
    }

    /// Once a freed table's chunk comes back the pool lives on those; a trim starts over.
    @Test func returnedChunksEndTheRefillsUntilATrim() {
        let pool = ArenaChunkPool(limit: 8, spares: 2)
        _ = pool.take()
        pool.waitForRefill()
        #expect(pool.count == 2)
        #expect(pool.give(Arena.freshChunk()))
        for _ in 0..<3 { pool.take().map(Arena.freeChunk) }
        pool.waitForRefill()
        #expect(pool.count == 0)
        pool.trim()
        _ = pool.take()
        pool.waitForRefill()
        #expect(pool.count == 2)
    }

    /// A trim while a refill runs leaves nothing held once the refill is over (invariant 2),
    /// whichever of the two comes first.
    @Test func aTrimDuringARefillLeavesNothing() {
        for _ in 0..<20 {
            let pool = ArenaChunkPool(limit: 16, spares: 16)
            _ = pool.take()
            pool.trim()
            pool.waitForRefill()
            #expect(pool.count == 0)
        }
    }

    /// A store's writer readies chunks for its first memtable, so the chunks its writes take
    /// come set up; what they write reads back.
    @Test func aStoresFirstMemtableTakesReadiedChunks() throws {
        let (store, pool) = try Self.storeAndPool()
        defer { try? store.close() }
        #expect(pool.spares == Writer.spareArenaChunks)
        let value = [UInt8](repeating: 7, count: 1000)
        for batch in 0..<6 {
            try store.write(durability: .buffered) { tx in
                for i in 0..<500 { try tx.put(Array("k\(batch)-\(i)".utf8), value) }
            }
        }
        // About 3 MiB written, so chunks were taken; no table was freed, so none came back,
        // and the refill keeps the spares ready.
        pool.waitForRefill()
        #expect(pool.count == Writer.spareArenaChunks)
        for batch in 0..<6 {
            #expect(try store.get(Array("k\(batch)-499".utf8)) == value)
        }
    }

    /// A new memtable whose first index is large asks the pool for a table of its size; when
    /// there is none it starts small, and the pool sets one up for the next memtable, which
    /// takes it. A freed table of that size comes back, and the next index over it is empty.
    @Test func aFirstIndexTakesATableSetUpAheadOrAFreedOne() {
        let pool = ArenaChunkPool(limit: 4)
        let slots = 2 * Arena.chunkBytes / 16  // a 2 MiB table: two words a slot
        func insert(_ table: MemTable, _ prefix: String, _ count: Int) {
            for i in 0..<count {
                let key = Array("\(prefix)-\(i)".utf8)
                key.withUnsafeBytes { key in key.withUnsafeBytes { table.insert(key: key, sequence: UInt64(i + 1), value: $0) } }
            }
        }
        func find(_ table: MemTable, _ key: String) -> Bool {
            Array(key.utf8).withUnsafeBytes { table.findVisible($0, at: .max) } != nil
        }
        let first = MemTable(chunkPool: pool, indexCapacity: slots)
        insert(first, "first", 1)
        #expect(first.indexCapacity == MemTableHashIndex.initialCapacity, "none held: it starts small")
        pool.waitForRefill()
        #expect(pool.tableCount == 1, "one set up for the next memtable")
        do {
            let second = MemTable(chunkPool: pool, indexCapacity: slots)
            insert(second, "old", 5_000)
            #expect(second.indexCapacity == slots)
            pool.waitForRefill()
            #expect(pool.tableCount == 1, "another set up, for the memtable after")
            pool.trim()
            #expect(pool.tableCount == 0)
        }
        #expect(pool.tableCount == 1, "the second memtable's table came back")
        let third = MemTable(chunkPool: pool, indexCapacity: slots)
        insert(third, "new", 5_000)
        #expect(third.indexCapacity == slots)
        #expect(!find(third, "old-42") && !find(third, "old-4999"))
        #expect(find(third, "new-42") && find(third, "new-4999"))
        pool.waitForRefill()
    }

    /// The pool keeps at most `tableLimit` tables, only of the size last asked for, and a
    /// trim frees them.
    @Test func thePoolKeepsOnlyTablesOfTheSizeAskedForUpToItsLimit() {
        let pool = ArenaChunkPool(limit: 4)
        let bytes = 2 * Arena.chunkBytes
        #expect(pool.takeTableForFirstIndex(bytes: bytes) == nil)
        pool.waitForRefill()
        #expect(pool.tableCount == ArenaChunkPool.tableLimit)
        let extra = strata_map_pages(bytes)!
        #expect(!pool.giveTable(extra, bytes: bytes), "full")
        let taken = pool.takeTableForFirstIndex(bytes: bytes)
        #expect(taken != nil)
        pool.waitForRefill()
        let other = strata_map_pages(2 * bytes)!
        pool.trim()
        #expect(!pool.giveTable(other, bytes: 2 * bytes), "another size")
        #expect(pool.giveTable(extra, bytes: bytes))
        #expect(pool.tableCount == 1)
        pool.trim()
        #expect(pool.tableCount == 0)
        strata_unmap_pages(other, 2 * bytes)
        strata_unmap_pages(taken, bytes)
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
