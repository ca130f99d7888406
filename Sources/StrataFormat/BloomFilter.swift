// The segment's filter block (docs/format/segment.md, "Filter block"): a Bloom filter over
// the segment's user keys, so a lookup for an absent key usually reads no data block.
//
//   filter := bits[n] | k u8          bit i is bits[i / 8] >> (i % 8) & 1
//   hash   := fmix64(FNV-1a-64(userKey));  h1 = low 32 bits, h2 = (high 32 bits) | 1
//   probe j (0 ..< k) sets bit (h1 + j * h2) mod (8 * n)
//
// One hash per key and double hashing (Kirsch–Mitzenmacher) give k probes for the price of
// one pass over the key; the fmix64 finaliser spreads FNV's weak high bits. h2 is odd so
// that, with a bit count that is a multiple of 8, a key's probes do not all fall on the same
// bit of every byte (an even step shares a factor with the size and cycles early).

/// A Bloom filter over user keys. No false negatives; at 10 bits per key and 7 probes
/// about 1% false positives.
public struct BloomFilter: Sendable, Equatable {
    /// The bit array, a whole number of bytes.
    public let bits: [UInt8]
    /// Number of probes per key (1 to 30).
    public let probes: Int

    public static let maxProbes = 30
    /// Even an empty or tiny filter gets this many bits, so a few keys do not saturate it.
    public static let minimumBits = 64

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

        public func finish() -> BloomFilter {
            // k = bitsPerKey * ln 2 minimises the false-positive rate for a given size.
            let k = min(max(Int((Double(bitsPerKey) * 0.6931471805599453).rounded()), 1), BloomFilter.maxProbes)
            let bitCount = max(hashes.count * bitsPerKey, BloomFilter.minimumBits)
            var bits = [UInt8](repeating: 0, count: (bitCount + 7) / 8)
            let m = UInt64(bits.count * 8)
            for hash in hashes {
                let h1 = hash & 0xFFFF_FFFF, h2 = hash >> 32 | 1
                for j in 0..<UInt64(k) {
                    let bit = Int((h1 + j * h2) % m)
                    bits[bit >> 3] |= 1 << UInt8(bit & 7)
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
        self.init(bits: Array(bytes[0..<(bytes.count - 1)]), probes: k)
    }

    public func encoded() -> [UInt8] {
        var out = bits
        out.append(UInt8(probes))
        return out
    }

    /// False only if `userKey` was certainly not added.
    public func mayContain(_ userKey: [UInt8]) -> Bool {
        let hash = Self.hash(userKey)
        let h1 = hash & 0xFFFF_FFFF, h2 = hash >> 32 | 1
        let m = UInt64(bits.count * 8)
        for j in 0..<UInt64(probes) {
            let bit = Int((h1 + j * h2) % m)
            if bits[bit >> 3] & (1 << UInt8(bit & 7)) == 0 { return false }
        }
        return true
    }

    /// The 64-bit hash of a user key: FNV-1a, then MurmurHash3's fmix64 finaliser.
    public static func hash(_ userKey: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in userKey {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        return avalanche64(h)
    }
}
