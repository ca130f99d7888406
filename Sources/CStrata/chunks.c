// See strata_chunks.h. Why a mapping of its own rather than the allocator: a 2 MiB block from
// posix_memalign, freed and taken again memtable after memtable, left the allocator's heap
// hundreds of megabytes larger than what was in use (docs/benchmarks.md, 2026-11-24); a
// mapping goes back to the system whole when it is unmapped.
#include "strata_chunks.h"
#include "strata_prefault.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif

void *strata_chunk_map(size_t count) {
    // 2 MiB more, then the unaligned head and tail cut away, leaves an aligned block: a huge
    // page needs an aligned 2 MiB range.
    size_t span = count + (size_t)STRATA_CHUNK_BYTES;
    void *mapped = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return NULL;
    uintptr_t base = (uintptr_t)mapped;
    uintptr_t size = STRATA_CHUNK_BYTES;
    uintptr_t start = (base + size - 1) & ~(size - 1);
    if (start > base) (void)munmap(mapped, start - base);
    uintptr_t end = start + count;
    if (base + span > end) (void)munmap((void *)end, base + span - end);
    // Hints: without them the chunk is still good memory, of 4 KiB pages set up one fault
    // at a time.
    (void)madvise((void *)start, count, MADV_HUGEPAGE);
    strata_prefault((void *)start, count);
    return (void *)start;
}

void strata_chunk_unmap(void *chunk, size_t count) {
    if (chunk != NULL) (void)munmap(chunk, count);
}

#else

void *strata_chunk_map(size_t count) {
    void *chunk = NULL;
    if (posix_memalign(&chunk, STRATA_CHUNK_BYTES, count) != 0) return NULL;
    memset(chunk, 0, count);
    return chunk;
}

void strata_chunk_unmap(void *chunk, size_t count) {
    (void)count;
    free(chunk);
}

#endif
