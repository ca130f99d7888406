#if canImport(Glibc)
    import Glibc
#endif

/// Bump allocator for memtable nodes. Memory is handed out in 8-byte-aligned pieces from
/// large chunks and freed all at once when the arena goes away, so a node's address never
/// changes and readers can follow raw pointers into it.
///
/// Chunks are 2 MiB. On Linux each is aligned to 2 MiB, and every chunk after the first is
/// marked for transparent huge pages (`madvise(MADV_HUGEPAGE)`, honoured where the system
/// allows it, "madvise" or "always"): an insert or a lookup reaches its nodes at random all
/// over the table, and with 4 KiB pages a 16 MiB table spans 4,096 of them, more than the
/// processor's translation cache holds, so the steps of a skiplist walk also missed in it; a
/// huge page also costs one page fault where 512 small ones each did. The first chunk stays
/// in small pages, so a store that writes little keeps a few KiB resident, not 2 MiB.
///
/// Not thread-safe: only the memtable's single writer allocates (MemTable invariant 1).
final class Arena {
    static let chunkBytes = 2 << 20

    /// Each chunk, and whether it came from `posix_memalign` (freed with `free`).
    private var chunks: [(pointer: UnsafeMutableRawPointer, aligned: Bool)] = []
    private var cursor: UnsafeMutableRawPointer? = nil
    private var remaining = 0
    /// Bytes handed out plus bytes lost to chunk tails: what the arena holds.
    private(set) var reservedBytes = 0

    deinit {
        for chunk in chunks {
            if chunk.aligned {
                free(chunk.pointer)
            } else {
                chunk.pointer.deallocate()
            }
        }
    }

    func allocate(_ byteCount: Int) -> UnsafeMutableRawPointer {
        let size = (byteCount + 7) & ~7
        if size > Arena.chunkBytes / 4 {
            // A large node gets a chunk of its own so it does not waste a shared chunk's tail.
            let chunk = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            chunks.append((chunk, false))
            reservedBytes += size
            return chunk
        }
        if size > remaining {
            let chunk = Arena.newChunk(hugePages: !chunks.isEmpty)
            chunks.append(chunk)
            cursor = chunk.pointer
            remaining = Arena.chunkBytes
            reservedBytes += Arena.chunkBytes
        }
        let result = cursor!
        cursor = result + size
        remaining -= size
        return result
    }

    private static func newChunk(hugePages: Bool) -> (pointer: UnsafeMutableRawPointer, aligned: Bool) {
        #if os(Linux)
            var raw: UnsafeMutableRawPointer? = nil
            if posix_memalign(&raw, chunkBytes, chunkBytes) == 0, let raw {
                // Advice only: where huge pages are off, the chunk is ordinary memory.
                if hugePages { _ = madvise(raw, chunkBytes, MADV_HUGEPAGE) }
                return (raw, true)
            }
        #endif
        return (.allocate(byteCount: chunkBytes, alignment: 8), false)
    }
}
