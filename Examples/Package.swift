// swift-tools-version: 6.1
// Examples of Strata in app-shaped code: a package of their own, so the library's users never
// build them. From the repository root:
//   swift run --package-path Examples metadata-cache [directory]
//   swift run --package-path Examples add-two-dogs [directory]
//   swift test --package-path Examples
// or both at once: scripts/examples
import PackageDescription

let strictSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "StrataExamples",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "metadata-cache", targets: ["MetadataCache"]),
        .executable(name: "add-two-dogs", targets: ["AddTwoDogs"])
    ],
    dependencies: [
        // Named, because a path dependency's identity is otherwise its folder's name, which
        // differs between checkouts.
        .package(name: "Strata", path: "..")
    ],
    targets: [
        // The app-shaped code: a metadata cache over a Strata store, the scene-phase
        // handling around it, and the lifecycle scenario both targets below run.
        .target(
            name: "MetadataCacheKit",
            dependencies: [.product(name: "Strata", package: "Strata")],
            swiftSettings: strictSettings
        ),
        // Runs the scenario once and prints what it saw; exits non-zero if a check failed.
        .executableTarget(name: "MetadataCache", dependencies: ["MetadataCacheKit"], swiftSettings: strictSettings),
        // "Add two dogs in one transaction": functions returning StoreIO, composed and run
        // once (the composition RealmIO users build by hand).
        .target(name: "DogsKit", dependencies: [.product(name: "Strata", package: "Strata")], swiftSettings: strictSettings),
        .executableTarget(name: "AddTwoDogs", dependencies: ["DogsKit"], swiftSettings: strictSettings),
        .testTarget(name: "DogsTests", dependencies: ["DogsKit"], swiftSettings: strictSettings),
        .testTarget(
            name: "MetadataCacheTests",
            dependencies: ["MetadataCacheKit", .product(name: "Strata", package: "Strata")],
            swiftSettings: strictSettings
        )
    ]
)
