import Foundation
import StrataVerifier

/// How a report reads on a terminal, and as JSON for tools.
enum ReportText {
    /// `error    seg-0000000002.sst @ 4096  [segment.checksum] the segment file is damaged ...`
    static func line(_ finding: VerifierFinding) -> String {
        let severity = finding.severity.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        var place = finding.file.isEmpty ? "." : finding.file
        if let offset = finding.offset { place += " @ \(offset)" }
        let repaired = finding.repaired ? " (repaired)" : ""
        return "\(severity) \(place)  [\(finding.code)] \(finding.message)\(repaired)"
    }

    static func summary(_ report: VerificationReport) -> String {
        let files = "\(report.filesChecked) file\(report.filesChecked == 1 ? "" : "s") checked"
        let repaired = report.repairedCount > 0 ? ", \(report.repairedCount) repaired" : ""
        if report.isClean {
            return "\(report.path): clean (\(files)\(repaired))"
        }
        let left = report.problemsLeft
        let fixable = report.findings.count(where: { $0.isProblemLeft && $0.repairable })
        let hint = fixable > 0 ? "; \(fixable) can be fixed with --repair" : ""
        return "\(report.path): \(left) problem\(left == 1 ? "" : "s") left (\(files)\(repaired))\(hint)"
    }

    /// One line of JSON, keys sorted so the output is stable.
    static func json(_ report: VerificationReport) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and booleans cannot fail.
        let data = try! encoder.encode(report)
        return String(decoding: data, as: UTF8.self)
    }
}
