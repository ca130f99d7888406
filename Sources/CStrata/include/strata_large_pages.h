// Memory for a memtable's arena chunks and large hash indexes, mapped so that Linux can back
// it with 2 MiB pages.
#ifndef STRATA_LARGE_PAGES_H
#define STRATA_LARGE_PAGES_H

#include <stddef.h>

/// The alignment of what `strata_map_pages` returns, and the size its callers round up to:
/// 2 MiB, the large page size of x86-64 and of arm64 with 4 KiB base pages.
#define STRATA_LARGE_PAGE_BYTES ((size_t)2 << 20)

/// `count` bytes of private, zero-filled, readable and writable memory aligned to
/// `STRATA_LARGE_PAGE_BYTES`, mapped by the system directly (not through malloc), or NULL
/// when the system refuses. On Linux it asks for large pages (madvise MADV_HUGEPAGE, honoured
/// when transparent huge pages are "always" or "madvise") and sets every page up before it
/// returns, by writing a zero into each (so the memory reads as zeroes, as mapped): the memory
/// is about to be filled, and a random walk over it then misses the TLB far less. The pages
/// are set up by ordinary page faults, not madvise(MADV_POPULATE_WRITE), so that other
/// threads' mmap and munmap calls do not wait for them. `count` is a multiple of the system's
/// page size. Free with `strata_unmap_pages`.
void *strata_map_pages(size_t count);

/// Gives back what `strata_map_pages(count)` returned.
void strata_unmap_pages(void *bytes, size_t count);

#endif
