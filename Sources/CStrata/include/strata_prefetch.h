// Cache prefetch hints, which Swift has no spelling for.
#ifndef STRATA_PREFETCH_H
#define STRATA_PREFETCH_H

#include <stddef.h>

/// Asks the processor to start loading every cache line of `count` bytes at `bytes`, without
/// waiting for them. A point read knows which part of a data block it will walk before it
/// walks it; loading those lines together costs about one memory latency instead of one per
/// line. Only a hint: it never faults, and has no effect on the result.
static inline void strata_prefetch(const void *bytes, size_t count) {
    const char *p = (const char *)bytes;
    const char *end = p + count;
    for (p = (const char *)((size_t)p & ~(size_t)63); p < end; p += 64) {
        __builtin_prefetch(p, 0, 3);
    }
}

/// Like `strata_prefetch`, for lines about to be written: asks for them in a state the
/// processor can write without a further round trip. The WAL's write window uses it for the
/// lines the next record will land in.
static inline void strata_prefetch_for_write(const void *bytes, size_t count) {
    const char *p = (const char *)bytes;
    const char *end = p + count;
    for (p = (const char *)((size_t)p & ~(size_t)63); p < end; p += 64) {
        __builtin_prefetch(p, 1, 3);
    }
}

#endif
