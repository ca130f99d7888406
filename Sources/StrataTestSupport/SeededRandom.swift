/// A small deterministic random number generator (SplitMix64): the same seed gives the same
/// sequence on every platform and every run, so a failing crash test can be replayed from
/// its seed. Not cryptographic.
///
/// Works with the standard library's random APIs:
/// `Int.random(in: 0..<10, using: &random)`, `array.shuffled(using: &random)`.
public struct SeededRandom: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// A generator for one of many independent streams under one seed (for example one per
    /// file of a crash image), so what a stream produces does not depend on how much the
    /// other streams were used or in which order they were visited.
    public init(seed: UInt64, stream: UInt64) {
        state = Self.mix(seed ^ Self.mix(stream &+ 0x2545_F491_4F6C_DD1D))
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// `count` random bytes.
    public mutating func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "negative byte count")
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            var word = next()
            for _ in 0..<min(8, count - result.count) {
                result.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return result
    }

    /// The SplitMix64 finaliser: a bijection that scrambles every input bit into every
    /// output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
