// The segment (SSTable) file format: constants, internal keys, block handles, the block
// trailer and the footer. The exact layout, validity rules and a worked example are in
// docs/format/segment.md; keep the two in step.
//
//   segment  := dataBlock* filterBlock indexBlock footer
//   block    := contents trailer
//   trailer  := compression u8 | crc32 u32 (over contents, then the compression byte)
//   footer   := magic[8] "STRATASG" | major u16 | minor u16 | flags u32
//               | indexOffset u64 | indexSize u64 | filterOffset u64 | filterSize u64
//               | entryCount u64 | smallestSequence u64 | largestSequence u64
//               | crc32 u32 (over the 72 bytes before it)                       (76 bytes)
//   internal key := userKey | (sequence << 8 | kind) u64
import CZlib

public enum SegmentFormat {
    public static let magic: [UInt8] = Array("STRATASG".utf8)
    public static let majorVersion: UInt16 = 1
    public static let minorVersion: UInt16 = 0
    public static let footerSize = 76
    /// Compression byte plus CRC32 after every block.
    public static let blockTrailerSize = 5
    /// Entries between two full (not prefix-compressed) keys in a block: the writer's choice
    /// (docs/format/segment.md). A point read walks at most this many entries after its
    /// search of the restarts; 8 made random reads about a tenth faster than 16 for files
    /// about 1% larger (docs/benchmarks.md, 2026-11-26).
    public static let restartInterval = 8
    /// A restart also comes where an entry would take the entries since the last restart past
    /// this many bytes: with 1,000-byte values every entry is a restart, so a point read's
    /// search of the restarts (whose first lines it requests together) lands on its entry
    /// instead of walking a chain of entries a kilobyte apart (docs/benchmarks.md, 2026-11-26,
    /// late). Entries of 100-byte values still restart every 8th.
    public static let restartBytes = 1024
    /// A data block is cut once its contents reach this many bytes.
    public static let targetBlockSize = 4096
    public static let bloomBitsPerKey = 10
    /// Sequences share a 64-bit word with the 8-bit kind.
    public static let maxSequence: UInt64 = (1 << 56) - 1
    public static let internalKeyTrailerSize = 8
    /// The largest decompressed block a reader accepts, so a damaged length cannot ask for
    /// gigabytes.
    public static let maxBlockContentsSize = 64 << 20

    /// How a block's contents are stored (the first trailer byte).
    public enum Compression: UInt8, Sendable {
        case none = 0
        /// `varint uncompressedLength` followed by a zlib stream (`compress2`).
        case zlib = 1
    }

    /// The low byte of an internal key's trailer.
    public enum EntryKind: UInt8, Sendable {
        case tombstone = 0
        case value = 1
    }

    // MARK: Internal keys

    /// The 8-byte trailer of an internal key.
    @inlinable
    public static func trailer(sequence: UInt64, kind: EntryKind) -> UInt64 {
        sequence << 8 | UInt64(kind.rawValue)
    }

    /// `userKey` followed by the little-endian trailer `sequence << 8 | kind`.
    public static func internalKey(userKey: [UInt8], sequence: UInt64, kind: EntryKind) -> [UInt8] {
        var key = userKey
        key.reserveCapacity(userKey.count + internalKeyTrailerSize)
        key.appendLittleEndian(trailer(sequence: sequence, kind: kind))
        return key
    }

    /// The smallest internal key of `userKey` whose sequence is at most `sequence`: the trailer
    /// `sequence << 8 | 0xFF` sorts before every real entry of that sequence or lower.
    public static func seekKey(userKey: [UInt8], sequence: UInt64) -> [UInt8] {
        var key = userKey
        key.appendLittleEndian(min(sequence, maxSequence) << 8 | 0xFF)
        return key
    }

    /// Orders internal keys: user key ascending (bytewise), then trailer descending, so the
    /// newest version of a key comes first. Both keys must be at least 8 bytes.
    public static func compareInternalKeys(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in
                let aUser = UnsafeRawBufferPointer(rebasing: a.dropLast(internalKeyTrailerSize))
                let bUser = UnsafeRawBufferPointer(rebasing: b.dropLast(internalKeyTrailerSize))
                let aTrailer = a.loadUnaligned(fromByteOffset: a.count - internalKeyTrailerSize, as: UInt64.self).littleEndian
                let bTrailer = b.loadUnaligned(fromByteOffset: b.count - internalKeyTrailerSize, as: UInt64.self).littleEndian
                return compareInternal(aUser, aTrailer, bUser, bTrailer)
            }
        }
    }

    static func loadTrailer(_ key: [UInt8]) -> UInt64 {
        var value: UInt64 = 0
        let base = key.count - internalKeyTrailerSize
        for i in 0..<internalKeyTrailerSize {
            value |= UInt64(key[base + i]) << UInt64(8 * i)
        }
        return value
    }

    /// Splits an entry's internal key. `offset` is only used in errors.
    public static func parseInternalKey(_ key: [UInt8], offset: Int) throws(FormatError) -> (userKey: [UInt8], sequence: UInt64, kind: EntryKind) {
        guard key.count >= internalKeyTrailerSize else {
            throw FormatError(.malformed, "internal key of \(key.count) bytes is shorter than its trailer", offset: offset)
        }
        let trailer = loadTrailer(key)
        guard let kind = EntryKind(rawValue: UInt8(truncatingIfNeeded: trailer)) else {
            throw FormatError(.malformed, "entry kind \(trailer & 0xFF) is unknown", offset: offset)
        }
        return (Array(key[0..<(key.count - internalKeyTrailerSize)]), trailer >> 8, kind)
    }

    // MARK: Block handles

    /// Where a block's contents are: `size` excludes the 5-byte trailer that follows them.
    public struct BlockHandle: Sendable, Equatable, Hashable {
        public var offset: UInt64
        public var size: UInt64

        public init(offset: UInt64, size: UInt64) {
            self.offset = offset
            self.size = size
        }

        /// The form used in index entries: two varints.
        public func appendVarints(to out: inout [UInt8]) {
            out.appendVarint(offset)
            out.appendVarint(size)
        }
    }

    // MARK: Blocks

    /// Appends `contents` and its trailer to `file`, zlib-compressed at `compressionLevel` when
    /// that saves at least 12.5% (otherwise the CPU spent inflating on every read is not
    /// worth it). Returns the handle of the stored bytes. `file` holds the segment from
    /// offset `base` on (the bytes before it were written out already).
    public static func appendBlock(_ contents: [UInt8], compressionLevel: Int32?, to file: inout [UInt8], at base: Int = 0) -> BlockHandle {
        var stored = contents
        var type = Compression.none
        if let level = compressionLevel, let packed = deflate(contents, level: level),
            packed.count <= contents.count - contents.count / 8
        {
            stored = packed
            type = .zlib
        }
        let handle = BlockHandle(offset: UInt64(base + file.count), size: UInt64(stored.count))
        let start = file.count
        file.append(contentsOf: stored)
        file.append(type.rawValue)
        let crc = file.withUnsafeBytes { blockChecksum(contentsAndType: UnsafeRawBufferPointer(rebasing: $0[start...])) }
        file.appendLittleEndian(crc)
        return handle
    }

    /// A block's checksum (docs/format/segment.md): the CRC32 of its stored bytes and the
    /// type byte after them, which sit side by side in a file and in `appendBlock`'s buffer,
    /// so one pass covers both.
    @inline(__always)
    static func blockChecksum(contentsAndType: UnsafeRawBufferPointer) -> UInt32 {
        Checksum.crc32(contentsAndType)
    }

    /// `varint rawLength | zlib stream`, or nil if zlib fails.
    static func deflate(_ raw: [UInt8], level: Int32) -> [UInt8]? {
        var header = [UInt8]()
        header.appendVarint(UInt64(raw.count))
        var bound = compressBound(uLong(raw.count))
        var status = Z_OK
        // Written in place, nothing zero-filled first: appending `bound` zeros element by
        // element cost a debug build about a millisecond per block.
        let out = [UInt8](unsafeUninitializedCapacity: header.count + Int(bound)) { buffer, count in
            for (index, byte) in header.enumerated() { buffer[index] = byte }
            status = raw.withUnsafeBufferPointer { source in
                compress2(buffer.baseAddress! + header.count, &bound, source.baseAddress, uLong(source.count), level)
            }
            count = status == Z_OK ? header.count + Int(bound) : 0
        }
        guard status == Z_OK else { return nil }
        return out
    }

    static func inflate(_ stored: UnsafeRawBufferPointer, blockOffset: Int) throws(FormatError) -> [UInt8] {
        var reader = ByteReader(stored, baseOffset: blockOffset)
        let rawLength = try reader.readLength("uncompressed block length", limit: maxBlockContentsSize)
        var out = [UInt8](repeating: 0, count: rawLength)
        var produced = uLongf(rawLength)
        let consumed = reader.position
        let status = out.withUnsafeMutableBufferPointer { dest in
            uncompress(dest.baseAddress, &produced, stored.baseAddress!.assumingMemoryBound(to: Bytef.self) + consumed, uLong(stored.count - consumed))
        }
        guard status == Z_OK, Int(produced) == rawLength else {
            throw FormatError(.malformed, "compressed block does not inflate to its \(rawLength) bytes (zlib status \(status))", offset: blockOffset)
        }
        return out
    }

    /// Reads, checks and (if needed) decompresses the block at `handle`. Fails with
    /// `.checksumMismatch` at the block's offset if the trailer's CRC does not match, and
    /// with `.malformed` if the block (with trailer) does not lie inside `file[0..<limit]`.
    public static func readBlock(_ file: UnsafeRawBufferPointer, handle: BlockHandle, limit: Int? = nil, what: String = "block") throws(FormatError) -> (
        contents: [UInt8], compression: Compression
    ) {
        let end = limit ?? file.count
        guard handle.offset <= UInt64(end), handle.size <= UInt64(end) - handle.offset,
            UInt64(blockTrailerSize) <= UInt64(end) - handle.offset - handle.size
        else {
            throw FormatError(
                .malformed, "\(what) at \(handle.offset) of \(handle.size) bytes runs past the end of the block area (\(end))",
                offset: Int(clamping: handle.offset))
        }
        let offset = Int(handle.offset)
        let size = Int(handle.size)
        let stored = UnsafeRawBufferPointer(rebasing: file[offset..<(offset + size)])
        var reader = ByteReader(file, position: offset + size)
        let type = try reader.readUInt8("compression type")
        let crc = try reader.readUInt32("block checksum")
        guard crc == blockChecksum(contentsAndType: UnsafeRawBufferPointer(rebasing: file[offset..<(offset + size + 1)])) else {
            throw FormatError(.checksumMismatch, "\(what) checksum mismatch", offset: offset)
        }
        switch Compression(rawValue: type) {
        case .some(.none): return (Array(stored), .none)
        case .some(.zlib): return (try inflate(stored, blockOffset: offset), .zlib)
        case nil: throw FormatError(.malformed, "\(what) compression type \(type) is unknown", offset: offset + size)
        }
    }

    /// Checks the CRC of a stored block in place (`stored` is the contents followed by the
    /// 5-byte trailer) and returns how the contents are stored, copying nothing. Offsets in
    /// errors are relative to `stored`.
    public static func verifyBlock(_ stored: UnsafeRawBufferPointer, what: String = "block") throws(FormatError) -> Compression {
        guard stored.count >= blockTrailerSize else {
            throw FormatError(.truncated, "\(what) is shorter than its trailer", offset: 0)
        }
        let size = stored.count - blockTrailerSize
        let type = stored[size]
        let crc = stored.loadUnaligned(fromByteOffset: size + 1, as: UInt32.self).littleEndian
        guard crc == blockChecksum(contentsAndType: UnsafeRawBufferPointer(rebasing: stored[0...size])) else {
            throw FormatError(.checksumMismatch, "\(what) checksum mismatch", offset: 0)
        }
        guard let compression = Compression(rawValue: type) else {
            throw FormatError(.malformed, "\(what) compression type \(type) is unknown", offset: size)
        }
        return compression
    }

    // MARK: Footer

    /// The last 76 bytes of a segment: where the index and filter are, and what the segment
    /// holds.
    public struct Footer: Sendable, Equatable {
        public var majorVersion: UInt16
        public var minorVersion: UInt16
        public var indexHandle: BlockHandle
        public var filterHandle: BlockHandle
        public var entryCount: UInt64
        /// 0 (with `largestSequence` 0) for a segment without entries.
        public var smallestSequence: UInt64
        public var largestSequence: UInt64

        public init(
            indexHandle: BlockHandle, filterHandle: BlockHandle, entryCount: UInt64,
            smallestSequence: UInt64, largestSequence: UInt64,
            majorVersion: UInt16 = SegmentFormat.majorVersion, minorVersion: UInt16 = SegmentFormat.minorVersion
        ) {
            self.majorVersion = majorVersion
            self.minorVersion = minorVersion
            self.indexHandle = indexHandle
            self.filterHandle = filterHandle
            self.entryCount = entryCount
            self.smallestSequence = smallestSequence
            self.largestSequence = largestSequence
        }

        public func encoded() -> [UInt8] {
            var out = SegmentFormat.magic
            out.reserveCapacity(SegmentFormat.footerSize)
            out.appendLittleEndian(majorVersion)
            out.appendLittleEndian(minorVersion)
            out.appendLittleEndian(UInt32(0))  // flags
            out.appendLittleEndian(indexHandle.offset)
            out.appendLittleEndian(indexHandle.size)
            out.appendLittleEndian(filterHandle.offset)
            out.appendLittleEndian(filterHandle.size)
            out.appendLittleEndian(entryCount)
            out.appendLittleEndian(smallestSequence)
            out.appendLittleEndian(largestSequence)
            out.appendLittleEndian(Checksum.crc32(out))
            assert(out.count == SegmentFormat.footerSize)
            return out
        }

        /// Decodes the footer at the end of `file`. Checks, in order: length, magic,
        /// checksum, version, so that a file of another kind is reported as such rather than
        /// as damaged. Offsets in errors are relative to the start of `file`.
        public static func decode(_ file: UnsafeRawBufferPointer) throws(FormatError) -> Footer {
            guard file.count >= SegmentFormat.footerSize else {
                throw FormatError(.truncated, "segment is \(file.count) bytes, shorter than its \(SegmentFormat.footerSize)-byte footer", offset: 0)
            }
            let start = file.count - SegmentFormat.footerSize
            guard file[start..<(start + 8)].elementsEqual(SegmentFormat.magic) else {
                throw FormatError(.badMagic, "segment footer does not start with the magic \"STRATASG\"", offset: start)
            }
            var reader = ByteReader(file, position: start + 8)
            let major = try reader.readUInt16()
            let minor = try reader.readUInt16()
            _ = try reader.readUInt32()
            let footer = Footer(
                indexHandle: BlockHandle(offset: try reader.readUInt64(), size: try reader.readUInt64()),
                filterHandle: BlockHandle(offset: try reader.readUInt64(), size: try reader.readUInt64()),
                entryCount: try reader.readUInt64(),
                smallestSequence: try reader.readUInt64(),
                largestSequence: try reader.readUInt64(),
                majorVersion: major, minorVersion: minor)
            let stored = try reader.readUInt32()
            let covered = UnsafeRawBufferPointer(rebasing: file[start..<(start + SegmentFormat.footerSize - 4)])
            guard stored == Checksum.crc32(covered) else {
                throw FormatError(.checksumMismatch, "segment footer checksum mismatch", offset: start + SegmentFormat.footerSize - 4)
            }
            guard major <= SegmentFormat.majorVersion else {
                throw FormatError(
                    .unsupportedVersion(major: major, minor: minor),
                    "segment format version \(major).\(minor) is newer than the \(SegmentFormat.majorVersion).\(SegmentFormat.minorVersion) this build reads",
                    offset: start + 8)
            }
            guard footer.smallestSequence <= footer.largestSequence, footer.largestSequence <= SegmentFormat.maxSequence else {
                throw FormatError(
                    .malformed, "segment footer sequence range \(footer.smallestSequence)...\(footer.largestSequence) is invalid", offset: start + 56)
            }
            return footer
        }
    }
}
