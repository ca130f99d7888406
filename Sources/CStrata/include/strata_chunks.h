// Large blocks of fresh memory for the memtable's arena, mapped so the kernel can back them
// with 2 MiB pages.
#ifndef STRATA_CHUNKS_H
#define STRATA_CHUNKS_H

#include <stddef.h>

/// The size and alignment of what `strata_chunk_map` returns: 2 MiB, the size of an x86-64
/// or arm64 huge page.
#define STRATA_CHUNK_BYTES 2097152

/// Returns `STRATA_CHUNK_BYTES` of writable memory aligned to its size, with its pages
/// already present (`strata_prefault`), or NULL when the system has no memory for it. On Linux the memory
/// is its own mapping, advised for transparent huge pages (MADV_HUGEPAGE), so where the
/// system allows them it is one page, set up by one fault instead of 512; elsewhere it comes
/// from the allocator. Free it with `strata_chunk_unmap` only.
void *strata_chunk_map(void);

/// Gives back a chunk from `strata_chunk_map`.
void strata_chunk_unmap(void *chunk);

#endif
