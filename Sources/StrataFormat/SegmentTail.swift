// The end of a segment file: filter block, index block and footer, which a reader loads once
// when it opens the file (layout: docs/format/segment.md). Data blocks are read later, one at
// a time, so the tail is decoded on its own.

/// One index entry: every key in the data block at `handle` is <= `separator`, and every
/// key in the next block is greater.
public struct SegmentIndexEntry: Sendable {
    /// An internal key.
    public var separator: [UInt8]
    public var handle: SegmentFormat.BlockHandle
}

/// The checked footer, filter and index of a segment.
public struct SegmentTail: Sendable {
    public let footer: SegmentFormat.Footer
    public let filter: BloomFilter
    /// The data blocks, in key order.
    public let index: [SegmentIndexEntry]

    /// The offset where the tail starts (the filter block), given the footer: read the file
    /// from here to its end and pass those bytes to `init(decoding:tailOffset:)`.
    public static func start(of footer: SegmentFormat.Footer) -> Int {
        Int(clamping: footer.filterHandle.offset)
    }

    /// Decodes `tail`, the bytes of a segment file from `tailOffset` to the end (the whole
    /// file when `tailOffset` is 0). Error offsets are file offsets.
    public init(decoding tail: UnsafeRawBufferPointer, tailOffset: Int) throws(FormatError) {
        do {
            try self.init(relative: tail, tailOffset: tailOffset)
        } catch {
            throw FormatError(error.kind, error.message, offset: error.offset + tailOffset)
        }
    }

    private init(relative bytes: UnsafeRawBufferPointer, tailOffset: Int) throws(FormatError) {
        footer = try SegmentFormat.Footer.decode(bytes)
        let end = bytes.count - SegmentFormat.footerSize
        let base = UInt64(tailOffset)
        // The filter block, then the index block, end exactly where the footer starts.
        let trailer = UInt64(SegmentFormat.blockTrailerSize)
        guard footer.filterHandle.offset >= base, footer.indexHandle.offset >= base else {
            throw FormatError(.malformed, "segment footer's filter and index handles start before the tail that was read", offset: end + 16)
        }
        let filterHandle = SegmentFormat.BlockHandle(offset: footer.filterHandle.offset - base, size: footer.filterHandle.size)
        let indexHandle = SegmentFormat.BlockHandle(offset: footer.indexHandle.offset - base, size: footer.indexHandle.size)
        let filterEnd = filterHandle.offset.addingReportingOverflow(filterHandle.size &+ trailer)
        let indexEnd = indexHandle.offset.addingReportingOverflow(indexHandle.size &+ trailer)
        guard filterHandle.size < UInt64(end), indexHandle.size < UInt64(end),
            !filterEnd.overflow, !indexEnd.overflow,
            filterEnd.partialValue == indexHandle.offset, indexEnd.partialValue == UInt64(end)
        else {
            throw FormatError(.malformed, "segment footer's filter and index handles do not end at the footer", offset: end + 16)
        }
        let filterBlock = try SegmentFormat.readBlock(bytes, handle: filterHandle, limit: end, what: "filter block")
        guard filterBlock.compression == .none else {
            throw FormatError(.malformed, "filter block is compressed", offset: Int(filterHandle.offset))
        }
        filter = try BloomFilter(decoding: filterBlock.contents, offset: Int(filterHandle.offset))

        let indexOffset = Int(indexHandle.offset)
        let indexBlock = try SegmentFormat.readBlock(bytes, handle: indexHandle, limit: end, what: "index block")
        let indexReader = try SegmentBlockReader(
            indexBlock.contents, blockOffset: indexOffset,
            positionsAreFileOffsets: indexBlock.compression == .none)
        var entries = [SegmentIndexEntry]()
        var cursor = indexReader.makeCursor()
        var previousEnd: UInt64 = 0
        while let entry = try cursor.next() {
            let handle = try withBorrowedBytes(entry.value) { raw throws(FormatError) -> SegmentFormat.BlockHandle in
                var reader = ByteReader(raw, baseOffset: indexOffset)
                let handle = SegmentFormat.BlockHandle(offset: try reader.readVarint("block offset"), size: try reader.readVarint("block size"))
                guard reader.isAtEnd else {
                    throw FormatError(.malformed, "index entry value has \(reader.remaining) trailing bytes", offset: indexOffset)
                }
                return handle
            }
            // Data blocks are contiguous from offset 0 and in key order.
            guard handle.offset == previousEnd else {
                throw FormatError(.malformed, "index entry \(entries.count) points at \(handle.offset), expected \(previousEnd)", offset: indexOffset)
            }
            // Checked: a size near 2^64 would wrap the sum round to where the filter block
            // starts, and the engine reads blocks by these handles without checking them
            // again, so it would trap on one (Fixtures/fuzz/segment-engine/crashes).
            let (blockEnd, wrapped) = handle.size.addingReportingOverflow(UInt64(SegmentFormat.blockTrailerSize))
            let (next, past) = handle.offset.addingReportingOverflow(blockEnd)
            guard !wrapped, !past, next <= footer.filterHandle.offset else {
                throw FormatError(.malformed, "index entry \(entries.count) points past the data blocks", offset: indexOffset)
            }
            previousEnd = next
            entries.append(SegmentIndexEntry(separator: entry.key, handle: handle))
        }
        guard previousEnd == footer.filterHandle.offset else {
            throw FormatError(.malformed, "data blocks end at \(previousEnd), the filter block starts at \(footer.filterHandle.offset)", offset: indexOffset)
        }
        index = entries
    }
}
