import StrataFixtureKit
import StrataFormat

/// The clean fixture store with its manifest's records replaced.
func cleanStore(manifest edits: (CleanStore) -> [VersionEdit]) -> [String: [UInt8]] {
    let clean = CleanStore()
    var files = clean.store.files
    files[CleanStore.manifest] = CleanStore.manifest(edits(clean))
    return files
}

/// A manifest whose records are `payloads` framed as they are on disk, whatever they hold.
func manifestBytes(number: UInt64, payloads: [[UInt8]]) -> [UInt8] {
    var bytes = ManifestFormat.Header(fileNumber: number).encoded()
    for payload in payloads {
        payload.withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
    }
    return bytes
}

/// A segment assembled block by block, with `separators` as the index keys and any footer
/// counts: for files the builder would refuse to write.
func assembledSegment(
    blocks: [[SegmentEntry]], separators: [String], entryCount: UInt64? = nil,
    sequences: (smallest: UInt64, largest: UInt64)? = nil
) -> [UInt8] {
    var file: [UInt8] = []
    var index = SegmentBlockBuilder()
    var filter = BloomFilter.Builder()
    for (block, separator) in zip(blocks, separators) {
        var builder = SegmentBlockBuilder()
        for entry in block {
            builder.add(key: SegmentFormat.internalKey(userKey: entry.userKey, sequence: entry.sequence, kind: entry.kind), value: entry.value)
            filter.add(entry.userKey)
        }
        let handle = SegmentFormat.appendBlock(builder.finish(), compressionLevel: nil, to: &file)
        var value: [UInt8] = []
        handle.appendVarints(to: &value)
        index.add(key: SegmentFormat.internalKey(userKey: Array(separator.utf8), sequence: 0, kind: .tombstone), value: value)
    }
    let all = blocks.flatMap { $0 }
    let filterHandle = SegmentFormat.appendBlock(filter.finish().encoded(), compressionLevel: nil, to: &file)
    let indexHandle = SegmentFormat.appendBlock(index.finish(), compressionLevel: nil, to: &file)
    let footer = SegmentFormat.Footer(
        indexHandle: indexHandle, filterHandle: filterHandle, entryCount: entryCount ?? UInt64(all.count),
        smallestSequence: sequences?.smallest ?? all.map(\.sequence).min() ?? 0,
        largestSequence: sequences?.largest ?? all.map(\.sequence).max() ?? 0)
    file += footer.encoded()
    return file
}

/// A WAL segment whose records carry the given payload sizes, for tests that need records
/// crossing 32 KiB blocks. `syncedThrough` gives each record's claim; nil means "up to where
/// the record starts".
func walSegment(number: UInt64, firstSequence: UInt64, valueSizes: [Int], syncedThrough: [UInt64?]) -> (bytes: [UInt8], offsets: [Int]) {
    var bytes = WALFormat.SegmentHeader(segmentNumber: number).encoded()
    var offsets: [Int] = []
    for (index, size) in valueSizes.enumerated() {
        offsets.append(bytes.count)
        var batch = BatchFormat.Encoder(sequence: firstSequence + UInt64(index), syncedThrough: syncedThrough[index] ?? UInt64(bytes.count))
        batch.put(Array("key\(index)".utf8), [UInt8](repeating: UInt8(index + 1), count: size))
        let payload = batch.finish()
        payload.withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
    }
    return (bytes, offsets)
}
