import StrataFormat

/// Reads the WAL segments the store would replay, oldest first, applying the rules recovery
/// applies (docs/format/wal.md, "Validity rules" and "Recovery"): damage is a torn write,
/// unless a later record, or a later segment's record, proves it had been synced.
struct WALCheck {
    /// A torn write where the log ends, which repair cuts off.
    struct TornTail {
        var file: String
        var offset: Int
    }

    /// The store's limits, as docs/format/wal.md gives them ("Batch payload").
    static let maxKeyBytes = 16 * 1024
    static let maxValueBytes = 16 << 20

    private(set) var findings: [VerifierFinding] = []
    private(set) var tornTail: TornTail?
    /// The sequence of the first record read, if any.
    private(set) var firstSequence: UInt64?
    /// The sequence the next record must carry; nil after damage, when it cannot be known.
    private var expected: UInt64?
    /// How the last segment checked read, nil when it could not be read through.
    private(set) var lastOutcome: WALSegmentReader.Outcome?

    /// The sequence of the last record read, when known.
    var lastSequenceRead: UInt64? { expected.map { $0 &- 1 } }

    /// `lastSequence` is the manifest's, or nil when the manifest could not be read.
    init(lastSequence: UInt64?) {
        // A damaged manifest can give the largest sequence there is, which has no successor
        // to expect (`+ 1` would trap: Fixtures/fuzz/wal/crashes).
        expected = lastSequence.flatMap { $0 < .max ? $0 + 1 : nil }
    }

    /// Reports the last segment as a creation that a crash interrupted when it is one. The
    /// store deletes such a segment when it opens, and the one before it becomes the last.
    mutating func checkIncomplete(name: String, bytes: [UInt8]) -> Bool {
        guard WALTail.isIncompleteSegment(bytes) else { return false }
        findings.append(
            VerifierFinding(
                severity: .info, file: name, offset: 0, code: FindingCode.walIncompleteSegment,
                message:
                    "the WAL segment's creation was interrupted by a crash before its header was written; it holds no record, and the store deletes it when it opens"
            ))
        return true
    }

    /// Checks one segment. `later` is nil for the last segment, as in `WALSegmentReader.read`;
    /// otherwise it looks in the segments after this one for a record proving a sync.
    mutating func check(name: String, number: UInt64, bytes: [UInt8], later: (() -> SyncEvidence?)?) {
        lastOutcome = nil
        let header: WALFormat.SegmentHeader
        do {
            header = try withBorrowedBytes(bytes) { raw throws(FormatError) in try WALFormat.SegmentHeader.decode(raw) }
        } catch {
            if case .unsupportedVersion = error.kind {
                self.report(FindingCode.walUnsupportedVersion, name, error.offset, "\(error.message); check this store with a newer strata-fsck")
            } else {
                self.report(
                    FindingCode.walHeader, name, error.offset,
                    "the WAL segment's header is damaged (\(error.message)), so the store cannot replay it and will refuse to open; restore the store from a backup"
                )
            }
            expected = nil
            return
        }
        if header.segmentNumber != number {
            report(
                FindingCode.walNumberMismatch, name, 16,
                "the WAL segment's header says it is number \(header.segmentNumber), but its name says \(number); the file was renamed or copied over, and the store will refuse to open: restore the store from a backup"
            )
        }

        // The damage rules are WALSegmentReader's, the same code recovery runs.
        struct Stop: Error {}
        let outcome: WALSegmentReader.Outcome
        do {
            outcome = try WALSegmentReader.read(bytes, later: later, sequenceFloor: expected.map { $0 - 1 }) { payload, offset in
                guard checkBatch(payload, name: name, offset: offset) else { throw Stop() }
            }
        } catch {
            expected = nil
            return
        }
        lastOutcome = outcome
        switch outcome.damage {
        case nil:
            return
        case .corruption(let offset, let reason, .laterRecord(let proof))?:
            report(
                FindingCode.walCorruption, name, offset,
                "the WAL is damaged at byte \(offset) (\(reason)), and the record at byte \(proof) shows these bytes had been synced, so this is not a torn write: the store will refuse to open, restore it from a backup"
            )
        case .corruption(let offset, let reason, .laterSegment(let file, let proof))?:
            report(
                FindingCode.walCorruption, name, offset,
                "the WAL segment is damaged at byte \(offset) (\(reason)), and the record at byte \(proof) of the later segment \(file) shows this one had been synced to its end, so this is not a torn write: the store will refuse to open, restore it from a backup"
            )
        case .corruption(let offset, let reason, _)?:
            report(
                FindingCode.walCorruption, name, offset,
                "the WAL segment is damaged at byte \(offset) (\(reason)) in bytes that had been synced: the store will refuse to open, restore it from a backup"
            )
        case .tornTail(let offset, let reason, let discarded)?:
            tornTail = TornTail(file: name, offset: offset)
            let after =
                later == nil
                ? ""
                : "; a crash came before this segment's sync had finished, so the segments after it hold only writes never synced either, and go with it"
            findings.append(
                VerifierFinding(
                    severity: .warning, file: name, offset: Int64(offset), code: FindingCode.walTornTail,
                    message:
                        "the WAL ends in a torn write at byte \(offset) (\(reason)); the \(discarded) bytes of data from there on were never synced, so no transaction in them was acknowledged as durable\(after); repair cuts them off, as the store does when it opens",
                    repairable: true))
        }
        expected = nil
    }

    /// Decodes one record's batch and checks its sequence follows the previous one. Returns
    /// false when the batch does not decode.
    private mutating func checkBatch(_ payload: [UInt8], name: String, offset: Int) -> Bool {
        let header: BatchFormat.Header
        do {
            header = try payload.withUnsafeBytes { raw in
                try BatchFormat.decode(raw, baseOffset: offset, maxKeyBytes: Self.maxKeyBytes, maxValueBytes: Self.maxValueBytes) { _, key, _ in
                    if key.isEmpty { throw FormatError(.malformed, "a key is empty", offset: offset) }
                }
            }
        } catch {
            let detail = (error as? FormatError)?.message ?? "\(error)"
            self.report(
                FindingCode.walBadBatch, name, offset,
                "the WAL record at byte \(offset) is intact but its transaction does not decode (\(detail)); it was written by a newer or faulty Strata, and the store will refuse to open: restore the store from a backup"
            )
            return false
        }
        if header.kind == .syncMark {
            // A sync mark repeats the sequence of the record before it and changes nothing.
            if let expected, header.sequence != expected - 1 {
                report(
                    FindingCode.walSequenceGap, name, offset,
                    "the WAL sync mark at byte \(offset) has sequence \(header.sequence), but the record before it has sequence \(expected - 1): transactions are missing or repeated, and the store will refuse to open; restore the store from a backup"
                )
            }
            return true
        }
        let isFirst = firstSequence == nil
        if isFirst { firstSequence = header.sequence }
        if let expected, header.sequence != expected {
            let rule =
                !isFirst
                ? "the record before it has sequence \(expected - 1)"
                : expected == 1
                    ? "nothing is in segment files, so the log must start at sequence 1"
                    : "the manifest's last sequence is \(expected - 1), so the log must continue at \(expected)"
            report(
                FindingCode.walSequenceGap, name, offset,
                "the WAL record at byte \(offset) has sequence \(header.sequence), but \(rule): transactions are missing or repeated, and the store will refuse to open; restore the store from a backup"
            )
        }
        // The largest sequence there is has no successor: what follows it cannot be checked
        // (`+ 1` would trap on a record that carries it: Fixtures/fuzz/wal/crashes).
        expected = header.sequence < .max ? header.sequence + 1 : nil
        return true
    }

    private mutating func report(_ code: String, _ file: String, _ offset: Int?, _ message: String) {
        findings.append(VerifierFinding(severity: .error, file: file, offset: offset.map(Int64.init), code: code, message: message))
    }
}
