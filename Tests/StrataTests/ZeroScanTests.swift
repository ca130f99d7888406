import StrataFormat
import Testing

/// The zero scans recovery and the verifier run over a log file's preallocated tail, against
/// a byte-at-a-time reading of the same bytes, at every length, offset and position of a
/// single non-zero byte that matters (the word and 4 KiB boundaries among them).
@Suite("ZeroScan")
struct ZeroScanTests {
    static func naiveAllZero(_ bytes: [UInt8], from offset: Int) -> Bool {
        bytes[min(max(0, offset), bytes.count)...].allSatisfy { $0 == 0 }
    }

    static func naiveLastNonZero(_ bytes: [UInt8]) -> Int? {
        bytes.lastIndex { $0 != 0 }
    }

    static let lengths = [0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097, 8191, 8192, 8193, 12_345]

    @Test func allZeroMatchesAByteAtATimeScan() {
        for length in Self.lengths {
            var bytes = [UInt8](repeating: 0, count: length)
            let offsets = Set([-3, 0, 1, 7, 8, 9, length / 2, length - 1, length, length + 5])
            for offset in offsets {
                #expect(isAllZero(bytes, from: offset) == Self.naiveAllZero(bytes, from: offset), "length \(length), offset \(offset), all zero")
            }
            for position in Set([0, 1, 7, 8, 4095, 4096, length / 2, length - 1]) where position >= 0 && position < length {
                bytes[position] = 0x01
                for offset in offsets {
                    #expect(
                        isAllZero(bytes, from: offset) == Self.naiveAllZero(bytes, from: offset),
                        "length \(length), offset \(offset), non-zero byte at \(position)")
                }
                bytes[position] = 0
            }
        }
    }

    @Test func lastNonZeroMatchesAByteAtATimeScan() {
        for length in Self.lengths {
            var bytes = [UInt8](repeating: 0, count: length)
            #expect(lastNonZeroIndex(bytes) == nil, "length \(length), all zero")
            for position in Set([0, 1, 7, 8, 4095, 4096, 4097, length / 2, length - 4097, length - 4096, length - 1])
            where position >= 0 && position < length {
                bytes[position] = 0x80
                #expect(lastNonZeroIndex(bytes) == Self.naiveLastNonZero(bytes), "length \(length), non-zero byte at \(position)")
                // A second, earlier one changes nothing.
                if position > 0 {
                    bytes[0] = 0x02
                    #expect(lastNonZeroIndex(bytes) == position, "length \(length), non-zero bytes at 0 and \(position)")
                    bytes[0] = 0
                }
                bytes[position] = 0
            }
        }
    }
}
