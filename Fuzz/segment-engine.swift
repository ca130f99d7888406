// Fuzz target `segment-engine`: a segment file as the engine's SegmentTable reads it, and one
// data block or filter block alone (StoreFileFuzzing.segmentEngine, in
// Tests/StrataTests/FuzzRegressionTests.swift).
enum FuzzTarget {
    static func run(_ bytes: [UInt8]) { StoreFileFuzzing.segmentEngine(bytes) }
    static func seeds() throws -> [(String, [UInt8])] { try StoreFileSeeds.segments() }
}
