// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    // Extra invariant checks (see STRATA_INTERNAL_CHECKS in the sources) are compiled into
    // debug builds only; release builds keep just the cheap preconditions.
    .define("STRATA_INTERNAL_CHECKS", .when(configuration: .debug))
]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        // The file-system seam: `StoreOptions.fileSystem` takes a `FileSystem`, and
        // `StoreError.underlying` is an `IOError`, so users can import the module that
        // declares them.
        .library(name: "StrataIO", targets: ["StrataIO"]),
        .executable(name: "strata", targets: ["StrataCLI"]),
        // For the benchmark package (Benchmarks/): the workloads and Strata's adapter, and the
        // format encoders its microbenchmarks time.
        .library(name: "StrataBenchmarkKit", targets: ["StrataBenchmarkKit"]),
        .library(name: "StrataFormat", targets: ["StrataFormat"]),
        // Typed records: Codable collections, indexes, migrations, and the order-preserving
        // key encoding (docs/format/records.md, docs/format/keys.md).
        .library(name: "StrataRecords", targets: ["StrataRecords"]),
        // Offline checking of a store directory, as a library, and its command-line wrapper.
        .library(name: "StrataVerifier", targets: ["StrataVerifier"]),
        .executable(name: "strata-fsck", targets: ["StrataFsck"]),
        // Regenerates the damaged-store fixtures: `swift run strata-fixtures Fixtures/stores`.
        .executable(name: "strata-fixtures", targets: ["StrataFixtures"]),
        .executable(name: "strata-soak", targets: ["StrataSoak"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0")
    ],
    targets: [
        // zlib, reached through the system library: block compression, and the checksum's
        // portable path.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // The little Strata says in C: CRC32 (zlib's function) by a carry-less-multiply fold
        // where the processor has one (docs/decisions/2026-11-21-checksum.md), and cache
        // prefetch hints.
        .target(name: "CStrata", dependencies: ["CZlib"]),
        // Pure encode/decode of every on-disk structure. No I/O.
        .target(name: "StrataFormat", dependencies: ["CZlib", "CStrata"], swiftSettings: strictSettings),
        // The one seam through which every byte of I/O goes.
        .target(name: "StrataIO", dependencies: ["CStrata"], swiftSettings: strictSettings),
        // The engine and its public API.
        .target(
            name: "Strata",
            dependencies: ["StrataFormat", "StrataIO", "CStrata", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // Not shipped: simulated file system with crash states, reference model, seeded randomness.
        .target(
            name: "StrataTestSupport", dependencies: ["Strata", "StrataIO", "StrataFormat", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings),
        // The standard workloads, their checks and Strata's adapter; engine-independent, so the
        // test suite runs them small and the benchmark package adds the peers.
        .target(name: "StrataBenchmarkKit", dependencies: ["Strata"], swiftSettings: strictSettings),
        .executableTarget(
            name: "StrataCLI",
            dependencies: ["Strata", "StrataRecords", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSettings
        ),
        // Checks a closed store's files against each other; reads through StrataIO only, so it
        // never depends on the engine it checks.
        .target(name: "StrataVerifier", dependencies: ["StrataFormat", "StrataIO"], swiftSettings: strictSettings),
        .executableTarget(
            name: "StrataFsck",
            // Strata for --salvage, which opens the store with the engine's own salvage.
            dependencies: [
                "Strata", "StrataVerifier", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: strictSettings
        ),
        // Not shipped: writes the small, byte-for-byte reproducible stores under Fixtures/stores.
        .target(name: "StrataFixtureKit", dependencies: ["StrataFormat", "StrataIO"], swiftSettings: strictSettings),
        .executableTarget(name: "StrataFixtures", dependencies: ["StrataFixtureKit"], swiftSettings: strictSettings),
        // Not shipped: the soak (`scripts/soak MINUTES`), a supervisor that runs, kills and
        // checks child processes of itself.
        .executableTarget(
            name: "StrataSoak",
            dependencies: [
                "Strata", "StrataVerifier", "StrataTestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            swiftSettings: strictSettings
        ),
        // Typed records over the byte-key store: the order-preserving key encoding, Codable
        // record collections with secondary indexes, migrations. Built on Strata's public
        // API alone, so apps that want bytes do not pay for it.
        .target(name: "StrataRecords", dependencies: ["Strata"], swiftSettings: strictSettings),
        .testTarget(name: "StrataFormatTests", dependencies: ["StrataFormat"], swiftSettings: strictSettings),
        .testTarget(
            name: "StrataTests",
            dependencies: ["Strata", "StrataIO", "StrataFormat", "StrataTestSupport", "StrataBenchmarkKit", "StrataVerifier"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataCLITests",
            // Depending on the executables makes `swift test` build the `strata` and
            // `strata-fsck` binaries the tests spawn.
            dependencies: ["Strata", "StrataIO", "StrataTestSupport", "StrataCLI", "StrataFsck"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataVerifierTests",
            // Depending on StrataFsck makes `swift test` build the `strata-fsck` binary the
            // tests spawn.
            dependencies: ["StrataVerifier", "StrataFormat", "StrataIO", "StrataFixtureKit", "StrataFsck", "StrataTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataRecordsTests", dependencies: ["StrataRecords", "Strata", "StrataIO", "StrataTestSupport"],
            swiftSettings: strictSettings)
    ]
)
