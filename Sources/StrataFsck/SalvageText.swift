import Foundation
import Strata
import StrataVerifier

/// How `--salvage` reports what the store gave up, on a terminal and as JSON.
enum SalvageText {
    static func lines(_ recovery: RecoveryReport) -> [String] {
        var lines: [String] = []
        guard let salvage = recovery.salvage else { return lines }
        if let rebuilt = salvage.manifestRebuilt {
            lines.append("salvage manifest rebuilt: \(rebuilt)")
        }
        for dropped in salvage.droppedLogBytes {
            lines.append("salvage \(dropped.file) @ \(dropped.offset)  dropped \(dropped.byteCount) bytes of the WAL (\(dropped.reason))")
        }
        for range in salvage.missingSequences {
            let which = range.count == 1 ? "transaction \(range.lowerBound)" : "transactions \(range.lowerBound) to \(range.upperBound)"
            lines.append("salvage lost \(which): no intact WAL record holds \(range.count == 1 ? "it" : "them")")
        }
        for lost in salvage.lostSegments {
            var line = "salvage \(lost.file)  left out of the store"
            if let movedTo = lost.movedTo { line += ", moved to \(movedTo)" }
            if let smallest = lost.smallestKey, let largest = lost.largestKey {
                line += "; keys \(key(smallest)) to \(key(largest)) may be missing or older"
            }
            if let entries = lost.entryCount { line += " (\(entries) entries)" }
            lines.append(line + " (\(lost.reason))")
        }
        for moved in recovery.movedAside where !salvage.lostSegments.contains(where: { $0.movedTo == moved.movedTo }) {
            lines.append("salvage \(moved.name)  moved to \(moved.movedTo) (\(moved.reason))")
        }
        return lines
    }

    static func summary(_ recovery: RecoveryReport) -> String {
        guard let salvage = recovery.salvage, !salvage.isEmpty else { return "salvage: nothing was damaged, nothing dropped" }
        return "salvage: the store opens again; what it gave up is listed above"
    }

    /// A key as text when it is printable UTF-8, else as hex.
    static func key(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) {
            return "\"\(text)\""
        }
        return "0x" + bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The salvage report and the check after it, as one JSON object.
    static func json(_ recovery: RecoveryReport, _ verification: VerificationReport) -> String {
        struct Dropped: Encodable {
            var file: String
            var offset: Int64
            var byteCount: Int64
            var reason: String
        }
        struct Lost: Encodable {
            var file: String
            var movedTo: String?
            var smallestKey: String?
            var largestKey: String?
            var entryCount: UInt64?
            var reason: String
        }
        struct Moved: Encodable {
            var name: String
            var movedTo: String
            var reason: String
        }
        struct Salvage: Encodable {
            var manifestRebuilt: String?
            var droppedLogBytes: [Dropped]
            var missingSequences: [[UInt64]]
            var lostSegments: [Lost]
            var movedAside: [Moved]
            var droppedAnything: Bool
        }
        struct Output: Encodable {
            var salvage: Salvage
            var verification: VerificationReport
        }
        let report = recovery.salvage ?? SalvageReport()
        let output = Output(
            salvage: Salvage(
                manifestRebuilt: report.manifestRebuilt,
                droppedLogBytes: report.droppedLogBytes.map { Dropped(file: $0.file, offset: $0.offset, byteCount: $0.byteCount, reason: $0.reason) },
                missingSequences: report.missingSequences.map { [$0.lowerBound, $0.upperBound] },
                lostSegments: report.lostSegments.map {
                    Lost(
                        file: $0.file, movedTo: $0.movedTo, smallestKey: $0.smallestKey.map(key), largestKey: $0.largestKey.map(key),
                        entryCount: $0.entryCount, reason: $0.reason)
                },
                movedAside: recovery.movedAside.map { Moved(name: $0.name, movedTo: $0.movedTo, reason: $0.reason) },
                droppedAnything: !report.isEmpty),
            verification: verification)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Plain strings, numbers, booleans and arrays: encoding cannot fail.
        let data = try! encoder.encode(output)
        return String(decoding: data, as: UTF8.self)
    }
}
