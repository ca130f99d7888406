import Foundation

/// A base-10 logarithmic axis: its range, and ticks at 1, 2 and 5 times powers of ten.
struct LogAxis {
    struct Tick {
        let value: Double
        /// A power of ten, drawn with a darker grid line.
        let isDecade: Bool
        /// Whether it gets a label; the 2x and 5x labels are left off when they would crowd.
        let isLabelled: Bool
    }

    /// The ends of the axis, as log10 of the values.
    let lowerLog: Double
    let upperLog: Double

    /// Where `value` falls between the ends, 0 at the lower one and 1 at the upper one.
    func fraction(of value: Double) -> Double {
        (log10(value) - lowerLog) / (upperLog - lowerLog)
    }

    /// An axis for N: the sizes themselves sit a little inside the ends, so their markers are
    /// not cut by the frame. It spans at least 0.45 decades, which always holds a tick (the
    /// widest gap between 1, 2, 5 and 10 is log10(2.5), about 0.4).
    static func forSizes(_ values: [Double]) -> LogAxis {
        let low = log10(values.min() ?? 1)
        let high = log10(values.max() ?? 1)
        let span = high - low
        let padding = max(0.08 * span, 0.1, (0.45 - span) / 2)
        return LogAxis(lowerLog: low - padding, upperLog: high + padding)
    }

    /// An axis for ops/s: the ends are 1, 2 or 5 times a power of ten just beyond the values,
    /// so both ends are labelled and the reader never has to guess the scale.
    static func forRates(_ values: [Double]) -> LogAxis {
        let low = values.min() ?? 1
        let high = values.max() ?? 1
        return LogAxis(lowerLog: log10(roundStepDown(low / 1.08)), upperLog: log10(roundStepUp(high * 1.08)))
    }

    /// The ticks between the ends. `pixelsPerDecade` is how long a factor of ten is on screen
    /// and `labelGap` how far apart two labels must be to stay readable.
    func ticks(pixelsPerDecade: Double, labelGap: Double) -> [Tick] {
        let tolerance = 1e-9
        let labelsSteps = log10(2.0) * pixelsPerDecade >= labelGap
        var ticks: [Tick] = []
        var lastLabelledDecade = -Double.infinity
        for exponent in Int(floor(lowerLog))...Int(ceil(upperLog)) {
            for multiplier in [1.0, 2.0, 5.0] {
                let logValue = Double(exponent) + log10(multiplier)
                guard logValue >= lowerLog - tolerance && logValue <= upperLog + tolerance else { continue }
                let value = multiplier * pow(10, Double(exponent))
                if multiplier == 1 {
                    // On a very long axis even the powers of ten may crowd; keep every one that
                    // has room after the last labelled one.
                    let labelled = (logValue - lastLabelledDecade) * pixelsPerDecade >= labelGap
                    if labelled { lastLabelledDecade = logValue }
                    ticks.append(Tick(value: value, isDecade: true, isLabelled: labelled))
                } else {
                    ticks.append(Tick(value: value, isDecade: false, isLabelled: labelsSteps))
                }
            }
        }
        return ticks
    }

    /// The largest 1, 2 or 5 times a power of ten at or below `value`.
    private static func roundStepDown(_ value: Double) -> Double {
        let decade = pow(10, floor(log10(value)))
        return [5.0, 2.0, 1.0].map { $0 * decade }.first { $0 <= value * (1 + 1e-9) } ?? decade
    }

    /// The smallest 1, 2 or 5 times a power of ten at or above `value`.
    private static func roundStepUp(_ value: Double) -> Double {
        let decade = pow(10, floor(log10(value)))
        return [1.0, 2.0, 5.0, 10.0].map { $0 * decade }.first { $0 >= value * (1 - 1e-9) } ?? 10 * decade
    }
}
