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

/// The ways `strata_crc32` can compute a CRC: zlib's tables, and the carry-less-multiply fold
/// in 128-bit registers, two lanes per 256-bit register (VPCLMULQDQ with AVX2), or four per
/// 512-bit register (VPCLMULQDQ with AVX-512).
enum {
    STRATA_CRC32_PORTABLE = 0,
    STRATA_CRC32_FOLD128 = 1,
    STRATA_CRC32_FOLD256 = 2,
    STRATA_CRC32_FOLD512 = 3,
};

/// 1 when this processor can take `path`, else 0.
int strata_crc32_has_path(int path);

/// `strata_crc32` taking at most `path`: the widest fold up to it that this processor has and
/// that `count` bytes are long enough for. For tests that check every path gives zlib's value.
uint32_t strata_crc32_using(int path, uint32_t crc, const void *bytes, size_t count);

#endif
