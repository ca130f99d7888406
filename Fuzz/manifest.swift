// Fuzz target `manifest`: a manifest as the store loads it and the verifier replays it, and
// one record's version edit (StoreFileFuzzing.manifest, in
// Tests/StrataTests/FuzzRegressionTests.swift).
enum FuzzTarget {
    static func run(_ bytes: [UInt8]) { StoreFileFuzzing.manifest(bytes) }
    static func seeds() throws -> [(String, [UInt8])] { StoreFileSeeds.manifest() }
}
