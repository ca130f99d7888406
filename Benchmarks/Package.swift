// swift-tools-version: 6.1
// Strata's benchmarks: a package of their own, so the library's users never build
// benchmark dependencies. Run from the repository root:
//   swift run -c release --package-path Benchmarks strata-bench
import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, because a path dependency's identity is otherwise its folder's name, which
        // differs between checkouts.
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
