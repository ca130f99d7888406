#include "strata_prefault.h"

#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void strata_prefault(void *bytes, size_t count) {
#if defined(__linux__)
    // Asked each time, not cached in a static: threads of several stores call this at once,
    // and a lazily set static is a data race. It is called once a 1 MiB chunk or a table.
    long page_size = sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)bytes + (uintptr_t)page_size - 1) & ~((uintptr_t)page_size - 1);
    uintptr_t end = ((uintptr_t)bytes + count) & ~((uintptr_t)page_size - 1);
    if (end <= start) return;
    (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
#else
    (void)bytes;
    (void)count;
#endif
}
