// Reads logical records back out of a WAL segment's bytes (format: docs/format/wal.md).
// The scanner only reports what it finds; deciding whether a bad spot is a torn tail or
// corruption is the readers' job (LogReaders.swift), by the rules in WALTail.swift.

public struct WALScanner {
    public enum Step: Equatable {
        /// A complete, checksummed logical record. `offset` is where its first fragment
        /// starts, `end` is just past its last fragment.
        case record(payload: [UInt8], offset: Int, end: Int)
        /// No more data: end of the bytes, or a zero fragment header (the zero-filled,
        /// preallocated remainder of the segment).
        case end(offset: Int)
        /// Bytes at `offset` are not a valid fragment, or fragments are out of order.
        case invalid(offset: Int, reason: String)
    }

    private let bytes: [UInt8]
    public private(set) var position: Int
    public init(bytes: [UInt8], start: Int = WALFormat.headerSize) {
        self.bytes = bytes
        self.position = start
    }

    /// True when every byte from `offset` to the end is zero.
    public func isZero(from offset: Int) -> Bool {
        isAllZero(bytes, from: offset)
    }

    /// The next logical record. After `.invalid` the scan does not resume: what damage
    /// means is for `WALSegmentReader` and `ManifestRecordReader` to judge (WALTail.swift).
    public mutating func next() -> Step {
        var payload = [UInt8]()
        var recordStart: Int? = nil
        while true {
            let room = WALFormat.blockSize - position % WALFormat.blockSize
            if room < WALFormat.fragmentHeaderSize {
                position += room
                continue
            }
            if position + WALFormat.fragmentHeaderSize > bytes.count {
                if let start = recordStart {
                    return .invalid(offset: start, reason: "record starting here is cut off by the end of the file")
                }
                return .end(offset: min(position, bytes.count))
            }
            let fragmentStart = position
            let header = bytes.withUnsafeBytes { raw in
                (
                    raw.loadUnaligned(fromByteOffset: fragmentStart, as: UInt32.self).littleEndian,
                    raw.loadUnaligned(fromByteOffset: fragmentStart + 4, as: UInt16.self).littleEndian,
                    raw[fragmentStart + 6]
                )
            }
            let (storedCRC, length, typeByte) = header
            if storedCRC == 0 && length == 0 && typeByte == 0 {
                if let start = recordStart {
                    return .invalid(offset: start, reason: "record starting here is cut off by zero bytes")
                }
                return .end(offset: fragmentStart)
            }
            guard let type = WALFormat.FragmentType(rawValue: typeByte) else {
                return .invalid(offset: recordStart ?? fragmentStart, reason: "fragment type \(typeByte) is not a WAL fragment type")
            }
            let payloadStart = fragmentStart + WALFormat.fragmentHeaderSize
            guard Int(length) <= room - WALFormat.fragmentHeaderSize, payloadStart + Int(length) <= bytes.count else {
                return .invalid(offset: recordStart ?? fragmentStart, reason: "fragment length \(length) runs past its block or the file")
            }
            let crc = bytes.withUnsafeBytes { raw in
                WALFormat.fragmentChecksum(covering: UnsafeRawBufferPointer(rebasing: raw[(fragmentStart + 4)..<(payloadStart + Int(length))]))
            }
            guard crc == storedCRC else {
                return .invalid(offset: recordStart ?? fragmentStart, reason: "fragment checksum mismatch")
            }
            position = payloadStart + Int(length)
            switch type {
            case .full, .first:
                if recordStart != nil {
                    return .invalid(offset: recordStart!, reason: "record starting here has no LAST fragment")
                }
                recordStart = fragmentStart
                payload.append(contentsOf: bytes[payloadStart..<position])
                if type == .full {
                    return .record(payload: payload, offset: fragmentStart, end: position)
                }
            case .middle, .last:
                guard let start = recordStart else {
                    return .invalid(offset: fragmentStart, reason: "\(type) fragment without a FIRST fragment")
                }
                payload.append(contentsOf: bytes[payloadStart..<position])
                if type == .last {
                    return .record(payload: payload, offset: start, end: position)
                }
            }
        }
    }
}
