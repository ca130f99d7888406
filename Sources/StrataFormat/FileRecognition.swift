// Whether a file named like one of the store's own holds the store's own bytes
// (docs/format/store.md, "Files the store does not recognise"). Recovery asks before it
// removes a leftover, the verifier before it calls one removable: a name alone never proves
// that a file is the store's to delete.

public enum FileRecognition {
    /// What a file's bytes say about who wrote it.
    public enum Verdict: Equatable, Sendable {
        /// The store's own format, or an empty or all-zero file: a creation that a crash
        /// interrupted before any byte reached the disk.
        case own
        /// Not recognisably the store's; `reason` says why, for reports.
        case foreign(reason: String)

        public var isOwn: Bool { self == .own }
    }

    /// A file named `wal-N.log`: its header carries the WAL magic and the number `number`, or
    /// (a damaged header) intact WAL records follow it. A header that never reached the disk
    /// (zeros or a prefix of the header, then zeros) is the store's interrupted creation.
    public static func wal(_ bytes: [UInt8], number: UInt64) -> Verdict {
        if WALTail.isIncompleteSegment(bytes) { return .own }
        let verdict =
            bytes.count >= WALFormat.headerSize && bytes[0..<8].elementsEqual(WALFormat.magic)
            ? numbered(bytes, number: number, what: "WAL segment")
            : .foreign(reason: "it does not start with the WAL segment magic \"STRATAWL\"")
        guard case .foreign(let reason) = verdict else { return verdict }
        // A damaged header in front of intact records is the store's segment, damaged:
        // recovery must judge it (and refuse it), not set it aside.
        if WALTail.firstIntactRecord(in: bytes, after: WALFormat.headerSize - 1, where: { _, _ in true }) != nil { return .own }
        return .foreign(reason: reason + ", and it holds no intact WAL record")
    }

    /// A file named `manifest-N.log` or `manifest-N.tmp`: its header carries the manifest
    /// magic and the number `number`, and when both its first record and `storeIdentifier`
    /// name a store, they name the same one.
    public static func manifest(_ bytes: [UInt8], number: UInt64, storeIdentifier: [UInt8]?) -> Verdict {
        if isAllZero(bytes, from: 0) { return .own }
        guard bytes.count >= ManifestFormat.headerSize, bytes[0..<8].elementsEqual(ManifestFormat.magic) else {
            return .foreign(reason: "it does not start with the manifest magic \"STRATAMF\"")
        }
        let verdict = numbered(bytes, number: number, what: "manifest")
        guard verdict.isOwn, let ours = storeIdentifier, !ours.isEmpty else { return verdict }
        var scanner = WALScanner(bytes: bytes, start: ManifestFormat.headerSize)
        guard case .record(let payload, let offset, _) = scanner.next(),
            let edit = try? withBorrowedBytes(payload, { raw throws(FormatError) in try VersionEdit.decode(raw, baseOffset: offset) }),
            let theirs = edit.storeIdentifier
        else { return .own }
        return theirs == ours ? .own : .foreign(reason: "it is a manifest of another store (its store identifier differs)")
    }

    /// A file named `seg-N.sst`: it ends with a segment footer's magic, or (a flush or a
    /// compaction a crash cut short, before its footer was written) it begins with a data
    /// block whose checksum holds.
    public static func segment(_ bytes: [UInt8]) -> Verdict {
        if isAllZero(bytes, from: 0) { return .own }
        let footerStart = bytes.count - SegmentFormat.footerSize
        if footerStart >= 0, bytes[footerStart..<(footerStart + 8)].elementsEqual(SegmentFormat.magic) { return .own }
        if startsWithBlock(bytes) { return .own }
        return .foreign(reason: "it has no segment footer (magic \"STRATASG\") and does not begin with a segment block")
    }

    /// The most bytes searched for the end of a segment's first block: blocks are a few KiB
    /// unless a value is large, and a file cut short that early holds little anyway.
    static let blockSearchLimit = 1 << 20

    /// True when, for some `n`, the bytes `0..<n` end with a compression byte (0 or 1) and are
    /// followed by their CRC32: a block and its trailer (docs/format/segment.md). One running
    /// checksum serves every candidate end.
    static func startsWithBlock(_ bytes: [UInt8]) -> Bool {
        let limit = min(bytes.count - 4, blockSearchLimit)
        guard limit >= 5 else { return false }
        return bytes.withUnsafeBytes { raw -> Bool in
            var crc: UInt32 = 0
            for end in 1...limit {
                crc = Checksum.crc32(UnsafeRawBufferPointer(rebasing: raw[(end - 1)..<end]), seed: crc)
                // A block holds at least its restart count (4 bytes) and the compression byte.
                guard end >= 5, raw[end - 1] <= 1 else { continue }
                if raw.loadUnaligned(fromByteOffset: end, as: UInt32.self).littleEndian == crc { return true }
            }
            return false
        }
    }

    /// A numbered header (WAL segment or manifest) whose magic matched: the store's when its
    /// number is the name's. A damaged checksum still counts as the store's format; a newer
    /// version too.
    private static func numbered(_ bytes: [UInt8], number: UInt64, what: String) -> Verdict {
        let stored = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian }
        guard stored == number else {
            return .foreign(reason: "its \(what) header says it is number \(stored), but its name says \(number)")
        }
        return .own
    }
}
