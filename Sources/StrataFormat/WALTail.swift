// Rules for telling a torn write at the end of a log (a WAL segment or a manifest) from
// damage to bytes that had been synced (docs/format/wal.md, "Recovery", and
// docs/format/manifest.md, "Damage" and "The close mark"). Recovery and the verifier both read logs through
// `WALSegmentReader` and `ManifestRecordReader`, which apply these rules, so the two can
// never disagree about what a damaged log means.

/// What damage in a log means.
public enum LogDamage: Equatable, Sendable {
    /// Bytes from `offset` on were never synced: a write that a crash interrupted. No
    /// acknowledged record lies at or after `offset`; cutting the log there loses nothing.
    /// `discardedBytes` counts from `offset` to the last non-zero byte.
    case tornTail(offset: Int, reason: String, discardedBytes: Int)
    /// The damaged bytes had been synced, as `evidence` shows: corruption, never cut off.
    case corruption(offset: Int, reason: String, evidence: SyncEvidence)

    public var offset: Int {
        switch self {
        case .tornTail(let offset, _, _), .corruption(let offset, _, _): offset
        }
    }

    public var reason: String {
        switch self {
        case .tornTail(_, let reason, _), .corruption(_, let reason, _): reason
        }
    }
}

/// Why damaged bytes are known to have been synced.
public enum SyncEvidence: Equatable, Sendable {
    /// The WAL segment is not the last, and the record at `offset` of the later segment
    /// `file` proves that segment synced past its header: the writer syncs a segment only
    /// once every earlier one is synced to its end.
    case laterSegment(file: String, offset: Int)
    /// The manifest's first record, its snapshot, is synced before the manifest is installed.
    case firstRecord
    /// An intact record starting at `offset`, after the damage, proves it (for the WAL: its
    /// `syncedThrough` passes the damage; for a manifest: it exists at all).
    case laterRecord(offset: Int)
}

public enum WALTail {
    /// True for a segment whose header is not valid (and not merely from a newer version)
    /// and which holds nothing but zeros after where the header would end: a segment
    /// creation that a crash interrupted.
    public static func isIncompleteSegment(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try withBorrowedBytes(bytes) { raw throws(FormatError) in try WALFormat.SegmentHeader.decode(raw) }
            return false
        } catch {
            if case .unsupportedVersion = error.kind { return false }
            return isAllZero(bytes, from: WALFormat.headerSize)
        }
    }

    /// The offset of the first intact record that starts after `offset` and that `accept`
    /// takes, or nil. Every byte offset where a fragment header fits is tried, not only block
    /// starts: a damaged length field hides where the next record begins, and the evidence
    /// that matters most (the records of the same group commit, or a sync mark) usually sits
    /// in the same block as the damage.
    public static func firstIntactRecord(
        in bytes: [UInt8], after offset: Int,
        where accept: ([UInt8], Int) -> Bool
    ) -> Int? {
        // No record can start past the last non-zero byte: its header holds a non-zero type.
        guard let lastNonZero = lastNonZeroIndex(bytes) else { return nil }
        let blockSize = WALFormat.blockSize
        let headerSize = WALFormat.fragmentHeaderSize
        var position = max(offset + 1, 0)
        while position <= lastNonZero {
            let room = blockSize - position % blockSize
            if room < headerSize {
                position += room
                continue
            }
            guard position + headerSize <= bytes.count else { return nil }
            // Cheap filters before the checksum: a record starts with a FULL or FIRST
            // fragment whose payload fits in its block and in the file.
            let type = bytes[position + 6]
            let length = Int(bytes[position + 4]) | Int(bytes[position + 5]) << 8
            if type == WALFormat.FragmentType.full.rawValue || type == WALFormat.FragmentType.first.rawValue,
                length <= room - headerSize, position + headerSize + length <= bytes.count
            {
                var probe = WALScanner(bytes: bytes, start: position)
                if case .record(let payload, let start, _) = probe.next(), accept(payload, start) {
                    return start
                }
            }
            position += 1
        }
        return nil
    }

    /// The offset of an intact WAL record after damage at `offset` that proves the damaged
    /// bytes had been synced, or nil. A record proves it when its `syncedThrough` is past
    /// `offset`; to be taken as evidence it must also be one the writer could have written
    /// there: `syncedThrough` no further than its own start (the writer never claims bytes it
    /// has not written and synced), and a sequence no lower than `sequenceFloor`, the last
    /// one read before the damage (sequences only grow along a log).
    public static func recordProvingSynced(_ bytes: [UInt8], damageAt offset: Int, sequenceFloor: UInt64?) -> Int? {
        firstIntactRecord(in: bytes, after: offset) { payload, start in
            guard let header = try? withBorrowedBytes(payload, { raw throws(FormatError) in try BatchFormat.decodeHeader(raw) }) else {
                return false
            }
            return header.syncedThrough > UInt64(offset) && header.syncedThrough <= UInt64(start)
                && header.sequence >= (sequenceFloor ?? 0)
        }
    }

    /// The offset of an intact WAL record that proves its segment was synced past the
    /// header, or nil: its `syncedThrough` is past the header, and no further than its own
    /// start (as in `recordProvingSynced`). A segment that holds one had
    /// every earlier segment synced to its end before it (docs/format/wal.md, "Recovery").
    public static func recordProvingSegmentSynced(_ bytes: [UInt8]) -> Int? {
        let header = UInt64(WALFormat.headerSize)
        return firstIntactRecord(in: bytes, after: WALFormat.headerSize - 1) { payload, start in
            guard let batch = try? withBorrowedBytes(payload, { raw throws(FormatError) in try BatchFormat.decodeHeader(raw) }) else {
                return false
            }
            return batch.syncedThrough > header && batch.syncedThrough <= UInt64(start)
        }
    }

    /// Evidence that the WAL segment before the segments `names` (in order) was synced to
    /// its end: a record in one of them that proves its own segment synced past the header
    /// (`recordProvingSegmentSynced`). `read` gives a segment's bytes, nil when it cannot be
    /// read (such a segment proves nothing).
    public static func laterSegmentProof(names: [String], read: (String) -> [UInt8]?) -> SyncEvidence? {
        for name in names {
            guard let bytes = read(name) else { continue }
            if let offset = recordProvingSegmentSynced(bytes) { return .laterSegment(file: name, offset: offset) }
        }
        return nil
    }

    /// Whether the log ends at the end of a segment that is not the last and read cleanly
    /// (`outcome`): a roll whose sync a crash interrupted can lose a segment's last pages
    /// whole, so that it seems to end early, in zeros. So it is when the segment does not
    /// prove its end synced (no sync mark covers it), the next segment's first record
    /// (`next`) does not continue `lastSequence`, and no later segment proves a sync of its
    /// own (`later`). `next` and `later` are called only when the answer depends on them
    /// (docs/format/wal.md, "Recovery").
    public static func endsAtUnfinishedRoll(
        _ outcome: WALSegmentReader.Outcome, lastSequence: UInt64, next: () -> [UInt8]?, later: () -> SyncEvidence?
    ) -> Bool {
        guard outcome.damage == nil, outcome.provenThrough < outcome.end, let next = next() else { return false }
        return !firstRecordContinues(next, after: lastSequence) && later() == nil
    }

    /// Whether the first record of the WAL segment `bytes` continues a log whose last record
    /// has `lastSequence`: a batch with the next sequence, or a sync mark with the same one.
    /// True when no intact record starts the segment (that is damage, judged as such).
    static func firstRecordContinues(_ bytes: [UInt8], after lastSequence: UInt64) -> Bool {
        var scanner = WALScanner(bytes: bytes)
        guard case .record(let payload, _, _) = scanner.next(),
            let header = try? withBorrowedBytes(payload, { raw throws(FormatError) in try BatchFormat.decodeHeader(raw) })
        else { return true }
        return header.kind == .syncMark ? header.sequence == lastSequence : header.sequence == lastSequence &+ 1
    }

    /// The offset of an intact manifest record after damage at `offset`, or nil. Manifest
    /// appends are synced one at a time, and a failed one is never followed by another in
    /// the same file, so any later record proves the damaged bytes had been synced.
    public static func manifestRecord(_ bytes: [UInt8], after offset: Int) -> Int? {
        firstIntactRecord(in: bytes, after: offset) { payload, start in
            (try? withBorrowedBytes(payload, { raw throws(FormatError) in try VersionEdit.decode(raw, baseOffset: start) })) != nil
        }
    }
}
