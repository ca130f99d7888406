import Foundation
import Testing

@testable import StrataRecords

// The worked example of docs/format/records.md, byte for byte, and the collection layout it
// describes, so the page cannot drift from the code.

private struct Point: Codable, Equatable {
    var x: Int
    var name: String
}

@Suite struct RecordFormatWorkedExampleTests {
    @Test func thePointOfTheFormatPage() throws {
        let bytes = try RecordEncoder.encode(Point(x: -3, name: "ab"))
        let expected: [UInt8] = [
            0x01, 0x0a, 0x0e, 0x02, 0x01, 0x78, 0x02, 0x05, 0x04, 0x6e, 0x61, 0x6d, 0x65, 0x05, 0x02, 0x61, 0x62
        ]
        #expect(bytes == expected)
        #expect(try RecordDecoder.decode(Point.self, from: bytes) == Point(x: -3, name: "ab"))
    }

    /// A body of 128 bytes or more needs a two-byte length: the encoder writes the body
    /// first and moves it along to make room, at every level of nesting.
    @Test func longBodiesGetLongerLengths() throws {
        for length in [100, 120, 125, 126, 127, 128, 200, 20_000] {
            let inner = Point(x: 1, name: String(repeating: "é", count: length / 2))
            let outer = [inner, Point(x: -1, name: "b")]
            let bytes = try RecordEncoder.encode(outer)
            #expect(try RecordDecoder.decode([Point].self, from: bytes) == outer, "length \(length)")
        }
    }

    @Test func theKeysACollectionWrites() {
        let layout = CollectionLayout(name: "notes", indexes: ["folder"])
        let id = CollectionLayout.idBytes(.int(7))
        #expect(layout.recordKey(idBytes: id) == KeyTuple("notes", 0, 7).bytes)
        #expect(
            layout.entryKey(index: "folder", key: [.string("inbox")], idBytes: id, unique: false)
                == KeyTuple("notes", 1, "folder", "inbox", 7).bytes)
        #expect(
            layout.entryKey(index: "folder", key: [.string("inbox")], idBytes: id, unique: true)
                == KeyTuple("notes", 1, "folder", "inbox").bytes)
    }
}
