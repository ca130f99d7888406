import StrataFormat

/// Reads one segment file in full (docs/format/segment.md, "Validity rules") and compares it
/// with what the manifest says about it.
enum SegmentCheck {
    /// `meta` is the manifest's entry for the file, or nil when no trustworthy manifest names
    /// it (then only the file's own consistency is checked). `lastSequence` is the manifest's.
    static func check(name: String, bytes: [UInt8], meta: SegmentMeta?, lastSequence: UInt64?) -> [VerifierFinding] {
        var findings: [VerifierFinding] = []
        func report(_ code: String, _ offset: Int?, _ message: String) {
            findings.append(VerifierFinding(severity: .error, file: name, offset: offset.map(Int64.init), code: code, message: message))
        }
        let restore = "restore the store from a backup"

        if let meta, UInt64(bytes.count) < meta.fileSize {
            // The footer is gone with the end of the file; decoding would only report a
            // confusing bad magic.
            report(
                FindingCode.segmentTruncated, bytes.count,
                "the segment file is \(bytes.count) bytes, but the manifest says \(meta.fileSize): its end is missing; \(restore)")
            return findings
        }

        let reader: SegmentReader
        do {
            reader = try SegmentReader(bytes)
        } catch {
            report(FindingCode.segment(error.kind), error.offset, describe(error, restore))
            return findings
        }
        let footer = reader.footer

        var count: UInt64 = 0
        var previousKey: [UInt8]? = nil
        var firstUserKey: [UInt8]? = nil
        var lastUserKey: [UInt8]? = nil
        var reportedRange = false
        do throws(FormatError) {
            for (index, handle) in reader.dataBlockHandles.enumerated() {
                let block = try reader.dataBlock(index)
                // Order inside a block is checked by the block reader; across blocks it is
                // checked here: a block's first key must follow the previous block's last.
                for (position, entry) in try block.entries().enumerated() {
                    if position == 0, let previousKey, SegmentFormat.compareInternalKeys(previousKey, entry.key) >= 0 {
                        report(
                            FindingCode.segmentKeyOrder, Int(handle.offset),
                            "the data block at byte \(handle.offset) starts with a key that does not sort after the previous block's last key, so lookups may miss entries; \(restore)"
                        )
                        return findings
                    }
                    previousKey = entry.key
                    let parsed = try SegmentFormat.parseInternalKey(entry.key, offset: Int(handle.offset))
                    if parsed.kind == .tombstone && !entry.value.isEmpty {
                        throw FormatError(.malformed, "a tombstone in the data block at byte \(handle.offset) carries a value", offset: Int(handle.offset))
                    }
                    if !reportedRange && (parsed.sequence < footer.smallestSequence || parsed.sequence > footer.largestSequence) {
                        reportedRange = true
                        report(
                            FindingCode.segmentSequenceRange, Int(handle.offset),
                            "an entry in the data block at byte \(handle.offset) has sequence \(parsed.sequence), outside the footer's range \(footer.smallestSequence)...\(footer.largestSequence); \(restore)"
                        )
                    }
                    if firstUserKey == nil { firstUserKey = parsed.userKey }
                    lastUserKey = parsed.userKey
                    count += 1
                }
            }
        } catch {
            report(FindingCode.segment(error.kind), error.offset, describe(error, restore))
            return findings
        }
        if count != footer.entryCount {
            report(
                FindingCode.segmentEntryCount, bytes.count - SegmentFormat.footerSize + 48,
                "the segment holds \(count) entries, but its footer says \(footer.entryCount); \(restore)")
        }

        if let meta {
            var differences: [String] = []
            if meta.fileSize != UInt64(bytes.count) { differences.append("size \(bytes.count) bytes (manifest: \(meta.fileSize))") }
            if meta.entryCount != footer.entryCount { differences.append("\(footer.entryCount) entries (manifest: \(meta.entryCount))") }
            if meta.smallestSequence != footer.smallestSequence || meta.largestSequence != footer.largestSequence {
                differences.append(
                    "sequences \(footer.smallestSequence)...\(footer.largestSequence) (manifest: \(meta.smallestSequence)...\(meta.largestSequence))")
            }
            if firstUserKey != meta.smallestKey { differences.append("a different smallest key") }
            if lastUserKey != meta.largestKey { differences.append("a different largest key") }
            if !differences.isEmpty {
                report(
                    FindingCode.segmentMetadataMismatch, nil,
                    "the segment file does not match the manifest's record of it: it has \(differences.joined(separator: ", ")); one of the two was replaced or damaged: \(restore)"
                )
            }
        }
        if let lastSequence, footer.entryCount > 0, footer.largestSequence > lastSequence {
            report(
                FindingCode.segmentSequenceAboveManifest, nil,
                "the segment holds sequence \(footer.largestSequence), newer than the manifest's last sequence \(lastSequence), so WAL replay would apply those writes a second time; \(restore)"
            )
        }
        return findings
    }

    private static func describe(_ error: FormatError, _ restore: String) -> String {
        switch error.kind {
        case .unsupportedVersion:
            return "\(error.message); check this store with a newer strata-fsck"
        case .badMagic:
            return "\(error.message): this is not a segment file, or its end is missing; \(restore)"
        default:
            return "the segment file is damaged at byte \(error.offset) (\(error.message)); its data cannot be trusted: \(restore)"
        }
    }
}
