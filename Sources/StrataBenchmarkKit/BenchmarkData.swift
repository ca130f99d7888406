// The data rules of the standard workloads (shared/bench/WORKLOADS.md, "Data"): keys, values
// and the random orders, the same for every engine in every run. Everything is seeded, so
// two engines (and two runs) see byte-identical keys, values and orders.

/// SplitMix64: small, fast, and good enough that its output does not compress. The
/// permutation and the uniform picks are written out here rather than taken from the
/// standard library, whose algorithms may change between toolchains.
public struct BenchmarkRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform pick in `0..<bound` (multiply-high; the bias is below bound / 2^64).
    public mutating func next(below bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        return Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A seeded permutation of `0..<count` (Fisher–Yates).
    public static func permutation(count: Int, seed: UInt64) -> [Int] {
        var random = BenchmarkRandom(seed: seed)
        var order = Array(0..<count)
        var i = count - 1
        while i > 0 {
            order.swapAt(i, random.next(below: i + 1))
            i -= 1
        }
        return order
    }
}

/// Key i: the 16 ASCII bytes of i in decimal, zero-padded, so byte order is numeric order.
public enum BenchmarkKey {
    public static let length = 16

    public static func make(_ index: Int) -> [UInt8] {
        precondition(index >= 0 && index < 10_000_000_000_000_000, "key index \(index) does not fit 16 digits")
        return withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer in
            var rest = index
            for position in stride(from: length - 1, through: 0, by: -1) {
                buffer[position] = 0x30 &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
            return finishedArray(buffer)
        }
    }

    /// The index a key encodes, or nil when it is not a benchmark key.
    public static func index(of key: some Collection<UInt8>) -> Int? {
        guard key.count == length else { return nil }
        var value = 0
        for byte in key {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}

/// Values: `length` pseudo-random bytes, fresh for every put.
public struct BenchmarkValues: Sendable {
    public static let standardLength = 100
    public let length: Int
    private var random: BenchmarkRandom

    public init(seed: UInt64, length: Int = BenchmarkValues.standardLength) {
        self.length = length
        random = BenchmarkRandom(seed: seed)
    }

    public mutating func next() -> [UInt8] {
        withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer in
            var position = 0
            while position < length {
                var word = random.next()
                let end = min(position + 8, length)
                while position < end {
                    buffer[position] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    position += 1
                }
            }
            return finishedArray(buffer)
        }
    }
}

/// `bytes` as an array, made by the initializer the standard library ships specialized for
/// bytes. The generic ones (`unsafeUninitializedCapacity:`) look the array's storage type up
/// in the runtime's metadata cache on every call: two lookups a put were about a fifth of
/// fillseq's timed loop, for every engine alike, time that measured the harness and not the
/// engines (docs/benchmarks.md, "The harness's keys and values").
@inline(__always)
private func finishedArray(_ bytes: UnsafeMutableRawBufferPointer) -> [UInt8] {
    [UInt8](UnsafeRawBufferPointer(bytes))
}

/// One put of a batch.
public struct KeyValue: Sendable {
    public var key: [UInt8]
    public var value: [UInt8]

    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}
