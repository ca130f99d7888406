// CRC32 with the IEEE polynomial, the same function as zlib's crc32(): a carry-less-multiply
// fold on x86_64 processors that have it, zlib everywhere else. Why: see
// docs/decisions/2026-11-21-checksum.md.
#ifndef STRATA_CHECKSUM_H
#define STRATA_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/// The CRC32 of `count` bytes at `bytes`, continuing from `crc` (0 to start), exactly as
/// zlib's `crc32(crc, bytes, count)` returns it.
uint32_t strata_crc32(uint32_t crc, const void *bytes, size_t count);

/// 1 when `strata_crc32` takes the carry-less-multiply path on this processor, else 0.
int strata_crc32_is_accelerated(void);

/// zlib's crc32 alone, for tests that compare the two paths.
uint32_t strata_crc32_portable(uint32_t crc, const void *bytes, size_t count);

#endif
