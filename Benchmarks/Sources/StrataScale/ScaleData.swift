// The data of a scale run (shared/bench/WORKLOADS.md, "Data"): key i is BenchmarkKey's 16
// zero-padded digits; a value is 100 pseudo-random, incompressible bytes, fresh for every put.
// Unlike BenchmarkValues' single stream, each value here is derived from (key, generation),
// the generation counting the key's puts, so every read can be checked byte for byte
// without keeping the values.
import StrataBenchmarkKit

struct ScaleData: Sendable {
    static let keyLength = BenchmarkKey.length
    static let valueLength = BenchmarkValues.standardLength
    /// Bytes of one live entry: key and value, no overhead.
    static let entryBytes = keyLength + valueLength

    /// The seed of the run; every order, pick and value derives from it.
    let seed: UInt64

    /// The independent random streams of a run.
    enum Stream: UInt64 {
        case values = 1
        case largeOrder, largeReads
        case smallOrder, smallReads
        case overwrite, verifyReads
    }

    func seed(_ stream: Stream) -> UInt64 {
        var mixer = BenchmarkRandom(seed: seed ^ (stream.rawValue << 40))
        return mixer.next()
    }

    /// A seeded permutation of `0..<count`: the same Fisher–Yates with the same generator
    /// as `BenchmarkRandom.permutation` (so the same order for the same seed), held as
    /// UInt32 so the harness adds 4 bytes a key, not 8, to the memory being measured.
    static func permutation(count: Int, seed: UInt64) -> [UInt32] {
        precondition(count <= Int(UInt32.max) + 1, "count \(count) does not fit UInt32 indices")
        var random = BenchmarkRandom(seed: seed)
        var order = [UInt32](unsafeUninitializedCapacity: count) { buffer, initialized in
            for i in 0..<count { buffer[i] = UInt32(truncatingIfNeeded: i) }
            initialized = count
        }
        order.withUnsafeMutableBufferPointer { order in
            var i = count - 1
            while i > 0 {
                order.swapAt(i, random.next(below: i + 1))
                i -= 1
            }
        }
        return order
    }

    /// `count` uniform picks in `0..<bound`.
    static func picks(count: Int, below bound: Int, seed: UInt64) -> [UInt32] {
        var random = BenchmarkRandom(seed: seed)
        return (0..<count).map { _ in UInt32(truncatingIfNeeded: random.next(below: bound)) }
    }

    /// Writes key `index` into `key` (16 bytes) in place, so a get loop allocates no key.
    static func fillKey(_ index: Int, into key: inout [UInt8]) {
        key.withUnsafeMutableBufferPointer { buffer in
            var rest = index
            for position in stride(from: keyLength - 1, through: 0, by: -1) {
                buffer[position] = 0x30 &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
        }
    }

    private func valueRandom(key: Int, generation: UInt8) -> BenchmarkRandom {
        // Hash (key, generation) to a fresh SplitMix state: streams of neighbouring keys
        // do not overlap.
        var mixer = BenchmarkRandom(seed: seed(.values) ^ (UInt64(key) << 8 | UInt64(generation)))
        return BenchmarkRandom(seed: mixer.next())
    }

    /// The value of the `generation`-th put of `key` (0 for the load's).
    func value(key: Int, generation: UInt8) -> [UInt8] {
        var random = valueRandom(key: key, generation: generation)
        return [UInt8](unsafeUninitializedCapacity: Self.valueLength) { buffer, initialized in
            var position = 0
            while position < Self.valueLength {
                var word = random.next()
                let end = min(position + 8, Self.valueLength)
                while position < end {
                    buffer[position] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    position += 1
                }
            }
            initialized = Self.valueLength
        }
    }

    /// Whether `value` is byte for byte what `value(key:generation:)` makes, without
    /// allocating.
    func matches(_ value: [UInt8], key: Int, generation: UInt8) -> Bool {
        value.withUnsafeBytes { matches($0, key: key, generation: generation) }
    }

    /// The same for bytes borrowed from a scan.
    func matches(_ bytes: UnsafeRawBufferPointer, key: Int, generation: UInt8) -> Bool {
        guard bytes.count == Self.valueLength else { return false }
        var random = valueRandom(key: key, generation: generation)
        var position = 0
        while position < Self.valueLength {
            var word = random.next()
            let end = min(position + 8, Self.valueLength)
            while position < end {
                if bytes[position] != UInt8(truncatingIfNeeded: word) { return false }
                word >>= 8
                position += 1
            }
        }
        return true
    }
}

/// A read returned something else than what was written. Ends the run (exit status 2).
struct WrongValue: Error, CustomStringConvertible {
    var step: String
    var key: Int
    var problem: String

    init(step: String, key: Int, found value: [UInt8]?) {
        self.step = step
        self.key = key
        if let value {
            problem = value.count == ScaleData.valueLength
                ? "returned \(value.count) bytes that are not the value written"
                : "returned \(value.count) bytes, expected \(ScaleData.valueLength)"
        } else {
            problem = "returned no value (the key was written)"
        }
    }

    init(step: String, problem: String) {
        self.step = step
        key = -1
        self.problem = problem
    }

    var description: String {
        if key < 0 { return "wrong answer in \(step): \(problem)" }
        let digits = String(key)
        let padded = String(repeating: "0", count: max(0, ScaleData.keyLength - digits.count)) + digits
        return "wrong answer in \(step): get(\(padded)) \(problem)"
    }
}
