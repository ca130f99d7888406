// Fuzz target `keys`: a byte string as a key of the order-preserving key encoding
// (RecordFuzzing.keys, in Tests/StrataRecordsTests/FuzzRegressionTests.swift).
import Foundation

@testable import StrataRecords

enum FuzzTarget {
    static func run(_ bytes: [UInt8]) { RecordFuzzing.keys(bytes) }

    /// A key of every kind of element, ascending and descending, nested, with the edge
    /// values of each; the last seeds are two keys joined, with the cut in the first byte.
    static func seeds() throws -> [(String, [UInt8])] {
        let keys: [(String, KeyTuple)] = [
            ("strings", KeyTuple("users", "caf\u{E9}", "", "a\u{0}b")),
            ("integers", KeyTuple(0, -1, Int64.min, Int64.max, 300)),
            ("unsigned", KeyTuple(UInt64.max, UInt64(0), UInt64(1) << 40)),
            ("floating", KeyTuple([.double(-0.0), .double(.infinity), .double(.nan), .double(.leastNonzeroMagnitude), .bool(true)])),
            ("bytes", KeyTuple([.bytes([0, 0xFF, 0]), .bytes([])])),
            (
                "uuid-and-date",
                KeyTuple([.uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))), .date(Date(timeIntervalSinceReferenceDate: -1.5))])
            ),
            ("descending", KeyTuple([.descending(.string("z")), .descending(.int(-7)), .descending(.tuple([.bytes([0]), .uint(3)]))])),
            ("nested", KeyTuple([.tuple([.tuple([.int(1)]), .tuple([])]), .string("x")]))
        ]
        var seeds = keys.map { ("generated-\($0.0).key", $0.1.bytes) }
        let a = KeyTuple("orders", 42).bytes
        let b = KeyTuple("orders", 42, "late").bytes
        seeds.append(("generated-pair.bin", [UInt8(a.count)] + a + b))
        return seeds
    }
}
