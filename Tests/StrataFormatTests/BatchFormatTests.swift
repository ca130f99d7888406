import StrataFormat
import Testing

private enum Op: Equatable {
    case put([UInt8], [UInt8])
    case delete([UInt8])
}

private func decodeAll(
    _ payload: [UInt8], maxKeyBytes: Int = 1 << 14, maxValueBytes: Int = 1 << 24,
    baseOffset: Int = 0
) throws -> (BatchFormat.Header, [Op]) {
    var ops: [Op] = []
    let header = try payload.withUnsafeBytes { raw in
        try BatchFormat.decode(raw, baseOffset: baseOffset, maxKeyBytes: maxKeyBytes, maxValueBytes: maxValueBytes) { kind, key, value in
            switch kind {
            case .put: ops.append(.put(Array(key), Array(value!)))
            case .delete:
                #expect(value == nil)
                ops.append(.delete(Array(key)))
            }
        }
    }
    return (header, ops)
}

private func encode(sequence: UInt64 = 7, syncedThrough: UInt64 = 4096, _ ops: [Op]) -> [UInt8] {
    var encoder = BatchFormat.Encoder(sequence: sequence, syncedThrough: syncedThrough)
    for op in ops {
        switch op {
        case .put(let key, let value): encoder.put(key, value)
        case .delete(let key): encoder.delete(key)
        }
    }
    #expect(encoder.count == UInt32(ops.count))
    return encoder.finish()
}

/// Rewrites the operation count field.
private func withCount(_ payload: [UInt8], _ count: UInt32) -> [UInt8] {
    var copy = payload
    copy.storeLittleEndian(count, at: 17)
    return copy
}

@Suite struct BatchFormatTests {
    @Test func headerLayout() throws {
        let payload = encode(sequence: 0x1122_3344_5566_7788, syncedThrough: 0x99, [.put([1], [2])])
        #expect(BatchFormat.headerSize == 21)
        #expect(payload[0] == BatchFormat.recordKindBatch)
        #expect(Array(payload[1..<9]) == [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        #expect(Array(payload[9..<17]) == [0x99, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(payload[17..<21]) == [1, 0, 0, 0])
        // put: kind, key length, key, value length, value.
        #expect(Array(payload[21...]) == [1, 1, 1, 1, 2])
        let header = try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
        #expect(header.sequence == 0x1122_3344_5566_7788)
        #expect(header.syncedThrough == 0x99)
        #expect(header.count == 1)
    }

    @Test func roundTrip() throws {
        let ops: [Op] = [
            .put(Array("alpha".utf8), Array("one".utf8)),
            .delete(Array("beta".utf8)),
            .put([0x00], []),
            .put([0xFF, 0xFF], [UInt8](repeating: 0xAB, count: 300)),
            .delete([0x01]),
            .put([UInt8](repeating: 7, count: 200), [UInt8](repeating: 8, count: 70_000))
        ]
        let payload = encode(sequence: 42, syncedThrough: 12_345, ops)
        let (header, decoded) = try decodeAll(payload)
        #expect(header.sequence == 42)
        #expect(header.syncedThrough == 12_345)
        #expect(header.count == UInt32(ops.count))
        #expect(decoded == ops)
    }

    @Test func emptyBatchRoundTrips() throws {
        let payload = encode(sequence: 1, syncedThrough: 32, [])
        #expect(payload.count == BatchFormat.headerSize)
        let (header, ops) = try decodeAll(payload)
        #expect(header.count == 0)
        #expect(ops.isEmpty)
    }

    @Test func syncMarkDecodesWithNoOperations() throws {
        let payload = BatchFormat.syncMark(sequence: 41, syncedThrough: 4096)
        #expect(payload.count == BatchFormat.headerSize)
        #expect(payload[0] == BatchFormat.recordKindSyncMark)
        let (header, ops) = try decodeAll(payload)
        #expect(header.kind == .syncMark)
        #expect(header.sequence == 41 && header.syncedThrough == 4096 && header.count == 0)
        #expect(ops.isEmpty)
    }

    @Test func syncMarkWithOperationsIsMalformed() {
        var payload = encode([.put([1], [1])])
        payload[0] = BatchFormat.recordKindSyncMark
        let error = #expect(throws: FormatError.self) { try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) } }
        #expect(error?.kind == .malformed)
    }

    @Test func wrongRecordKind() {
        var payload = encode([.put([1], [1])])
        payload[0] = 3
        let error = #expect(throws: FormatError.self) { try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) } }
        #expect(error?.kind == .malformed)
        #expect(throws: FormatError.self) { try decodeAll(payload) }
    }

    @Test func truncatedHeader() {
        let payload = Array(encode([]).prefix(20))
        let error = #expect(throws: FormatError.self) { try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) } }
        #expect(error?.kind == .truncated)
    }

    @Test func countHigherThanTheOperationsIsAnError() {
        let payload = withCount(encode([.put([1], [1]), .delete([2])]), 3)
        let error = #expect(throws: FormatError.self) { try decodeAll(payload) }
        #expect(error?.kind == .truncated)
    }

    @Test func countLowerThanTheOperationsLeavesTrailingBytes() {
        let payload = withCount(encode([.put([1], [1]), .delete([2])]), 1)
        let error = #expect(throws: FormatError.self) { try decodeAll(payload, baseOffset: 1_000) }
        #expect(error?.kind == .malformed)
        // Offset of the first trailing byte (the second operation), shifted by the base.
        #expect(error?.offset == 1_000 + 21 + 5)
    }

    @Test func trailingBytesAreAnError() {
        let payload = encode([.put([1], [1])]) + [0]
        let error = #expect(throws: FormatError.self) { try decodeAll(payload) }
        #expect(error?.kind == .malformed)
    }

    @Test func unknownOperationKind() {
        var payload = encode([.put([1], [1])])
        payload[21] = 3
        let error = #expect(throws: FormatError.self) { try decodeAll(payload, baseOffset: 100) }
        #expect(error?.kind == .malformed)
        #expect(error?.offset == 121)
    }

    @Test func keyOverTheLimit() throws {
        let payload = encode([.put([UInt8](repeating: 1, count: 11), [2])])
        _ = try decodeAll(payload, maxKeyBytes: 11)
        let error = #expect(throws: FormatError.self) { try decodeAll(payload, maxKeyBytes: 10) }
        #expect(error?.kind == .malformed)
        // Deletes are checked too.
        let delete = encode([.delete([UInt8](repeating: 1, count: 11))])
        #expect(throws: FormatError.self) { try decodeAll(delete, maxKeyBytes: 10) }
    }

    @Test func valueOverTheLimit() throws {
        let payload = encode([.put([1], [UInt8](repeating: 2, count: 1_000))])
        _ = try decodeAll(payload, maxValueBytes: 1_000)
        let error = #expect(throws: FormatError.self) { try decodeAll(payload, maxValueBytes: 999) }
        #expect(error?.kind == .malformed)
    }

    @Test func hugeLengthIsRefusedBeforeReading() {
        // A damaged key length near 2^64 must be refused as over the limit, not trap.
        var payload = encode([])
        payload = withCount(payload, 1)
        payload.append(BatchFormat.OpKind.put.rawValue)
        payload.appendVarint(UInt64.max)
        payload += [1, 2, 3]
        let error = #expect(throws: FormatError.self) { try decodeAll(payload) }
        #expect(error?.kind == .malformed)
    }

    @Test func lengthRunningPastThePayloadIsTruncated() {
        var payload = withCount(encode([]), 1)
        payload.append(BatchFormat.OpKind.put.rawValue)
        payload.appendVarint(10)
        payload += [1, 2, 3]
        let error = #expect(throws: FormatError.self) { try decodeAll(payload) }
        #expect(error?.kind == .truncated)
    }

    @Test func visitorErrorsPropagate() {
        struct Stop: Error {}
        let payload = encode([.put([1], [1]), .put([2], [2])])
        #expect(throws: Stop.self) {
            try payload.withUnsafeBytes { raw in
                try BatchFormat.decode(raw, maxKeyBytes: 100, maxValueBytes: 100) { _, _, _ in throw Stop() }
            }
        }
    }
}
