// CRC32 (IEEE, reflected, the polynomial 0x04C11DB7) by folding 16-byte lanes with
// carry-less multiplication, then a Barrett reduction to 32 bits.
//
// Why: zlib's table-driven crc32 reads about 2 GB/s on the project's machine, and every data
// block is checked on its first read after an open, so a scan that starts after an open
// spent about a fifth of its time there. The fold reads about 7 GB/s on 4 KiB blocks and
// returns the same value, so the file format does not change.
//
// How the fold works: the running remainder R (128 bits) stands for the bytes read so far.
// Moving it D bits further along the message is multiplying it by x^D; done modulo the
// polynomial P, that is two 64x64-bit carry-less products of R's halves with the
// precomputed constants x^(D+32) mod P and x^(D-32) mod P (bit-reflected, shifted left
// one), then an XOR with the next 16 bytes. Four lanes fold 64 bytes per step (D = 512)
// so the multiplier's latency overlaps; they are then folded into one (D = 128). The last
// 128 bits are reduced to 96 (x^96), then 64 (x^64), and Barrett's method with
// mu = floor(x^64 / P) gives the 32-bit remainder. The constants below were computed with
// polynomial arithmetic over GF(2); `scripts/crc32-constants.py` recomputes them.
#include "strata_checksum.h"

#include <zlib.h>

uint32_t strata_crc32_portable(uint32_t crc, const void *bytes, size_t count) {
    const Bytef *p = bytes;
    uLong result = crc;
    // zlib takes a 32-bit length.
    while (count > 0) {
        uInt piece = count > (1u << 30) ? (1u << 30) : (uInt)count;
        result = crc32(result, p, piece);
        p += piece;
        count -= piece;
    }
    return (uint32_t)result;
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define STRATA_FOLD_TARGET __attribute__((target("pclmul,sse4.1")))

// x^(512+32) mod P and x^(512-32) mod P: four lanes ahead.
#define K_544 0x154442bd4ULL
#define K_480 0x1c6e41596ULL
// x^(128+32) mod P and x^(128-32) mod P: one lane ahead.
#define K_160 0x1751997d0ULL
#define K_96 0x0ccaa009eULL
// x^64 mod P.
#define K_64 0x163cd6124ULL
// floor(x^64 / P), and P itself, reflected to 33 bits.
#define MU 0x1f7011641ULL
#define POLY 0x1db710641ULL

STRATA_FOLD_TARGET
static inline __m128i fold(__m128i lane, __m128i constants, __m128i next) {
    __m128i low = _mm_clmulepi64_si128(lane, constants, 0x00);
    __m128i high = _mm_clmulepi64_si128(lane, constants, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

STRATA_FOLD_TARGET
static inline __m128i load(const uint8_t *p) {
    return _mm_loadu_si128((const __m128i *)p);
}

// `count` is at least 64 and a multiple of 16.
STRATA_FOLD_TARGET
static uint32_t fold_crc32(uint32_t crc, const uint8_t *p, size_t count) {
    const __m128i ahead4 = _mm_set_epi64x((long long)K_480, (long long)K_544);
    const __m128i ahead1 = _mm_set_epi64x((long long)K_96, (long long)K_160);
    // zlib's convention: the remainder starts as ~crc, so the running value goes in
    // inverted, XORed into the message's first bytes.
    __m128i a = _mm_xor_si128(load(p), _mm_cvtsi32_si128((int)~crc));
    __m128i b = load(p + 16);
    __m128i c = load(p + 32);
    __m128i d = load(p + 48);
    p += 64;
    count -= 64;
    while (count >= 64) {
        a = fold(a, ahead4, load(p));
        b = fold(b, ahead4, load(p + 16));
        c = fold(c, ahead4, load(p + 32));
        d = fold(d, ahead4, load(p + 48));
        p += 64;
        count -= 64;
    }
    a = fold(a, ahead1, b);
    a = fold(a, ahead1, c);
    a = fold(a, ahead1, d);
    while (count >= 16) {
        a = fold(a, ahead1, load(p));
        p += 16;
        count -= 16;
    }
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    // 128 -> 96 bits: the low half times x^96, plus the high half.
    __m128i t = _mm_xor_si128(_mm_clmulepi64_si128(a, ahead1, 0x10), _mm_srli_si128(a, 8));
    // 96 -> 64 bits: the low 32 bits times x^64, plus the rest.
    const __m128i x64 = _mm_set_epi64x(0, (long long)K_64);
    t = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(t, low32), x64, 0x00), _mm_srli_si128(t, 4));
    // Barrett: q = (low 32 bits * mu) mod x^32, then remainder = t + q * P.
    const __m128i barrett = _mm_set_epi64x((long long)MU, (long long)POLY);
    __m128i q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x10), low32);
    t = _mm_xor_si128(t, _mm_clmulepi64_si128(q, barrett, 0x00));
    return ~(uint32_t)_mm_extract_epi32(t, 1);
}

static int accelerated = -1;

int strata_crc32_is_accelerated(void) {
    int known = __atomic_load_n(&accelerated, __ATOMIC_RELAXED);
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
        __atomic_store_n(&accelerated, known, __ATOMIC_RELAXED);
    }
    return known;
}

uint32_t strata_crc32(uint32_t crc, const void *bytes, size_t count) {
    const uint8_t *p = bytes;
    // Below 64 bytes the fold's set-up costs more than the table walk saves.
    if (count >= 64 && strata_crc32_is_accelerated()) {
        size_t folded = count & ~(size_t)15;
        crc = fold_crc32(crc, p, folded);
        p += folded;
        count -= folded;
    }
    return count > 0 ? strata_crc32_portable(crc, p, count) : crc;
}

#else

int strata_crc32_is_accelerated(void) { return 0; }

uint32_t strata_crc32(uint32_t crc, const void *bytes, size_t count) {
    return strata_crc32_portable(crc, bytes, count);
}

#endif
