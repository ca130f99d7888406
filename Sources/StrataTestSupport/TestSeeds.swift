import Foundation

/// The seed and length conventions every randomised test shares: STRATA_SEED replays a run
/// (decimal, or hexadecimal with a 0x prefix), STRATA_LONG_TESTS=1 runs about ten times more
/// cases. Each test prints its seed, with how to replay it, so a failure's log names it.
public enum TestSeeds {
    /// True when STRATA_LONG_TESTS=1.
    public static var longTests: Bool {
        ProcessInfo.processInfo.environment["STRATA_LONG_TESTS"] == "1"
    }

    /// `count`, or ten times `count` for long tests.
    public static func scaled(_ count: Int) -> Int {
        longTests ? count * 10 : count
    }

    /// The seed given in STRATA_SEED, if any.
    public static var replaySeed: UInt64? {
        guard let text = ProcessInfo.processInfo.environment["STRATA_SEED"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            return nil
        }
        if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }

    /// The seed from STRATA_SEED when set, otherwise `defaultSeed`; printed with how to
    /// replay it.
    public static func seed(_ defaultSeed: UInt64, test: String) -> UInt64 {
        TestLog.install()
        let seed = replaySeed ?? defaultSeed
        print("[\(test)] seed \(seed)\(longTests ? " (long)" : "") — replay with STRATA_SEED=\(seed)")
        return seed
    }
}
