import StrataFormat
import Testing

/// Keeps the worked examples in docs/format/wal.md and docs/format/store.md exact: the bytes
/// printed there are the bytes the encoders produce.
struct WALWorkedExampleTests {
    static func hex(_ text: String) -> [UInt8] {
        text.split(separator: " ").map { UInt8($0, radix: 16)! }
    }

    @Test func headerMatchesTheDocument() {
        let expected = Self.hex("53 54 52 41 54 41 57 4c 02 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 b2 34 95 36")
        #expect(WALFormat.SegmentHeader(segmentNumber: 1).encoded() == expected)
    }

    @Test func recordMatchesTheDocument() {
        var encoder = BatchFormat.Encoder(sequence: 1, syncedThrough: 32)
        encoder.put(Array("k1".utf8), Array("v1".utf8))
        let payload = encoder.finish()
        var buffer: [UInt8] = []
        let end = payload.withUnsafeBytes { WALFormat.appendRecord($0, to: &buffer, fileOffset: 32) }
        let expected = Self.hex("c3 2b 16 46 1c 00 01 01 01 00 00 00 00 00 00 00 20 00 00 00 00 00 00 00 01 00 00 00 01 02 6b 31 02 76 31")
        #expect(buffer == expected)
        #expect(end == 67)
    }

    @Test func syncMarkMatchesTheDocument() {
        let mark = BatchFormat.syncMark(sequence: 1, syncedThrough: 67)
        var buffer: [UInt8] = []
        let end = mark.withUnsafeBytes { WALFormat.appendRecord($0, to: &buffer, fileOffset: 67) }
        let expected = Self.hex("9e 75 ff e5 15 00 01 02 01 00 00 00 00 00 00 00 43 00 00 00 00 00 00 00 00 00 00 00")
        #expect(buffer == expected)
        #expect(end == 95)
    }

    @Test func identityMatchesTheDocument() {
        #expect(StoreIdentityFormat.encode() == Self.hex("53 54 52 41 54 41 44 42 01 00 00 00 00 00 00 00 15 da 95 2c"))
    }
}
