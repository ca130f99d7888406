// swift-tools-version: 6.1
// Strata's benchmarks: a package of their own, so the library's users never build
// benchmark dependencies. From the repository root:
//   swift run -c release --package-path Benchmarks strata-bench        (the comparison)
//   swift run -c release --package-path Benchmarks strata-records      (typed records)
//   swift run -c release --package-path Benchmarks strata-chart --output chart.svg *.jsonl  (chart of --json results)
// From this directory (the thresholds are read from ./Thresholds):
//   swift package benchmark                                             (microbenchmarks)
//   swift package benchmark thresholds check --metric mallocCountTotal
// See docs/benchmarks.md.
import PackageDescription

let strictSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        // The StrataScale target, run as `strata-scale`.
        .executable(name: "strata-scale", targets: ["StrataScale"])
    ],
    dependencies: [
        // Named, because a path dependency's identity is otherwise its folder's name, which
        // differs between checkouts.
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The MallocInterposer trait alone: it gives the allocation counts on Linux without the
        // runtime interposer package, which is not needed for them.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"])
    ],
    targets: [
        // The peers' C APIs, declared by shim headers and loaded with dlopen at run time, so
        // a missing library skips its engine instead of failing the build
        // (docs/decisions/2026-11-21-benchmark-peers.md).
        .systemLibrary(name: "CSQLitePeer"),
        .systemLibrary(name: "CLMDBPeer"),
        .systemLibrary(name: "CLevelDBPeer"),
        .systemLibrary(name: "CRocksDBPeer"),
        // The one loader of the peers' libraries (PeerLibrary), and SQLite's function table and
        // connection, shared by the executables that measure a peer.
        .target(name: "PeerSupport", dependencies: ["CSQLitePeer"], swiftSettings: strictSettings),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                .product(name: "StrataBenchmarkKit", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "PeerSupport", "CSQLitePeer", "CLMDBPeer", "CLevelDBPeer", "CRocksDBPeer"
            ],
            swiftSettings: strictSettings
        ),
        // Typed records: RecordCollection put and get against the byte API on the same data,
        // against JSON and property-list values, and against SQLite's INSERT/SELECT of the
        // same fields:
        //   swift run -c release --package-path Benchmarks strata-records --num 200000
        .executableTarget(
            name: "strata-records",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataRecords", package: "Strata"),
                .product(name: "StrataBenchmarkKit", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "PeerSupport", "CSQLitePeer"
            ],
            path: "Sources/StrataRecordsBench",
            swiftSettings: strictSettings
        ),
        // Scale: load memory, reopen time, readrandom at N against a small store, and space
        // after overwrite + compact, through Strata's public API, with pass/fail thresholds:
        //   swift run -c release --package-path Benchmarks strata-scale --num 10000000
        .executableTarget(
            name: "StrataScale",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataBenchmarkKit", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            swiftSettings: strictSettings
        ),
        // Suspension latency under load: suspend() while 8 writers run and a full compaction
        // is in progress, and resume(), unchanged and after another Store wrote:
        //   swift run -c release --package-path Benchmarks strata-lifecycle --num 2000000
        .executableTarget(
            name: "strata-lifecycle",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            path: "Sources/StrataLifecycle",
            swiftSettings: strictSettings
        ),
        // The app-facing layer: commit throughput with 100 unrelated observations against
        // none, and checkpoint time:
        //   swift run -c release --package-path Benchmarks strata-app-layer --num 1000000
        .executableTarget(
            name: "strata-app-layer",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            path: "Sources/StrataAppLayer",
            swiftSettings: strictSettings
        ),
        // An SVG chart and a markdown table of strata-bench --json results at several sizes.
        // Foundation alone, so it builds without the peers or the argument parser.
        .executableTarget(name: "strata-chart", swiftSettings: strictSettings),
        // Microbenchmarks of the hot paths, with allocation thresholds in Thresholds/.
        .executableTarget(
            name: "StrataMicro",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataFormat", package: "Strata"),
                .product(name: "Benchmark", package: "benchmark")
            ],
            path: "Benchmarks/StrataMicro",
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
