#include "strata_large_pages.h"

#include <stdint.h>
#include <sys/mman.h>

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

#if defined(__linux__)
#include <unistd.h>

// Writes a zero into every page of [start, start + count), which makes each page present and
// writable (a 2 MiB page, where the kernel grants one, on its first store; the stores after
// it find the page there). Each first store is an ordinary page fault, which Linux (6.4 and
// later) serves under a lock of this mapping alone, and earlier kernels under the process's
// memory-map lock one fault at a time. madvise(MADV_POPULATE_WRITE) does the same work under
// the process's memory-map lock for the whole range, and any mmap or munmap of another thread
// waits for it: on a virtual machine whose host backs a fresh 2 MiB page slowly (1 to 6 ms),
// a writer unmapping its log window waited behind the chunk pool's refill thread
// (docs/benchmarks.md, "2026-11-29").
static void touch_pages(uintptr_t start, size_t count) {
    long page_size = sysconf(_SC_PAGESIZE);
    size_t step = page_size > 0 ? (size_t)page_size : 4096;
    for (size_t offset = 0; offset < count; offset += step) {
        *(volatile unsigned char *)(start + offset) = 0;
    }
}
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
    // A hint only: without it (an older kernel, huge pages turned off) the memory is the
    // same, in 4 KiB pages.
    (void)madvise((void *)start, count, MADV_HUGEPAGE);
    touch_pages(start, count);
#endif
    return (void *)start;
}

void strata_unmap_pages(void *bytes, size_t count) {
    if (bytes != NULL) (void)munmap(bytes, count);
}
