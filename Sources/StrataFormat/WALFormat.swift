// The write-ahead log's file format. The exact layout, validity rules and a worked example
// are in docs/format/wal.md; keep the two in step.
//
//   segment  := header block*
//   header   := magic[8] "STRATAWL" | major u16 | minor u16 | flags u32 | segment u64
//               | reserved u32 | crc32 u32 (over the 28 bytes before it)        (32 bytes)
//   block    := fragment* trailer?          (blocks are 32 KiB, counted from file offset 0)
//   fragment := crc32 u32 | length u16 | type u8 | payload[length]
//               crc32 covers length, type and payload
//   trailer  := fewer than 7 zero bytes that end a block
//
// A logical record (one transaction's batch) is one FULL fragment, or FIRST MIDDLE* LAST.

public enum WALFormat {
    public static let magic: [UInt8] = Array("STRATAWL".utf8)
    /// 2.0 added sync marks (a record kind 1.0 readers would refuse as corruption). This
    /// build reads 1.0 segments too, and never appends to one.
    public static let majorVersion: UInt16 = 2
    public static let minorVersion: UInt16 = 0
    public static let headerSize = 32
    public static let blockSize = 32 * 1024
    public static let fragmentHeaderSize = 7

    public enum FragmentType: UInt8, Sendable {
        case full = 1
        case first = 2
        case middle = 3
        case last = 4
    }

    // MARK: File names

    /// `wal-0000000003.log`: ten digits, zero-padded.
    public static func fileName(_ number: UInt64) -> String { ManifestFormat.numbered("wal-", number, ".log") }

    /// The segment number in a file name, or nil when the name is not a WAL segment's.
    public static func number(fromName name: String) -> UInt64? { ManifestFormat.parse(name, "wal-", ".log") }

    // MARK: Header

    public struct SegmentHeader: Sendable, Equatable {
        public var segmentNumber: UInt64
        public var majorVersion: UInt16
        public var minorVersion: UInt16

        public init(segmentNumber: UInt64, majorVersion: UInt16 = WALFormat.majorVersion, minorVersion: UInt16 = WALFormat.minorVersion) {
            self.segmentNumber = segmentNumber
            self.majorVersion = majorVersion
            self.minorVersion = minorVersion
        }

        static let kind = NumberedFileHeader.Kind(
            magic: WALFormat.magic, file: "WAL segment", format: "WAL",
            majorVersion: WALFormat.majorVersion, minorVersion: WALFormat.minorVersion)

        public func encoded() -> [UInt8] {
            NumberedFileHeader.encode(Self.kind, number: segmentNumber, major: majorVersion, minor: minorVersion)
        }

        /// Decodes and validates a header. Checks, in order: length, magic, checksum, version,
        /// so that a file of another kind is reported as such rather than as damaged.
        public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> SegmentHeader {
            let header = try NumberedFileHeader.decode(bytes, kind)
            return SegmentHeader(segmentNumber: header.number, majorVersion: header.major, minorVersion: header.minor)
        }
    }

    // MARK: Writing

    /// Appends `payload` as one logical record to `buffer`, which will be written at file
    /// offset `fileOffset + buffer.count`. Splits the payload into fragments at block
    /// boundaries and pads a block whose tail is too short for a fragment header.
    /// Returns the file offset just past the record.
    @discardableResult
    public static func appendRecord(_ payload: UnsafeRawBufferPointer, to buffer: inout [UInt8], fileOffset: Int) -> Int {
        var offset = fileOffset + buffer.count
        var consumed = 0
        var first = true
        repeat {
            var room = blockSize - offset % blockSize
            if room < fragmentHeaderSize {
                buffer.append(contentsOf: repeatElement(0, count: room))
                offset += room
                room = blockSize
            }
            let length = min(payload.count - consumed, room - fragmentHeaderSize)
            let isLast = consumed + length == payload.count
            let type: FragmentType = first ? (isLast ? .full : .first) : (isLast ? .last : .middle)
            let piece = UnsafeRawBufferPointer(rebasing: payload[consumed..<(consumed + length)])
            appendFragment(type: type, piece, to: &buffer)
            offset += fragmentHeaderSize + length
            consumed += length
            first = false
        } while consumed < payload.count
        return offset
    }

    /// A fragment's checksum (docs/format/wal.md): the CRC32 of its length, type and
    /// payload, which lie side by side in a file and in `appendFragment`'s buffer, so
    /// `covered` starts at the length and one pass takes all of it.
    @inline(__always)
    static func fragmentChecksum(covering covered: UnsafeRawBufferPointer) -> UInt32 {
        Checksum.crc32(covered)
    }

    static func appendFragment(type: FragmentType, _ piece: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        let start = buffer.count
        buffer.appendLittleEndian(UInt32(0))  // the checksum, stored below
        buffer.appendLittleEndian(UInt16(piece.count))
        buffer.append(type.rawValue)
        buffer.append(contentsOf: piece)
        let crc = buffer.withUnsafeBytes { fragmentChecksum(covering: UnsafeRawBufferPointer(rebasing: $0[(start + 4)...])) }
        buffer.storeLittleEndian(crc, at: start)
    }
}
