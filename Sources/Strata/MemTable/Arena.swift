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
    static let chunkBytes = 1 << 20

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
        for chunk in chunks where !(pool?.give(chunk) ?? false) { chunk.deallocate() }
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
            if let reused = pool?.take() {
                chunk = reused
            } else {
                chunk = UnsafeMutableRawPointer.allocate(byteCount: Arena.chunkBytes, alignment: 8)
                // Fresh memory took a page fault per 4 KiB as the nodes filled it, over a
                // third of a small bulk load's commit time; one call sets the chunk's pages
                // up at once.
                strata_prefault(chunk, Arena.chunkBytes)
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
}

/// Chunks of flushed memtables' arenas, kept for the next memtables of the same store: a
/// chunk whose pages are already set up costs a new memtable nothing, where a fresh one costs
/// the kernel a zeroed page per 4 KiB (the arena's `strata_prefault`), about a sixth of a
/// bulk load's commit time (docs/benchmarks.md, 2026-11-26, late: "memtable chunks reused").
///
/// Invariants:
/// 1. The pool holds at most `limit` chunks, each `Arena.chunkBytes` long and owned by
///    nobody else; `give` refuses (and the caller frees) past the limit.
/// 2. `trim()` and `deinit` free every chunk held: a suspended or closed store keeps none.
final class ArenaChunkPool: Sendable {
    let limit: Int
    /// Chunk addresses (as integers, so the state is Sendable).
    private let held = Mutex<[UInt]>([])

    init(limit: Int) {
        self.limit = max(limit, 0)
    }

    deinit {
        trim()
    }

    func take() -> UnsafeMutableRawPointer? {
        held.withLock { $0.popLast() }.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// Keeps `chunk` for a later `take()`; false when the pool is full.
    func give(_ chunk: UnsafeMutableRawPointer) -> Bool {
        held.withLock { chunks in
            guard chunks.count < limit else { return false }
            chunks.append(UInt(bitPattern: chunk))
            return true
        }
    }

    /// Frees every chunk held.
    func trim() {
        let chunks = held.withLock { chunks -> [UInt] in
            defer { chunks.removeAll() }
            return chunks
        }
        for address in chunks { UnsafeMutableRawPointer(bitPattern: address)?.deallocate() }
    }

    var count: Int { held.withLock { $0.count } }
}
