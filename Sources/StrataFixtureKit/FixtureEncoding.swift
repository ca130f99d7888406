import StrataFormat

/// Encodes whole fixture files with the format module's own encoders, so a fixture is
/// exactly what the engine would write (WAL files are left unpadded: a WAL that simply ends
/// after its last record is valid, and keeps the fixtures small).
public enum FixtureEncoding {
    /// A WAL segment and the offset of each record. Every record says the segment was synced
    /// up to where it starts, as after a `.synced` commit each.
    public static func walSegment(number: UInt64, _ transactions: [FixtureTransaction]) -> (bytes: [UInt8], recordOffsets: [Int]) {
        var bytes = WALFormat.SegmentHeader(segmentNumber: number).encoded()
        var offsets: [Int] = []
        for transaction in transactions {
            var batch = BatchFormat.Encoder(sequence: transaction.sequence, syncedThrough: UInt64(bytes.count))
            for operation in transaction.operations {
                if let value = operation.value {
                    batch.put(Array(operation.key.utf8), Array(value.utf8))
                } else {
                    batch.delete(Array(operation.key.utf8))
                }
            }
            offsets.append(bytes.count)
            batch.finish().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
        }
        return (bytes, offsets)
    }

    /// A manifest and the offset of each record.
    public static func manifest(number: UInt64, _ edits: [VersionEdit]) -> (bytes: [UInt8], recordOffsets: [Int]) {
        var bytes = ManifestFormat.Header(fileNumber: number).encoded()
        var offsets: [Int] = []
        for edit in edits {
            offsets.append(bytes.count)
            edit.encoded().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
        }
        return (bytes, offsets)
    }

    /// A segment file holding `entries` (in segment order), uncompressed so the bytes do not
    /// depend on the zlib build. A small `blockSize` spreads the entries over several blocks.
    public static func segment(_ entries: [SegmentEntry], blockSize: Int = SegmentFormat.targetBlockSize) -> [UInt8] {
        var builder = SegmentBuilder(compressionLevel: nil, blockSize: blockSize)
        for entry in entries {
            do {
                try builder.add(userKey: entry.userKey, sequence: entry.sequence, kind: entry.kind, value: entry.value)
            } catch {
                preconditionFailure("fixture entries must be in segment order: \(error)")
            }
        }
        return builder.finish()
    }

    /// What the manifest records about a segment file built from `entries`.
    public static func meta(level: Int, fileNumber: UInt64, bytes: [UInt8], entries: [SegmentEntry]) -> SegmentMeta {
        let sequences = entries.map(\.sequence)
        return SegmentMeta(
            level: level, fileNumber: fileNumber, fileSize: UInt64(bytes.count), entryCount: UInt64(entries.count),
            smallestSequence: sequences.min() ?? 0, largestSequence: sequences.max() ?? 0,
            smallestKey: entries.first?.userKey ?? [], largestKey: entries.last?.userKey ?? [])
    }

    /// A put entry for a segment.
    public static func put(_ key: String, _ value: String, _ sequence: UInt64) -> SegmentEntry {
        SegmentEntry(userKey: Array(key.utf8), sequence: sequence, kind: .value, value: Array(value.utf8))
    }

    /// A tombstone entry for a segment.
    public static func delete(_ key: String, _ sequence: UInt64) -> SegmentEntry {
        SegmentEntry(userKey: Array(key.utf8), sequence: sequence, kind: .tombstone)
    }
}
