// The manifest's file format: which segment files make up the store, at which level, and
// which WAL segments are still needed. The exact layout, validity rules and a worked example
// are in docs/format/manifest.md; keep the two in step.
//
//   manifest := header record*         (records framed exactly as in the WAL: 32 KiB blocks,
//                                       FULL/FIRST/MIDDLE/LAST fragments, CRC32)
//   header   := magic[8] "STRATAMF" | major u16 | minor u16 | flags u32 | file u64
//               | reserved u32 | crc32 u32 (over the 28 bytes before it)        (32 bytes)
//   record   := one VersionEdit: field*
//   field    := tag varint | body
//     1 logNumber      varint   WAL segments numbered below this are covered by segments
//     2 lastSequence   varint   the newest sequence held in segment files
//     3 nextFileNumber varint   the next number for a segment or manifest file
//     4 addSegment     level varint | file varint | size varint | entries varint
//                      | smallestSequence varint | largestSequence varint
//                      | smallestKey (varint length | bytes) | largestKey (varint length | bytes)
//     5 removeSegment  level varint | file varint
//   from minor version 1, every tag from 6 on is followed by its body's length (a varint), so a
//   reader skips a sized field it does not know:
//     6 storeIdentifier    length 16 | 16 bytes   the store's random identity
//     7 droppedDeletions   length | varint        the newest sequence of a deletion marker a
//                                                 compaction has dropped
//
// The first record of every manifest is a full snapshot (every live segment as an
// addSegment), so a manifest never depends on an older one.

public enum ManifestFormat {
    public static let magic: [UInt8] = Array("STRATAMF".utf8)
    public static let majorVersion: UInt16 = 1
    public static let minorVersion: UInt16 = 1
    public static let headerSize = 32
    /// Levels are 0 (overlapping files, newest first) to `maxLevels - 1`.
    public static let maxLevels = 7

    enum Tag: UInt64 {
        case logNumber = 1
        case lastSequence = 2
        case nextFileNumber = 3
        case addSegment = 4
        case removeSegment = 5
        case storeIdentifier = 6
        case droppedDeletions = 7

        /// Tags from here on carry their body's length, so old readers can skip them.
        static let firstSized: UInt64 = 6
    }

    /// The length of a store identifier.
    public static let storeIdentifierSize = 16

    // MARK: File names

    /// `manifest-0000000007.log`
    public static func fileName(_ number: UInt64) -> String { numbered("manifest-", number, ".log") }
    /// The name a manifest is written under before it is renamed into place.
    public static func temporaryName(_ number: UInt64) -> String { numbered("manifest-", number, ".tmp") }
    /// `seg-0000000012.sst`
    public static func segmentFileName(_ number: UInt64) -> String { numbered("seg-", number, ".sst") }

    public static func number(fromManifestName name: String) -> UInt64? { parse(name, "manifest-", ".log") }
    public static func number(fromTemporaryName name: String) -> UInt64? { parse(name, "manifest-", ".tmp") }
    public static func number(fromSegmentName name: String) -> UInt64? { parse(name, "seg-", ".sst") }

    static func numbered(_ prefix: String, _ number: UInt64, _ suffix: String) -> String {
        let digits = String(number)
        return prefix + String(repeating: "0", count: max(0, 10 - digits.count)) + digits + suffix
    }

    static func parse(_ name: String, _ prefix: String, _ suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(digits)
    }

    // MARK: Header

    public struct Header: Sendable, Equatable {
        public var fileNumber: UInt64
        public var majorVersion: UInt16
        public var minorVersion: UInt16

        public init(fileNumber: UInt64, majorVersion: UInt16 = ManifestFormat.majorVersion, minorVersion: UInt16 = ManifestFormat.minorVersion) {
            self.fileNumber = fileNumber
            self.majorVersion = majorVersion
            self.minorVersion = minorVersion
        }

        static let kind = NumberedFileHeader.Kind(
            magic: ManifestFormat.magic, file: "manifest", format: "manifest",
            majorVersion: ManifestFormat.majorVersion, minorVersion: ManifestFormat.minorVersion)

        public func encoded() -> [UInt8] {
            NumberedFileHeader.encode(Self.kind, number: fileNumber, major: majorVersion, minor: minorVersion)
        }

        /// Checks, in order: length, magic, checksum, version.
        public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> Header {
            let header = try NumberedFileHeader.decode(bytes, kind)
            return Header(fileNumber: header.number, majorVersion: header.major, minorVersion: header.minor)
        }
    }
}

/// What the manifest records about one segment file.
public struct SegmentMeta: Sendable, Equatable, Hashable {
    public var level: Int
    public var fileNumber: UInt64
    public var fileSize: UInt64
    public var entryCount: UInt64
    public var smallestSequence: UInt64
    public var largestSequence: UInt64
    /// The smallest and largest user keys in the file.
    public var smallestKey: [UInt8]
    public var largestKey: [UInt8]

    public init(
        level: Int, fileNumber: UInt64, fileSize: UInt64, entryCount: UInt64, smallestSequence: UInt64,
        largestSequence: UInt64, smallestKey: [UInt8], largestKey: [UInt8]
    ) {
        self.level = level
        self.fileNumber = fileNumber
        self.fileSize = fileSize
        self.entryCount = entryCount
        self.smallestSequence = smallestSequence
        self.largestSequence = largestSequence
        self.smallestKey = smallestKey
        self.largestKey = largestKey
    }
}

/// One change to the set of files that make up the store. Every field is optional; applying
/// an edit sets the scalars it carries, removes, then adds segments.
public struct VersionEdit: Sendable, Equatable {
    public var logNumber: UInt64?
    public var lastSequence: UInt64?
    public var nextFileNumber: UInt64?
    public var added: [SegmentMeta] = []
    public var removed: [(level: Int, fileNumber: UInt64)] = []
    /// The store's identity: 16 random bytes chosen when the store is first opened by a
    /// version that writes them (format 1.1). References carry it, so one store refuses
    /// another's.
    public var storeIdentifier: [UInt8]?
    /// The newest sequence of any deletion marker a compaction has dropped: the store no
    /// longer knows which keys deletions up to it touched (format 1.1).
    public var droppedDeletions: UInt64?

    public init(
        logNumber: UInt64? = nil, lastSequence: UInt64? = nil, nextFileNumber: UInt64? = nil,
        added: [SegmentMeta] = [], removed: [(level: Int, fileNumber: UInt64)] = [],
        storeIdentifier: [UInt8]? = nil, droppedDeletions: UInt64? = nil
    ) {
        self.logNumber = logNumber
        self.lastSequence = lastSequence
        self.nextFileNumber = nextFileNumber
        self.added = added
        self.removed = removed
        self.storeIdentifier = storeIdentifier
        self.droppedDeletions = droppedDeletions
    }

    public static func == (a: VersionEdit, b: VersionEdit) -> Bool {
        a.logNumber == b.logNumber && a.lastSequence == b.lastSequence && a.nextFileNumber == b.nextFileNumber
            && a.added == b.added && a.removed.elementsEqual(b.removed, by: { $0.level == $1.level && $0.fileNumber == $1.fileNumber })
            && a.storeIdentifier == b.storeIdentifier && a.droppedDeletions == b.droppedDeletions
    }

    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        if let logNumber {
            out.appendVarint(ManifestFormat.Tag.logNumber.rawValue)
            out.appendVarint(logNumber)
        }
        if let lastSequence {
            out.appendVarint(ManifestFormat.Tag.lastSequence.rawValue)
            out.appendVarint(lastSequence)
        }
        if let nextFileNumber {
            out.appendVarint(ManifestFormat.Tag.nextFileNumber.rawValue)
            out.appendVarint(nextFileNumber)
        }
        for removal in removed {
            out.appendVarint(ManifestFormat.Tag.removeSegment.rawValue)
            out.appendVarint(UInt64(removal.level))
            out.appendVarint(removal.fileNumber)
        }
        for meta in added {
            out.appendVarint(ManifestFormat.Tag.addSegment.rawValue)
            out.appendVarint(UInt64(meta.level))
            out.appendVarint(meta.fileNumber)
            out.appendVarint(meta.fileSize)
            out.appendVarint(meta.entryCount)
            out.appendVarint(meta.smallestSequence)
            out.appendVarint(meta.largestSequence)
            out.appendVarint(UInt64(meta.smallestKey.count))
            out.append(contentsOf: meta.smallestKey)
            out.appendVarint(UInt64(meta.largestKey.count))
            out.append(contentsOf: meta.largestKey)
        }
        if let storeIdentifier {
            precondition(storeIdentifier.count == ManifestFormat.storeIdentifierSize, "a store identifier is 16 bytes")
            out.appendVarint(ManifestFormat.Tag.storeIdentifier.rawValue)
            out.appendVarint(UInt64(storeIdentifier.count))
            out.append(contentsOf: storeIdentifier)
        }
        if let droppedDeletions {
            var body = [UInt8]()
            body.appendVarint(droppedDeletions)
            out.appendVarint(ManifestFormat.Tag.droppedDeletions.rawValue)
            out.appendVarint(UInt64(body.count))
            out.append(contentsOf: body)
        }
        return out
    }

    /// Decodes one record's payload. `baseOffset` (the record's file offset) is added to
    /// error offsets. Checks each field's shape; whether the edit makes sense against the
    /// files already listed is the reader's job.
    public static func decode(_ bytes: UnsafeRawBufferPointer, baseOffset: Int = 0) throws(FormatError) -> VersionEdit {
        var reader = ByteReader(bytes, baseOffset: baseOffset)
        var edit = VersionEdit()
        while !reader.isAtEnd {
            let at = baseOffset + reader.position
            let rawTag = try reader.readVarint("edit field tag")
            if rawTag >= ManifestFormat.Tag.firstSized {
                let length = try reader.readLength("edit field \(rawTag) length", limit: 1 << 20)
                let body = try reader.readBytes(length, "edit field \(rawTag)")
                try decodeSized(rawTag, body, into: &edit, at: at, bodyOffset: baseOffset + reader.position - length)
                continue
            }
            guard let tag = ManifestFormat.Tag(rawValue: rawTag) else {
                throw FormatError(.malformed, "version edit field tag \(rawTag) is unknown", offset: at)
            }
            switch tag {
            case .logNumber: edit.logNumber = try reader.readVarint("log number")
            case .lastSequence: edit.lastSequence = try reader.readVarint("last sequence")
            case .nextFileNumber: edit.nextFileNumber = try reader.readVarint("next file number")
            case .removeSegment:
                let level = try readLevel(&reader)
                edit.removed.append((level, try reader.readVarint("file number")))
            case .addSegment:
                let level = try readLevel(&reader)
                let number = try reader.readVarint("file number")
                let size = try reader.readVarint("file size")
                let entries = try reader.readVarint("entry count")
                let smallestSequence = try reader.readVarint("smallest sequence")
                let largestSequence = try reader.readVarint("largest sequence")
                let smallestKey = try readKey(&reader, "smallest key")
                let largestKey = try readKey(&reader, "largest key")
                guard smallestSequence <= largestSequence else {
                    throw FormatError(.malformed, "segment \(number) has sequence range \(smallestSequence)...\(largestSequence)", offset: at)
                }
                guard !largestKey.lexicographicallyPrecedes(smallestKey) else {
                    throw FormatError(.malformed, "segment \(number) has its largest key before its smallest", offset: at)
                }
                edit.added.append(
                    SegmentMeta(
                        level: level, fileNumber: number, fileSize: size, entryCount: entries,
                        smallestSequence: smallestSequence, largestSequence: largestSequence,
                        smallestKey: smallestKey, largestKey: largestKey))
            case .storeIdentifier, .droppedDeletions:
                preconditionFailure("sized fields are decoded by decodeSized")
            }
        }
        return edit
    }

    /// A field whose body length came first (tags 6 and up). One this reader does not know
    /// is skipped: a later minor version added it, and the rules say old readers may ignore it.
    private static func decodeSized(_ tag: UInt64, _ body: UnsafeRawBufferPointer, into edit: inout VersionEdit, at: Int, bodyOffset: Int)
        throws(FormatError)
    {
        switch ManifestFormat.Tag(rawValue: tag) {
        case .storeIdentifier?:
            guard body.count == ManifestFormat.storeIdentifierSize else {
                throw FormatError(.malformed, "the store identifier is \(body.count) bytes, not \(ManifestFormat.storeIdentifierSize)", offset: at)
            }
            edit.storeIdentifier = Array(body)
        case .droppedDeletions?:
            var reader = ByteReader(body, baseOffset: bodyOffset)
            edit.droppedDeletions = try reader.readVarint("dropped deletions")
            guard reader.isAtEnd else {
                throw FormatError(.malformed, "the dropped-deletions field holds bytes after its number", offset: at)
            }
        default:
            break
        }
    }

    private static func readLevel(_ reader: inout ByteReader) throws(FormatError) -> Int {
        let at = reader.baseOffset + reader.position
        let level = try reader.readVarint("level")
        guard level < UInt64(ManifestFormat.maxLevels) else {
            throw FormatError(.malformed, "level \(level) is out of range (0..<\(ManifestFormat.maxLevels))", offset: at)
        }
        return Int(level)
    }

    private static func readKey(_ reader: inout ByteReader, _ what: String) throws(FormatError) -> [UInt8] {
        let length = try reader.readLength(what, limit: 1 << 16)
        return Array(try reader.readBytes(length, what))
    }
}
