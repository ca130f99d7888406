#!/usr/bin/env python3
"""Recomputes the folding constants of Sources/CStrata/checksum.c.

CRC32 (IEEE) is the remainder modulo P(x) = 0x104C11DB7 over GF(2). Folding the running
remainder D bits forward needs x^(D+32) mod P and x^(D-32) mod P; the final reduction needs
x^96 and x^64 mod P, and Barrett's mu = floor(x^64 / P). The reflected bit order of the CRC
means each constant is bit-reversed (32 bits) and shifted left one; mu and P are reversed
over 33 bits.
"""

P = 0x104C11DB7


def x_power_mod_p(n):
    r = 1
    for _ in range(n):
        r <<= 1
        if r & (1 << 32):
            r ^= P
    return r


def reversed_bits(value, width):
    return int(format(value, f"0{width}b")[::-1], 2)


def quotient(a, b):
    q = 0
    while a.bit_length() >= b.bit_length():
        shift = a.bit_length() - b.bit_length()
        q |= 1 << shift
        a ^= b << shift
    return q


for name, n in [
    ("K_544", 544), ("K_480", 480),
    ("K_2080", 2080), ("K_2016", 2016), ("K_416", 416), ("K_352", 352), ("K_288", 288), ("K_224", 224),
    ("K_160", 160), ("K_96", 96), ("K_64", 64),
]:
    print(f"{name} 0x{reversed_bits(x_power_mod_p(n), 32) << 1:09x}")
print(f"MU 0x{reversed_bits(quotient(1 << 64, P), 33):09x}")
print(f"POLY 0x{reversed_bits(P, 33):09x}")
