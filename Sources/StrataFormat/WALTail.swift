// Rules for telling a torn write at the end of the WAL from damage to bytes that had been
// synced (docs/format/wal.md, "Recovery"). Recovery and the verifier both apply them, so they
// live here, beside the format they read.

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

    /// Looks past damage at `offset` for a valid record whose synced-through field exceeds
    /// `offset`; such a record proves the damaged bytes were durable before it was written,
    /// so the damage is corruption, not a torn write. Returns that record's offset.
    public static func laterRecordClaimingSynced(_ bytes: [UInt8], beyond offset: Int) -> Int? {
        WALScanner.firstRecord(in: bytes, afterBlockOf: offset) { payload, _ in
            let header = try? payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
            return header.map { $0.syncedThrough > UInt64(offset) } ?? false
        }
    }
}
