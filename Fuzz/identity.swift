// Fuzz target `identity`: the STRATA identity file, and store file names
// (StoreFileFuzzing.identity, in Tests/StrataTests/FuzzRegressionTests.swift).
enum FuzzTarget {
    static func run(_ bytes: [UInt8]) { StoreFileFuzzing.identity(bytes) }
    static func seeds() throws -> [(String, [UInt8])] { StoreFileSeeds.identity() }
}
