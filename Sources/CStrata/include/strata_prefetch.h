// Cache prefetch hints, which Swift has no spelling for.
#ifndef STRATA_PREFETCH_H
#define STRATA_PREFETCH_H

#include <stddef.h>

// Every cache line of `count` bytes at `bytes`, for reading (`for_write` 0) or writing (1).
// `__builtin_prefetch` takes its arguments as constants: the two calls below are folded to one
// wherever a caller passes a constant, which both functions after this one do.
static inline void strata_prefetch_lines(const void *bytes, size_t count, int for_write) {
    const char *p = (const char *)bytes;
    const char *end = p + count;
    for (p = (const char *)((size_t)p & ~(size_t)63); p < end; p += 64) {
        if (for_write) {
            __builtin_prefetch(p, 1, 3);
        } else {
            __builtin_prefetch(p, 0, 3);
        }
    }
}

/// Asks the processor to start loading every cache line of `count` bytes at `bytes`, without
/// waiting for them. A point read knows which part of a data block it will walk before it
/// walks it; loading those lines together costs about one memory latency instead of one per
/// line. Only a hint: it never faults, and has no effect on the result.
static inline void strata_prefetch(const void *bytes, size_t count) { strata_prefetch_lines(bytes, count, 0); }

/// Like `strata_prefetch`, for lines about to be written: a write-intent hint where the target
/// has one (arm64's PRFM PSTL1KEEP); on x86-64 without PRFCHW the compiler emits the same
/// load hint, which still brings a line no other core holds in a state a store completes in
/// at once. The WAL's write window uses it for the lines the next record will land in.
static inline void strata_prefetch_for_write(const void *bytes, size_t count) { strata_prefetch_lines(bytes, count, 1); }

#endif
