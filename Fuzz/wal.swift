// Fuzz target `wal`: a WAL segment as recovery and the verifier read it, and one record's
// batch payload (StoreFileFuzzing.wal, in Tests/StrataTests/FuzzRegressionTests.swift).
enum FuzzTarget {
    static func run(_ bytes: [UInt8]) { StoreFileFuzzing.wal(bytes) }
    static func seeds() throws -> [(String, [UInt8])] { StoreFileSeeds.wal() }
}
