import Foundation

/// The ways numbers and text are written into the chart and the table. Everything goes through
/// fixed formats, never the user's locale, so the same input gives the same bytes anywhere.
enum NumberText {
    /// A tick label with an SI suffix: 200k, 1M, 10M, 2G.
    static func siLabel(_ value: Double) -> String {
        let units: [(Double, String)] = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        for (scale, suffix) in units where value >= scale {
            return trimmed(value / scale) + suffix
        }
        return trimmed(value)
    }

    /// `value` with commas between groups of three digits, rounded to a whole number.
    static func grouped(_ value: Double) -> String {
        let whole = Int(value.rounded())
        let digits = String(whole.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return whole < 0 ? "-" + out : out
    }

    /// An SVG coordinate: one decimal is finer than a pixel and keeps the file small.
    static func coordinate(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    /// `text` safe inside an SVG text node or a double-quoted attribute. Control characters
    /// other than tab are not allowed in XML at all, so they become spaces.
    static func xmlEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case _ where scalar.value < 0x20 && scalar != "\t": out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A rough width of `text` in a sans-serif font, enough to keep labels and legend entries
    /// from running into each other without measuring glyphs.
    static func estimatedWidth(_ text: String, fontSize: Double) -> Double {
        Double(text.count) * fontSize * 0.6
    }

    /// Whole numbers without a decimal point, others with up to two decimals.
    private static func trimmed(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        var text = String(format: "%.2f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
