// Fuzz target `segment-verifier`: a segment file as the verifier's strict reader checks it,
// and one block alone (StoreFileFuzzing.segmentVerifier, in
// Tests/StrataTests/FuzzRegressionTests.swift).
enum FuzzTarget {
    static func run(_ bytes: [UInt8]) { StoreFileFuzzing.segmentVerifier(bytes) }
    static func seeds() throws -> [(String, [UInt8])] { try StoreFileSeeds.segments() }
}
