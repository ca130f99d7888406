#include "strata_large_pages.h"

#include <stdint.h>
#include <sys/mman.h>

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif

void *strata_map_pages(size_t count) {
    // One large page more than asked for, so an aligned stretch of `count` lies inside; the
    // rest on either side is given back at once.
    size_t span = count + STRATA_LARGE_PAGE_BYTES;
    void *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    uintptr_t start = ((uintptr_t)raw + STRATA_LARGE_PAGE_BYTES - 1) & ~(uintptr_t)(STRATA_LARGE_PAGE_BYTES - 1);
    size_t head = (size_t)(start - (uintptr_t)raw);
    size_t tail = span - head - count;
    if (head > 0) (void)munmap(raw, head);
    if (tail > 0) (void)munmap((void *)(start + count), tail);
#if defined(__linux__)
    // Hints only: without them (an older kernel, huge pages turned off) the memory is the
    // same, in 4 KiB pages faulted in as they are first written.
    (void)madvise((void *)start, count, MADV_HUGEPAGE);
    (void)madvise((void *)start, count, MADV_POPULATE_WRITE);
#endif
    return (void *)start;
}

void strata_unmap_pages(void *bytes, size_t count) {
    if (bytes != NULL) (void)munmap(bytes, count);
}
