import CStrata

/// Bump allocator for memtable nodes. Memory is handed out in 8-byte-aligned pieces from
/// large chunks and freed all at once when the arena goes away, so a node's address never
/// changes and readers can follow raw pointers into it.
///
/// Not thread-safe: only the memtable's single writer allocates (MemTable invariant 1).
final class Arena {
    static let chunkBytes = 1 << 20

    private var chunks: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer? = nil
    private var remaining = 0
    /// Bytes handed out plus bytes lost to chunk tails: what the arena holds.
    private(set) var reservedBytes = 0

    deinit {
        for chunk in chunks { chunk.deallocate() }
    }

    func allocate(_ byteCount: Int) -> UnsafeMutableRawPointer {
        let size = (byteCount + 7) & ~7
        if size > Arena.chunkBytes / 4 {
            // A large node gets a chunk of its own so it does not waste a shared chunk's tail.
            let chunk = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            chunks.append(chunk)
            reservedBytes += size
            return chunk
        }
        if size > remaining {
            let chunk = UnsafeMutableRawPointer.allocate(byteCount: Arena.chunkBytes, alignment: 8)
            // Fresh memory took a page fault per 4 KiB as the nodes filled it, over a third
            // of a small bulk load's commit time; one call sets the chunk's pages up at once.
            strata_prefault(chunk, Arena.chunkBytes)
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
