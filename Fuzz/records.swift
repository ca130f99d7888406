// Fuzz target `records`: a byte string as a stored record, decoded into several Codable
// types (RecordFuzzing.records, in Tests/StrataRecordsTests/FuzzRegressionTests.swift).
@testable import StrataRecords

enum FuzzTarget {
    static func run(_ bytes: [UInt8]) { RecordFuzzing.records(bytes) }

    /// The sample value of every type the target decodes into, encoded.
    static func seeds() throws -> [(String, [UInt8])] {
        [
            ("generated-scalars.rec", try RecordEncoder.encode(FuzzScalars.sample)),
            ("generated-tree.rec", try RecordEncoder.encode(FuzzTree.sample)),
            ("generated-shape.rec", try RecordEncoder.encode(FuzzShape.sample)),
            ("generated-derived.rec", try RecordEncoder.encode(FuzzDerived.sample)),
            ("generated-dictionary.rec", try RecordEncoder.encode(["a": [Int64.min, 0], "b": []] as [String: [Int64]])),
            ("generated-optionals.rec", try RecordEncoder.encode([FuzzDouble(.nan), nil, FuzzDouble(1)]))
        ]
    }
}
