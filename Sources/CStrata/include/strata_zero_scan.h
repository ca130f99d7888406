// Zero-filled regions: a log file's preallocated tail, which recovery and the verifier look
// at on every open.
#ifndef STRATA_ZERO_SCAN_H
#define STRATA_ZERO_SCAN_H

#include <stddef.h>

/// 1 when all `count` bytes at `bytes` are zero (or `count` is 0), else 0.
int strata_is_all_zero(const void *bytes, size_t count);

/// The index of the last non-zero byte of the `count` bytes at `bytes`, or -1 when all are
/// zero.
long strata_last_nonzero(const void *bytes, size_t count);

#endif
