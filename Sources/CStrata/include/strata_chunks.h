// Large blocks of fresh memory for the memtable (its arena's chunks, its larger hash
// indexes), mapped so the kernel can back them with 2 MiB pages.
#ifndef STRATA_CHUNKS_H
#define STRATA_CHUNKS_H

#include <stddef.h>

/// The alignment of what `strata_chunk_map` returns, and the unit of its sizes: 2 MiB, the
/// size of an x86-64 or arm64 huge page.
#define STRATA_CHUNK_BYTES 2097152

/// Returns `count` bytes (a multiple of `STRATA_CHUNK_BYTES`) of zeroed, writable memory
/// aligned to `STRATA_CHUNK_BYTES`, with its pages already present (`strata_prefault`), or
/// NULL when the system has no memory for it. On Linux the memory is its own mapping,
/// advised for transparent huge pages (MADV_HUGEPAGE), so where the system allows them each
/// 2 MiB is one page, set up by one fault instead of 512; elsewhere it comes from the
/// allocator. Free it with `strata_chunk_unmap` only, with the same `count`.
void *strata_chunk_map(size_t count);

/// Gives back `count` bytes from `strata_chunk_map`.
void strata_chunk_unmap(void *chunk, size_t count);

#endif
