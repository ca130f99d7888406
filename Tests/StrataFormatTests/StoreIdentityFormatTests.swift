import StrataFormat
import Testing

@Suite struct StoreIdentityFormatTests {
    private func identity(major: UInt16, minor: UInt16) -> [UInt8] {
        var out = StoreIdentityFormat.magic
        out.appendLittleEndian(major)
        out.appendLittleEndian(minor)
        out.appendLittleEndian(UInt32(0))
        out.appendLittleEndian(Checksum.crc32(out))
        return out
    }

    @Test func encodeAndValidate() throws {
        let bytes = StoreIdentityFormat.encode()
        #expect(bytes.count == StoreIdentityFormat.size)
        #expect(Array(bytes[0..<8]) == Array("STRATADB".utf8))
        #expect(bytes == identity(major: StoreIdentityFormat.majorVersion, minor: StoreIdentityFormat.minorVersion))
        let version = try StoreIdentityFormat.validate(bytes)
        #expect(version.major == StoreIdentityFormat.majorVersion)
        #expect(version.minor == StoreIdentityFormat.minorVersion)
    }

    @Test func badMagic() {
        for bytes: [UInt8] in [
            [], Array("STRATA".utf8), Array("STRATAWL".utf8) + [UInt8](repeating: 0, count: 12),
            [UInt8](repeating: 0, count: 20)
        ] {
            let error = #expect(throws: FormatError.self) { try StoreIdentityFormat.validate(bytes) }
            #expect(error?.kind == .badMagic)
        }
    }

    @Test func wrongLength() {
        let bytes = StoreIdentityFormat.encode()
        for damaged in [Array(bytes.prefix(19)), Array(bytes.prefix(8)), bytes + [0]] {
            let error = #expect(throws: FormatError.self) { try StoreIdentityFormat.validate(damaged) }
            #expect(error?.kind == .truncated)
        }
    }

    @Test(arguments: 8..<20)
    func flippedByteIsAChecksumMismatch(index: Int) {
        var bytes = StoreIdentityFormat.encode()
        bytes[index] ^= 0x01
        let error = #expect(throws: FormatError.self) { try StoreIdentityFormat.validate(bytes) }
        #expect(error?.kind == .checksumMismatch)
        #expect(error?.offset == 16)
    }

    @Test func newerMajorVersion() {
        let error = #expect(throws: FormatError.self) { try StoreIdentityFormat.validate(identity(major: 2, minor: 1)) }
        #expect(error?.kind == .unsupportedVersion(major: 2, minor: 1))
        #expect(error?.message.contains("2.1") == true)
    }

    @Test func newerMinorVersionIsAccepted() throws {
        let version = try StoreIdentityFormat.validate(identity(major: 1, minor: 9))
        #expect(version.major == 1)
        #expect(version.minor == 9)
    }
}
