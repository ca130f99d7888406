@_spi(Testing) import StrataFormat
import Testing

/// Runs `body` with a reader over `bytes` (kept alive for the call).
private func withReader<T>(_ bytes: [UInt8], baseOffset: Int = 0, _ body: (inout ByteReader) throws -> T) rethrows -> T {
    try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> T in
        var reader = ByteReader(raw, baseOffset: baseOffset)
        return try body(&reader)
    }
}

@Suite struct ChecksumTests {
    @Test func crc32KnownVector() {
        #expect(Checksum.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func crc32OfNothingIsTheSeed() {
        #expect(Checksum.crc32([UInt8]()) == 0)
        #expect(Checksum.crc32([UInt8](), seed: 0x1234_5678) == 0x1234_5678)
    }

    @Test func crc32SeedChainsRanges() {
        let bytes = Array("The quick brown fox jumps over the lazy dog".utf8)
        #expect(Checksum.crc32(bytes) == 0x414F_A339)
        for split in [0, 1, 9, bytes.count - 1, bytes.count] {
            let first = Checksum.crc32(bytes[..<split])
            #expect(Checksum.crc32(bytes[split...], seed: first) == Checksum.crc32(bytes))
        }
    }

    @Test func crc32SliceAndRawBufferAgree() {
        let bytes: [UInt8] = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let fromArray = Checksum.crc32(bytes)
        #expect(Checksum.crc32(bytes[0...]) == fromArray)
        #expect(bytes.withUnsafeBytes { Checksum.crc32($0) } == fromArray)
    }

    /// Every folded path this processor has must give zlib's value for every length (the
    /// fold takes whole 16-byte lanes from 64 bytes up, four 256-bit registers at a time from
    /// 128 bytes up and four 512-bit ones from 256 bytes up where the processor has them, and
    /// zlib the rest), alignment and seed. The inputs are fixed: a SplitMix64 stream from
    /// seed 0x5EED.
    @Test(arguments: Checksum.Path.allCases)
    func crc32MatchesZlibAtEveryLengthAndAlignment(path: Checksum.Path) {
        // zlib's path is always there; a fold this processor lacks has nothing to check.
        guard Checksum.isAvailable(path) else {
            #expect(path != .portable)
            return
        }
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let bytes: [UInt8] = (0..<((1 << 20) + 64)).map { _ in UInt8(truncatingIfNeeded: next()) }
        var mismatches: [String] = []
        bytes.withUnsafeBytes { all in
            let lengths = Array(0...300) + [319, 320, 383, 384, 447, 448, 511, 512, 513, 767, 1023, 4090, 4096, 4111, 65_537, 1 << 20]
            for length in lengths {
                for offset in [0, 1, 3, 8, 15] {
                    let seed = length % 3 == 0 ? 0 : UInt32(truncatingIfNeeded: next())
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    if Checksum.crc32(slice, seed: seed, upTo: path) != Checksum.portableCRC32(slice, seed: seed) {
                        mismatches.append("length \(length) offset \(offset) seed \(seed)")
                    }
                }
            }
            // Chained ranges whose split falls inside a 64-byte group.
            let whole = UnsafeRawBufferPointer(rebasing: all[0..<10_000])
            for split in [1, 63, 64, 65, 100, 4096, 9_999] {
                let first = Checksum.crc32(UnsafeRawBufferPointer(rebasing: whole[0..<split]), upTo: path)
                if Checksum.crc32(UnsafeRawBufferPointer(rebasing: whole[split...]), seed: first, upTo: path) != Checksum.portableCRC32(whole) {
                    mismatches.append("chained at \(split)")
                }
            }
        }
        let count = mismatches.count
        let firstFew = mismatches.prefix(5).joined(separator: "; ")
        #expect(count == 0, "CRC32 by \(path) differs from zlib's: \(firstFew)")
    }

    /// What `crc32` takes by default is the widest path this processor has.
    @Test func crc32TakesTheWidestPath() {
        let bytes: [UInt8] = (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 131) }
        let widest = Checksum.Path.allCases.last { Checksum.isAvailable($0) }!
        bytes.withUnsafeBytes { raw in
            #expect(Checksum.crc32(raw) == Checksum.crc32(raw, upTo: widest))
            #expect(Checksum.isAccelerated == (widest != .portable))
        }
    }
}

@Suite struct VarintTests {
    private func encode(_ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        Varint.append(value, to: &out)
        return out
    }

    private func decode(_ bytes: [UInt8], baseOffset: Int = 0) throws -> (value: UInt64, consumed: Int) {
        try withReader(bytes, baseOffset: baseOffset) { reader in
            let value = try reader.readVarint()
            return (value, reader.position)
        }
    }

    @Test func knownEncodings() {
        #expect(encode(0) == [0x00])
        #expect(encode(1) == [0x01])
        #expect(encode(127) == [0x7F])
        #expect(encode(128) == [0x80, 0x01])
        #expect(encode(300) == [0xAC, 0x02])
        #expect(encode(16_383) == [0xFF, 0x7F])
        #expect(encode(16_384) == [0x80, 0x80, 0x01])
        #expect(encode(UInt64.max) == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
    }

    static let roundTripValues: [UInt64] = [
        0, 1, 127, 128, 255, 256, 16_383, 16_384, 2_097_151, 2_097_152,
        UInt64(UInt32.max), UInt64(UInt32.max) + 1, 1 << 56 - 1, 1 << 56, 1 << 63 - 1, 1 << 63, UInt64.max - 1, UInt64.max
    ]

    @Test(arguments: roundTripValues)
    func roundTrip(value: UInt64) throws {
        let bytes = encode(value)
        #expect(bytes.count == Varint.encodedSize(value))
        #expect(bytes.count <= Varint.maxBytes)
        let decoded = try decode(bytes)
        #expect(decoded.value == value)
        #expect(decoded.consumed == bytes.count)
        // Every byte but the last has the continuation bit.
        #expect(bytes.dropLast().allSatisfy { $0 & 0x80 != 0 })
        #expect(bytes.last! & 0x80 == 0)
    }

    @Test func arrayAppendMatchesVarintAppend() {
        var viaArray: [UInt8] = [0xAA]
        viaArray.appendVarint(1_000_000)
        #expect(viaArray == [0xAA] + encode(1_000_000))
    }

    @Test func decodingStopsAtTheEndOfTheVarint() throws {
        let decoded = try decode([0x80, 0x01, 0x55, 0x66])
        #expect(decoded.value == 128)
        #expect(decoded.consumed == 2)
    }

    @Test func emptyInputIsTruncated() {
        let error = #expect(throws: FormatError.self) { try decode([]) }
        #expect(error?.kind == .truncated)
    }

    @Test func truncatedVarint() {
        for bytes: [UInt8] in [[0x80], [0xFF, 0xFF], Array(encode(UInt64.max).dropLast())] {
            let error = #expect(throws: FormatError.self) { try decode(bytes, baseOffset: 100) }
            #expect(error?.kind == .truncated)
            // The offset is where the varint starts, shifted by the base offset.
            #expect(error?.offset == 100)
        }
    }

    @Test func overlongVarintIsMalformed() {
        // Eleven bytes: more than a UInt64 can need.
        let eleven = [UInt8](repeating: 0x80, count: 10) + [0x00]
        let error = #expect(throws: FormatError.self) { try decode(eleven) }
        #expect(error?.kind == .malformed)

        // Ten bytes whose last carries bits past bit 63.
        let overflow = [UInt8](repeating: 0xFF, count: 9) + [0x02]
        let overflowError = #expect(throws: FormatError.self) { try decode(overflow) }
        #expect(overflowError?.kind == .malformed)

        let allOnes = [UInt8](repeating: 0xFF, count: 12)
        let allOnesError = #expect(throws: FormatError.self) { try decode(allOnes) }
        #expect(allOnesError?.kind == .malformed)
    }

    @Test func readLengthEnforcesItsLimit() throws {
        try withReader(encode(1_000)) { reader throws in
            #expect(try reader.readLength("length", limit: 1_000) == 1_000)
            reader.position = 0
            let error = #expect(throws: FormatError.self) { try reader.readLength("length", limit: 999) }
            #expect(error?.kind == .malformed)
            #expect(error?.offset == 0)
        }
        // A length near UInt64.max is refused, not converted to a negative Int.
        withReader(encode(UInt64.max)) { reader in
            let error = #expect(throws: FormatError.self) { try reader.readLength("length", limit: Int.max) }
            #expect(error?.kind == .malformed)
        }
    }
}

@Suite struct ByteReaderTests {
    @Test func readsLittleEndianIntegers() throws {
        var bytes: [UInt8] = [0xAB]
        bytes.appendLittleEndian(UInt16(0x1234))
        bytes.appendLittleEndian(UInt32(0xDEAD_BEEF))
        bytes.appendLittleEndian(UInt64(0x0102_0304_0506_0708))
        #expect(Array(bytes[1...2]) == [0x34, 0x12])
        #expect(Array(bytes[3...6]) == [0xEF, 0xBE, 0xAD, 0xDE])
        try withReader(bytes) { reader throws in
            #expect(reader.remaining == 15)
            #expect(try reader.readUInt8() == 0xAB)
            #expect(try reader.readUInt16() == 0x1234)
            #expect(try reader.readUInt32() == 0xDEAD_BEEF)
            #expect(try reader.readUInt64() == 0x0102_0304_0506_0708)
            #expect(reader.isAtEnd)
            #expect(reader.remaining == 0)
        }
    }

    @Test func storeLittleEndianPatchesInPlace() {
        var bytes = [UInt8](repeating: 0, count: 6)
        bytes.storeLittleEndian(0x0403_0201, at: 1)
        #expect(bytes == [0, 1, 2, 3, 4, 0])
    }

    @Test func everyReadChecksBounds() {
        let bytes: [UInt8] = [1, 2, 3]
        withReader(bytes, baseOffset: 1_000) { reader in
            let e32 = #expect(throws: FormatError.self) { try reader.readUInt32() }
            #expect(e32?.kind == .truncated)
            #expect(e32?.offset == 1_000)
            // A failed read does not move the cursor.
            #expect(reader.position == 0)
            let e64 = #expect(throws: FormatError.self) { try reader.readUInt64() }
            #expect(e64?.kind == .truncated)
            #expect(reader.position == 0)

            #expect((try? reader.readUInt16()) == 0x0201)
            let e16 = #expect(throws: FormatError.self) { try reader.readUInt16() }
            #expect(e16?.kind == .truncated)
            #expect(e16?.offset == 1_002)
            #expect((try? reader.readUInt8()) == 3)
            let e8 = #expect(throws: FormatError.self) { try reader.readUInt8() }
            #expect(e8?.kind == .truncated)
            #expect(e8?.offset == 1_003)
        }
    }

    @Test func readBytesBorrowsAndChecksBounds() throws {
        let bytes: [UInt8] = [10, 11, 12, 13, 14]
        try withReader(bytes) { reader throws in
            reader.position = 1
            let piece = try reader.readBytes(3, "piece")
            #expect(Array(piece) == [11, 12, 13])
            #expect(reader.position == 4)
            #expect(Array(try reader.readBytes(0, "nothing")).isEmpty)
            let tooMany = #expect(throws: FormatError.self) { try reader.readBytes(2, "piece") }
            #expect(tooMany?.kind == .truncated)
            #expect(tooMany?.message.contains("piece") == true)
            let negative = #expect(throws: FormatError.self) { try reader.readBytes(-1, "piece") }
            #expect(negative?.kind == .truncated)
            #expect(reader.position == 4)
            #expect(Array(try reader.readBytes(1, "last")) == [14])
            #expect(reader.isAtEnd)
        }
    }

    @Test func emptyBufferIsAtEnd() {
        withReader([]) { reader in
            #expect(reader.isAtEnd)
            #expect(reader.remaining == 0)
            #expect(throws: FormatError.self) { try reader.readUInt8() }
        }
    }

    @Test func formatErrorDescriptionNamesTheOffset() {
        let error = FormatError(.malformed, "bad field", offset: 42)
        #expect(error.description.contains("bad field"))
        #expect(error.description.contains("42"))
    }
}
