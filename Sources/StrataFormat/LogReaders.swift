// Reading a whole WAL segment or manifest and judging any damage in it, once, for both the
// store (recovery) and the verifier (docs/format/wal.md, "Recovery"; docs/format/manifest.md,
// "Damage"). The callers decide what each intact record means; these decide what damage
// means, by the rules in WALTail.swift.

public enum WALSegmentReader {
    public struct Outcome: Equatable, Sendable {
        /// Where the valid data ends: the first damaged byte, or the start of the zero fill.
        public var end: Int
        /// Damage found, judged; nil when the segment is clean.
        public var damage: LogDamage?
        /// Bytes below this need no sync mark: a record's `syncedThrough` proves them
        /// synced, or they end with a sync mark (which holds no data of its own).
        public var provenThrough: Int
        /// The highest `syncedThrough` any record carries, 0 when none does: the bytes below
        /// it were made durable by an fdatasync that succeeded. Unlike `provenThrough`, a sync
        /// mark's own bytes do not count, since the sync that followed it may have failed.
        public var syncedThrough: Int = 0

        public init(end: Int, damage: LogDamage?, provenThrough: Int, syncedThrough: Int = 0) {
            self.end = end
            self.damage = damage
            self.provenThrough = provenThrough
            self.syncedThrough = syncedThrough
        }
    }

    /// Walks `bytes` (a whole segment, header included) from the first record, handing each
    /// intact record (payload, offset) to `record` in order, and judges the first damage:
    /// corruption when an intact record after it proves the bytes had been synced, or, for a
    /// segment that is not the last, when a later segment proves a sync of its own (the
    /// writer syncs a segment past its header only once every earlier one is synced to its
    /// end); a torn tail otherwise.
    ///
    /// `later` is nil for the last segment; otherwise it looks through the segments after
    /// this one for such a proof (`WALTail.recordProvingSegmentSynced`), and is called only
    /// when there is damage. `sequenceFloor` is the sequence of the last record before this
    /// segment, if known. `record` may throw to stop the walk; the error reaches the caller.
    public static func read(
        _ bytes: [UInt8], later: (() -> SyncEvidence?)?, sequenceFloor: UInt64?,
        record: ([UInt8], Int) throws -> Void
    ) rethrows -> Outcome {
        var scanner = WALScanner(bytes: bytes)
        var floor = sequenceFloor
        var provenThrough = WALFormat.headerSize
        var syncedThrough = 0
        while true {
            let offset: Int
            let reason: String
            switch scanner.next() {
            case .record(let payload, let start, let end):
                try record(payload, start)
                if let header = try? withBorrowedBytes(payload, { raw throws(FormatError) in try BatchFormat.decodeHeader(raw) }) {
                    floor = max(floor ?? 0, header.sequence)
                    let proven = header.kind == .syncMark ? end : Int(clamping: header.syncedThrough)
                    provenThrough = max(provenThrough, proven)
                    syncedThrough = max(syncedThrough, Int(clamping: header.syncedThrough))
                }
                continue
            case .end(let end):
                if scanner.isZero(from: end) {
                    return Outcome(end: end, damage: nil, provenThrough: provenThrough, syncedThrough: syncedThrough)
                }
                (offset, reason) = (end, "non-zero bytes follow the end of the log")
            case .invalid(let bad, let why):
                (offset, reason) = (bad, why)
            }
            let damage: LogDamage
            if let proof = WALTail.recordProvingSynced(bytes, damageAt: offset, sequenceFloor: floor) {
                damage = .corruption(offset: offset, reason: reason, evidence: .laterRecord(offset: proof))
            } else if let evidence = later?() {
                damage = .corruption(offset: offset, reason: reason, evidence: evidence)
            } else {
                let discarded = max(0, (lastNonZeroIndex(bytes) ?? offset) + 1 - offset)
                damage = .tornTail(offset: offset, reason: reason, discardedBytes: discarded)
            }
            return Outcome(end: offset, damage: damage, provenThrough: provenThrough, syncedThrough: syncedThrough)
        }
    }
}

public enum ManifestRecordReader {
    public struct Outcome: Equatable, Sendable {
        /// Intact records handed to `record`.
        public var records: Int
        /// Damage found, judged; nil when the manifest is clean.
        public var damage: LogDamage?
    }

    /// Walks a whole manifest (header included) from its first record, handing each intact
    /// record (payload, offset) to `record` in order, and judges the first damage: in the
    /// first record, or followed by any intact record, corruption; otherwise a torn append
    /// that was never acknowledged, which nothing acted on. `record` may throw to stop.
    public static func read(_ bytes: [UInt8], record: ([UInt8], Int) throws -> Void) rethrows -> Outcome {
        var scanner = WALScanner(bytes: bytes, start: ManifestFormat.headerSize)
        var records = 0
        while true {
            let offset: Int
            let reason: String
            switch scanner.next() {
            case .record(let payload, let start, _):
                try record(payload, start)
                records += 1
                continue
            case .end(let end):
                if scanner.isZero(from: end) { return Outcome(records: records, damage: nil) }
                (offset, reason) = (end, "non-zero bytes follow the last record")
            case .invalid(let bad, let why):
                (offset, reason) = (bad, why)
            }
            let damage: LogDamage
            if records == 0 {
                damage = .corruption(offset: offset, reason: reason, evidence: .firstRecord)
            } else if let later = WALTail.manifestRecord(bytes, after: offset) {
                damage = .corruption(offset: offset, reason: reason, evidence: .laterRecord(offset: later))
            } else {
                damage = .tornTail(offset: offset, reason: reason, discardedBytes: bytes.count - offset)
            }
            return Outcome(records: records, damage: damage)
        }
    }
}
