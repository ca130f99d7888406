import CStrata
import Synchronization

/// Bump allocator for memtable nodes. Memory is handed out in 8-byte-aligned pieces from
/// large chunks and freed all at once when the arena goes away, so a node's address never
/// changes and readers can follow raw pointers into it.
///
/// Not thread-safe: only the memtable's single writer allocates (MemTable invariant 1).
/// The arena's `deinit` may run on any thread (whichever releases the table last); it gives
/// its standard chunks to its pool, when it has one, and frees the rest.
final class Arena {
    /// 2 MiB, one large page (`strata_map_pages`): a skiplist insert or a get walks nodes
    /// all over a 16 MiB memtable, and in 4 KiB pages most of those steps missed the TLB
    /// too (readwhilewriting's reader at 1,000,000 keys an eighth to a fifth faster in
    /// 2 MiB pages, docs/benchmarks.md).
    static let chunkBytes = Int(STRATA_LARGE_PAGE_BYTES)

    /// Set at creation, or once later by the writer that takes the table over (a table
    /// replayed at open is made before its writer).
    var pool: ArenaChunkPool?
    /// Chunks of `chunkBytes`, which may go back to the pool.
    private var chunks: [UnsafeMutableRawPointer] = []
    /// Chunks of one large node each, freed with the arena.
    private var largeChunks: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer? = nil
    private var remaining = 0
    /// Bytes handed out plus bytes lost to chunk tails: what the arena holds.
    private(set) var reservedBytes = 0

    init(pool: ArenaChunkPool? = nil) {
        self.pool = pool
    }

    deinit {
        for chunk in largeChunks { chunk.deallocate() }
        for chunk in chunks where !(pool?.give(chunk) ?? false) { Arena.freeChunk(chunk) }
    }

    func allocate(_ byteCount: Int) -> UnsafeMutableRawPointer {
        let size = (byteCount + 7) & ~7
        if size > Arena.chunkBytes / 4 {
            // A large node gets a chunk of its own so it does not waste a shared chunk's tail.
            let chunk = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            largeChunks.append(chunk)
            reservedBytes += size
            return chunk
        }
        if size > remaining {
            let chunk: UnsafeMutableRawPointer
            // A table's first chunk starts no refill: a store that writes a few records is
            // left holding no set-up chunks it will not use.
            if let reused = pool?.take(mayRefill: !chunks.isEmpty) {
                chunk = reused
            } else {
                chunk = Arena.freshChunk()
            }
            chunks.append(chunk)
            cursor = chunk
            remaining = Arena.chunkBytes
            reservedBytes += Arena.chunkBytes
        }
        let result = cursor!
        cursor = result + size
        remaining -= size
        return result
    }

    /// A standard chunk from the system, in a large page where it can be, with its pages set
    /// up. Fresh memory took a page fault per 4 KiB as the nodes filled it, over a third of a
    /// small bulk load's commit time; `strata_map_pages` sets them all up at once.
    static func freshChunk() -> UnsafeMutableRawPointer {
        guard let chunk = strata_map_pages(chunkBytes) else {
            fatalError("Strata: the system refused \(chunkBytes) bytes of memory for a memtable")
        }
        return chunk
    }

    /// Gives a standard chunk (`freshChunk`) back to the system.
    static func freeChunk(_ chunk: UnsafeMutableRawPointer) {
        strata_unmap_pages(chunk, chunkBytes)
    }
}

/// Chunks of flushed memtables' arenas, kept for the next memtables of the same store, and
/// chunks set up ahead of a store's first memtables: a chunk whose pages are already set up
/// costs a new memtable nothing, where a fresh one costs the kernel a zeroed page per 4 KiB
/// (the arena's `strata_prefault`), about a sixth of a bulk load's commit time
/// (docs/benchmarks.md, 2026-11-26, late: "memtable chunks reused").
///
/// Until a freed table's chunk first comes back, a `take()` that leaves fewer than `spares`
/// starts a refill, unless it is for a table's first chunk (a store that writes a few
/// records should hold no chunks it will not use): the process's refill thread sets fresh
/// chunks up while the writer fills the one it took (docs/benchmarks.md, "Memtable chunks
/// set up ahead of the writer"). Once chunks come back the pool lives on those: fresh chunks
/// set up beside them would only be freed when the returning ones overflow the limit, and a
/// writer made faster beside a busy reader takes the reader's time on a small machine.
///
/// Invariants:
/// 1. The pool holds at most `limit` chunks, each `Arena.chunkBytes` long and owned by
///    nobody else; `give` refuses (and the caller frees) past the limit, and a refill stops
///    at `spares` (at most `limit`).
/// 2. `trim()` and `deinit` free every chunk held: a suspended or closed store keeps none.
///    A refill running across a `trim()` sees the generation change and frees what it set
///    up instead of keeping it.
/// 3. At most one refill per pool runs at a time (`State.refilling`, set by the `take()`
///    that starts it, cleared by the refill in the same critical section that decides it is
///    done).
/// 4. Beside the chunks, the pool holds at most `tableLimit` hash index tables, each a
///    `strata_map_pages` mapping owned by nobody else, of the size the last new memtable's
///    first index asked for when it was kept, taken only at its exact size, and freed by
///    `trim()` and `deinit` like the chunks (a table set up across a `trim()` is freed).
final class ArenaChunkPool: Sendable {
    let limit: Int
    /// Chunks a refill keeps ready; 0 for none (a pool that only keeps freed tables' chunks).
    let spares: Int

    private struct State {
        /// Chunk addresses (as integers, so the state is Sendable).
        var held: [UInt] = []
        /// Freed memtables' hash index tables (`strata_map_pages` mappings): address, bytes.
        var tables: [(address: UInt, bytes: Int)] = []
        /// The size of the tables worth keeping: the last first index asked for.
        var preferredTableBytes = 0
        var refilling = false
        /// Set when a freed table's chunk comes back: from then on the pool lives on those,
        /// and no refill starts (until a `trim()`).
        var recycling = false
        /// Bumped by `trim()`, so a refill that started before it keeps nothing.
        var generation = 0
    }
    private let state = Mutex(State())
    /// Refills run here, for every store of the process, at the background threads' low
    /// priority: a refill at normal priority took time slices from a busy reader (the
    /// readwhilewriting benchmark's reader got 0.91x as many). One that falls behind only
    /// leaves the writer to set its chunk up itself, as with no refill.
    private static let refillThread = BackgroundThread(name: "strata.arena-refill")

    init(limit: Int, spares: Int = 0) {
        self.limit = max(limit, 0)
        self.spares = min(max(spares, 0), self.limit)
    }

    deinit {
        trim()
    }

    /// A chunk, or nil when the pool is empty. Starts a refill when it leaves fewer than
    /// `spares` and `mayRefill`.
    func take(mayRefill: Bool = true) -> UnsafeMutableRawPointer? {
        let (address, refill) = state.withLock { state -> (UInt?, Int?) in
            let address = state.held.popLast()
            guard mayRefill, state.held.count < spares, !state.refilling, !state.recycling else { return (address, nil) }
            state.refilling = true
            return (address, state.generation)
        }
        if let generation = refill {
            Self.refillThread.async { self.refill(generation: generation) }
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// Sets up fresh chunks until the pool holds `spares` (invariant 1), or a `trim()` came
    /// after the `take()` that asked for the refill, whether or not the refill had started.
    private func refill(generation: Int) {
        while true {
            let more = state.withLock { state -> Bool in
                guard state.generation == generation, state.held.count < spares else {
                    state.refilling = false
                    return false
                }
                return true
            }
            guard more else { return }
            let chunk = Arena.freshChunk()
            let kept = state.withLock { state -> Bool in
                guard state.generation == generation, state.held.count < limit else { return false }
                state.held.append(UInt(bitPattern: chunk))
                return true
            }
            if !kept { Arena.freeChunk(chunk) }
        }
    }

    /// Keeps `chunk` for a later `take()`; false when the pool is full.
    func give(_ chunk: UnsafeMutableRawPointer) -> Bool {
        state.withLock { state in
            state.recycling = true
            guard state.held.count < limit else { return false }
            state.held.append(UInt(bitPattern: chunk))
            return true
        }
    }

    /// Index tables the pool keeps at most (invariant 4): the table of the memtable being
    /// flushed comes back while its successor fills, and the one after takes it.
    static let tableLimit = 1

    /// A mapping of exactly `bytes` given back by a freed memtable's hash index, its contents
    /// left as they were, or nil. A fresh large-page mapping costs the kernel a zeroed page
    /// set up per 2 MiB, and in a process that has been writing files those came in at about
    /// a gigabyte a second, a tenth of a bulk load's insert time at 4 MiB a table; zeroing a
    /// table already mapped costs a tenth of that (docs/benchmarks.md, "Memtable indexes
    /// sized ahead").
    func takeTable(bytes: Int) -> UnsafeMutableRawPointer? {
        let address = state.withLock { state -> UInt? in
            guard let index = state.tables.lastIndex(where: { $0.bytes == bytes }) else { return nil }
            return state.tables.remove(at: index).address
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// For a new memtable's first index of `bytes`: a held table of that size, or nil. Either
    /// way, when no other table of that size is left, one is set up on the refill thread for
    /// the next memtable, and from now on only tables of that size are kept (`giveTable`).
    /// The writer thus never waits for fresh large pages for an index, which on some
    /// machines come at a few hundred megabytes a second (docs/benchmarks.md, "Memtable
    /// indexes sized ahead"); a memtable that finds none starts small and grows.
    func takeTableForFirstIndex(bytes: Int) -> UnsafeMutableRawPointer? {
        let (address, prepare) = state.withLock { state -> (UInt?, Int?) in
            state.preferredTableBytes = bytes
            let address = state.tables.lastIndex { $0.bytes == bytes }.map { state.tables.remove(at: $0).address }
            let left = state.tables.contains { $0.bytes == bytes }
            return (address, left ? nil : state.generation)
        }
        if let generation = prepare {
            Self.refillThread.async { self.prepareTable(bytes: bytes, generation: generation) }
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// Sets up a fresh table of `bytes` and keeps it, unless by then the pool is full, wants
    /// another size, or a `trim()` came in between (invariant 4).
    private func prepareTable(bytes: Int, generation: Int) {
        func wanted(_ state: State) -> Bool {
            state.generation == generation && state.tables.count < Self.tableLimit && state.preferredTableBytes == bytes
        }
        guard state.withLock({ wanted($0) }), let table = strata_map_pages(bytes) else { return }
        let kept = state.withLock { state -> Bool in
            guard wanted(state) else { return false }
            state.tables.append((UInt(bitPattern: table), bytes))
            return true
        }
        if !kept { strata_unmap_pages(table, bytes) }
    }

    /// Keeps a hash index's mapping for a later `takeTable`; false when the pool holds
    /// `tableLimit` already or wants tables of another size (the caller unmaps it).
    func giveTable(_ table: UnsafeMutableRawPointer, bytes: Int) -> Bool {
        state.withLock { state in
            guard state.tables.count < Self.tableLimit, bytes == state.preferredTableBytes else { return false }
            state.tables.append((UInt(bitPattern: table), bytes))
            return true
        }
    }

    /// Frees every chunk and table held; a refill under way keeps nothing more (invariant 2).
    func trim() {
        let (chunks, tables) = state.withLock { state -> ([UInt], [(address: UInt, bytes: Int)]) in
            state.generation += 1
            state.recycling = false
            defer {
                state.held.removeAll()
                state.tables.removeAll()
            }
            return (state.held, state.tables)
        }
        for address in chunks { UnsafeMutableRawPointer(bitPattern: address).map(Arena.freeChunk) }
        for table in tables { strata_unmap_pages(UnsafeMutableRawPointer(bitPattern: table.address), table.bytes) }
    }

    var count: Int { state.withLock { $0.held.count } }

    /// Index tables held; for tests.
    var tableCount: Int { state.withLock { $0.tables.count } }

    /// Tests: waits until no refill is under way.
    func waitForRefill() {
        Self.refillThread.sync {}
    }
}
