// The segment's filter block (docs/format/segment.md, "Filter block"): a blocked Bloom filter
// over the segment's user keys, so a lookup for an absent key usually reads no data block.
//
//   filter := bits[64 * lines] | k u8          bit i is bits[i / 8] >> (i % 8) & 1
//   hash   := fmix64(FNV-1a-64(userKey))
//   line   := ((hash & 0xFFFFFFFF) * lines) >> 32            one 512-bit (64-byte) line
//   h      := hash >> 32;  step := (hash >> 41) | 1    (both taken modulo 512)
//   probe j (0 ..< k) sets bit 512 * line + ((h + j * step) mod 512)
//
// Every probe of a key falls in one 64-byte line: one cache miss per filter, where probes
// spread over the whole filter cost up to k misses once the filters outgrow the CPU caches
// (a store of ten million keys has 12 MB of them). The price is a slightly higher false-
// positive rate (about 1.2% instead of 1% at 10 bits per key). One hash per key and double
// hashing give k probes for one pass over the key; the fmix64 finaliser spreads FNV's weak
// high bits; `step` is odd, so a key's probes do not cycle early inside the line.

import CStrata

/// A Bloom filter over user keys. No false negatives; at 10 bits per key and 7 probes
/// about 1.2% false positives.
public struct BloomFilter: Sendable, Equatable {
    /// The bit array, a whole number of bytes.
    public let bits: [UInt8]
    /// Number of probes per key (1 to 30).
    public let probes: Int

    public static let maxProbes = 30
    /// Bits per line: a 64-byte cache line.
    public static let lineBits = 512
    /// Even an empty or tiny filter gets this many bits (one line).
    public static let minimumBits = lineBits

    /// Collects the hashes of the keys to add; `finish` sizes the filter once the key count
    /// is known.
    public struct Builder: Sendable {
        public let bitsPerKey: Int
        private var hashes: [UInt64] = []

        public init(bitsPerKey: Int = SegmentFormat.bloomBitsPerKey) {
            precondition(bitsPerKey >= 1, "a Bloom filter needs at least one bit per key")
            self.bitsPerKey = bitsPerKey
        }

        public var keyCount: Int { hashes.count }

        public mutating func add(_ userKey: [UInt8]) {
            hashes.append(BloomFilter.hash(userKey))
        }

        /// Adds a key by its `BloomFilter.hash`.
        public mutating func add(hash: UInt64) {
            hashes.append(hash)
        }

        public func finish() -> BloomFilter {
            // k = bitsPerKey * ln 2 minimises the false-positive rate for a given size.
            let k = min(max(Int((Double(bitsPerKey) * 0.6931471805599453).rounded()), 1), BloomFilter.maxProbes)
            let bitCount = max(hashes.count * bitsPerKey, BloomFilter.minimumBits)
            let lines = (bitCount + BloomFilter.lineBits - 1) / BloomFilter.lineBits
            var bits = [UInt8](repeating: 0, count: lines * BloomFilter.lineBits / 8)
            for hash in hashes {
                let base = BloomFilter.line(hash, lines: lines) * BloomFilter.lineBits
                var h = UInt32(truncatingIfNeeded: hash >> 32)
                let step = UInt32(truncatingIfNeeded: hash >> 41) | 1
                for _ in 0..<k {
                    let bit = base + Int(h & 511)
                    bits[bit >> 3] |= 1 << UInt8(bit & 7)
                    h &+= step
                }
            }
            return BloomFilter(bits: bits, probes: k)
        }
    }

    init(bits: [UInt8], probes: Int) {
        self.bits = bits
        self.probes = probes
    }

    /// Decodes a filter block's contents. `offset` is only used in errors.
    public init(decoding bytes: [UInt8], offset: Int = 0) throws(FormatError) {
        guard bytes.count >= 2 else {
            throw FormatError(.truncated, "filter of \(bytes.count) bytes has no bits", offset: offset)
        }
        let k = Int(bytes[bytes.count - 1])
        guard k >= 1, k <= Self.maxProbes else {
            throw FormatError(.malformed, "filter probe count \(k) is outside 1...\(Self.maxProbes)", offset: offset + bytes.count - 1)
        }
        guard (bytes.count - 1) % (Self.lineBits / 8) == 0 else {
            throw FormatError(.malformed, "filter of \(bytes.count - 1) bytes is not a whole number of 64-byte lines", offset: offset)
        }
        self.init(bits: Array(bytes[0..<(bytes.count - 1)]), probes: k)
    }

    public func encoded() -> [UInt8] {
        var out = bits
        out.append(UInt8(probes))
        return out
    }

    /// False only if `userKey` was certainly not added.
    public func mayContain(_ userKey: [UInt8]) -> Bool {
        mayContain(hash: Self.hash(userKey))
    }

    /// `mayContain` for a key whose `hash` the caller computed once for several filters.
    public func mayContain(hash: UInt64) -> Bool {
        bits.withUnsafeBufferPointer { bits in
            let base = Self.line(hash, lines: bits.count * 8 / Self.lineBits) * Self.lineBits
            var h = UInt32(truncatingIfNeeded: hash >> 32)
            let step = UInt32(truncatingIfNeeded: hash >> 41) | 1
            for _ in 0..<probes {
                let bit = base + Int(h & 511)
                if bits[bit >> 3] & (1 << UInt8(bit & 7)) == 0 { return false }
                h &+= step
            }
            return true
        }
    }

    /// Starts loading the line `hash` selects and returns at once: a prefetch hint, not a
    /// load, so a caller about to probe many filters can issue every miss before the first
    /// arrives (a load that misses holds up the instructions behind it once the processor's
    /// window fills, and with a few dozen level-0 filters it does).
    public func prefetchLine(hash: UInt64) {
        bits.withUnsafeBufferPointer { bits in
            guard let base = bits.baseAddress else { return }
            strata_prefetch(base + Self.line(hash, lines: bits.count * 8 / Self.lineBits) * (Self.lineBits / 8), 1)
        }
    }

    /// The line a hash selects: its low 32 bits scaled to `lines` (a multiply and a shift,
    /// not a division).
    @inline(__always)
    static func line(_ hash: UInt64, lines: Int) -> Int {
        Int(((hash & 0xFFFF_FFFF) &* UInt64(lines)) >> 32)
    }

    /// The 64-bit hash of a user key: FNV-1a, then MurmurHash3's fmix64 finaliser.
    public static func hash(_ userKey: [UInt8]) -> UInt64 {
        userKey.withUnsafeBytes { hash($0) }
    }

    /// `hash` of a key given as raw bytes.
    public static func hash(_ userKey: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in userKey {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        return avalanche64(h)
    }
}
