// The payload of a WAL logical record: one committed transaction (docs/format/wal.md,
// "Batch payload").
//
//   batch := kind u8 (1) | sequence u64 | syncedThrough u64 | count u32 | op{count}
//   mark  := kind u8 (2) | sequence u64 | syncedThrough u64 | count u32 (0)   (a sync mark)
//   op    := 1 (put) | keyLength varint | key | valueLength varint | value
//          | 2 (delete) | keyLength varint | key

public enum BatchFormat {
    public static let recordKindBatch: UInt8 = 1
    /// A sync mark (WAL format 2.0): no operations; it says that every byte of the segment
    /// before it had been synced when it was written, so damage there is never taken for a
    /// torn write. It repeats the sequence of the record before it.
    public static let recordKindSyncMark: UInt8 = 2
    public static let headerSize = 1 + 8 + 8 + 4

    public enum RecordKind: UInt8, Sendable {
        case batch = 1
        case syncMark = 2
    }

    /// The payload of a sync mark written at `offset` of a segment synced through `offset`,
    /// after the record with `sequence` (docs/format/wal.md, "Sync marks").
    public static func syncMark(sequence: UInt64, syncedThrough: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize)
        bytes.append(recordKindSyncMark)
        bytes.appendLittleEndian(sequence)
        bytes.appendLittleEndian(syncedThrough)
        bytes.appendLittleEndian(UInt32(0))
        return bytes
    }

    public enum OpKind: UInt8, Sendable {
        case put = 1
        case delete = 2
    }

    /// Builds one batch payload. Append operations, then `finish` patches the count.
    public struct Encoder {
        public private(set) var bytes: [UInt8]
        public private(set) var count: UInt32 = 0

        /// `reusing`: a buffer to encode into (its contents are dropped, its capacity kept), so
        /// a writer that encodes a batch per commit need not allocate one each time.
        public init(sequence: UInt64, syncedThrough: UInt64, reusing buffer: [UInt8] = [], reservingCapacity: Int = 0) {
            bytes = buffer
            bytes.removeAll(keepingCapacity: true)
            bytes.reserveCapacity(BatchFormat.headerSize + reservingCapacity)
            bytes.append(BatchFormat.recordKindBatch)
            bytes.appendLittleEndian(sequence)
            bytes.appendLittleEndian(syncedThrough)
            bytes.appendLittleEndian(UInt32(0))
        }

        public mutating func put(_ key: [UInt8], _ value: [UInt8]) {
            bytes.append(OpKind.put.rawValue)
            bytes.appendVarint(UInt64(key.count))
            bytes.append(contentsOf: key)
            bytes.appendVarint(UInt64(value.count))
            bytes.append(contentsOf: value)
            count += 1
        }

        public mutating func delete(_ key: [UInt8]) {
            bytes.append(OpKind.delete.rawValue)
            bytes.appendVarint(UInt64(key.count))
            bytes.append(contentsOf: key)
            count += 1
        }

        public mutating func finish() -> [UInt8] {
            bytes.storeLittleEndian(count, at: 17)
            return bytes
        }
    }

    // MARK: Encoding in place

    /// The most bytes an operation takes besides its key and value: its kind and two varints.
    public static let maxOperationOverhead = 1 + 2 * Varint.maxBytes

    /// Where an operation stored by `storeOperation` put its parts, as offsets from its start.
    public struct StoredOperation: Sendable {
        public var keyStart: Int
        public var valueStart: Int
        public var end: Int

        @inlinable
        public init(keyStart: Int, valueStart: Int, end: Int) {
            self.keyStart = keyStart
            self.valueStart = valueStart
            self.end = end
        }
    }

    /// Stores one `op` at `start`: a put of `value`, or a delete when `value` is nil. The
    /// caller provides `key.count + (value?.count ?? 0) + maxOperationOverhead` bytes. The
    /// same bytes `Encoder.put` and `Encoder.delete` append, for a writer that builds the
    /// batch in its own buffer as a transaction runs.
    @inlinable
    public static func storeOperation(
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, at start: UnsafeMutableRawPointer
    ) -> StoredOperation {
        var offset = 0
        start.storeBytes(of: (value == nil ? OpKind.delete : OpKind.put).rawValue, as: UInt8.self)
        offset += 1
        offset += Varint.store(UInt64(key.count), at: start + offset)
        let keyStart = offset
        if key.count > 0 { (start + offset).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        offset += key.count
        guard let value else { return StoredOperation(keyStart: keyStart, valueStart: offset, end: offset) }
        offset += Varint.store(UInt64(value.count), at: start + offset)
        let valueStart = offset
        if value.count > 0 { (start + offset).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        offset += value.count
        return StoredOperation(keyStart: keyStart, valueStart: valueStart, end: offset)
    }

    /// Stores a batch's header (`headerSize` bytes) at `start`, the operations following it.
    public static func storeHeader(sequence: UInt64, syncedThrough: UInt64, count: UInt32, at start: UnsafeMutableRawPointer) {
        start.storeBytes(of: recordKindBatch, as: UInt8.self)
        start.storeBytes(of: sequence.littleEndian, toByteOffset: 1, as: UInt64.self)
        start.storeBytes(of: syncedThrough.littleEndian, toByteOffset: 9, as: UInt64.self)
        start.storeBytes(of: count.littleEndian, toByteOffset: 17, as: UInt32.self)
    }

    public struct Header: Sendable, Equatable {
        public var kind: RecordKind = .batch
        public var sequence: UInt64
        public var syncedThrough: UInt64
        public var count: UInt32
    }

    public static func decodeHeader(_ payload: UnsafeRawBufferPointer, baseOffset: Int = 0) throws(FormatError) -> Header {
        var reader = ByteReader(payload, baseOffset: baseOffset)
        let kindByte = try reader.readUInt8("record kind")
        guard let kind = RecordKind(rawValue: kindByte) else {
            throw FormatError(.malformed, "record kind \(kindByte) is neither a batch nor a sync mark", offset: baseOffset)
        }
        let header = Header(
            kind: kind, sequence: try reader.readUInt64("sequence"),
            syncedThrough: try reader.readUInt64("synced-through offset"),
            count: try reader.readUInt32("operation count"))
        if kind == .syncMark && header.count != 0 {
            throw FormatError(.malformed, "a sync mark holds \(header.count) operations; it must hold none", offset: baseOffset + 17)
        }
        return header
    }

    /// Decodes a whole batch, handing each operation to `visit` with borrowed key and value
    /// bytes (valid only during the call). Checks the count and that nothing trails the ops.
    public static func decode(
        _ payload: UnsafeRawBufferPointer,
        baseOffset: Int = 0,
        maxKeyBytes: Int,
        maxValueBytes: Int,
        visit: (OpKind, UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Void
    ) throws -> Header {
        let header = try decodeHeader(payload, baseOffset: baseOffset)
        var reader = ByteReader(payload, position: headerSize, baseOffset: baseOffset)
        for _ in 0..<header.count {
            let opStart = reader.position
            let kindByte = try reader.readUInt8("operation kind")
            guard let kind = OpKind(rawValue: kindByte) else {
                throw FormatError(.malformed, "operation kind \(kindByte) is unknown", offset: baseOffset + opStart)
            }
            let keyLength = try reader.readLength("key length", limit: maxKeyBytes)
            let key = try reader.readBytes(keyLength, "key")
            switch kind {
            case .put:
                let valueLength = try reader.readLength("value length", limit: maxValueBytes)
                let value = try reader.readBytes(valueLength, "value")
                try visit(.put, key, value)
            case .delete:
                try visit(.delete, key, nil)
            }
        }
        guard reader.isAtEnd else {
            throw FormatError(.malformed, "\(reader.remaining) bytes follow the last operation of the batch", offset: baseOffset + reader.position)
        }
        return header
    }
}
