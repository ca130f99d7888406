import StrataFormat
import Testing

/// The sized fields of manifest format 1.1 (docs/format/manifest.md, "Version edit"): the two
/// this version knows round-trip, one it does not know is skipped, and bad bodies are refused.
struct ManifestSizedFieldTests {
    private static func decode(_ bytes: [UInt8]) throws(FormatError) -> VersionEdit {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { copy.deallocate() }
        copy.copyBytes(from: bytes)
        return try VersionEdit.decode(UnsafeRawBufferPointer(copy))
    }

    @Test func identityAndDroppedDeletionsRoundTrip() throws {
        let identity = (0..<16).map { UInt8($0 * 7) }
        let edit = VersionEdit(logNumber: 4, storeIdentifier: identity, droppedDeletions: 300)
        let bytes = edit.encoded()
        #expect(bytes == [1, 4, 6, 16] + identity + [7, 2, 0xAC, 0x02])
        #expect(try Self.decode(bytes) == edit)
    }

    @Test func anUnknownSizedFieldIsSkipped() throws {
        // Tag 9 with a 3-byte body, between two known fields: a later minor version's field.
        let bytes: [UInt8] = [1, 4, 9, 3, 0xFF, 0xFF, 0xFF, 2, 8]
        #expect(try Self.decode(bytes) == VersionEdit(logNumber: 4, lastSequence: 8))
    }

    @Test func badSizedFieldsAreRefused() {
        func refused(_ bytes: [UInt8], _ kind: FormatError.Kind) {
            #expect(throws: FormatError.self) { try Self.decode(bytes) }
            do {
                _ = try Self.decode(bytes)
            } catch {
                #expect(error.kind == kind, "\(bytes)")
            }
        }
        refused([6, 3, 1, 2, 3], .malformed)  // an identifier is 16 bytes
        refused([7, 2, 5, 5], .malformed)  // bytes after the number
        refused([9, 5, 1, 2], .truncated)  // the body runs past the payload
        refused([0], .malformed)  // tag 0 is not a field
    }
}
