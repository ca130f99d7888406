// swift-tools-version: 6.1
// Examples of Strata in app-shaped code: a package of their own, so the library's users never
// build them. From the repository root:
//   swift run --package-path Examples metadata-cache [directory]
//   swift run --package-path Examples add-two-dogs [directory]
//   swift run --package-path Examples two-edits [directory]
//   swift run --package-path Examples delete-read-mail [directory]
//   swift run --package-path Examples metadata-cache-io [directory]
//   swift run --package-path Examples notes-app [directory]
//   swift test --package-path Examples
// or all of them at once: scripts/examples
import PackageDescription

let strictSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "StrataExamples",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "metadata-cache", targets: ["MetadataCache"]),
        .executable(name: "add-two-dogs", targets: ["AddTwoDogs"]),
        .executable(name: "two-edits", targets: ["TwoEdits"]),
        .executable(name: "delete-read-mail", targets: ["DeleteReadMail"]),
        .executable(name: "metadata-cache-io", targets: ["MetadataCacheIO"]),
        .executable(name: "notes-app", targets: ["NotesApp"])
    ],
    dependencies: [
        // Named, because a path dependency's identity is otherwise its folder's name, which
        // differs between checkouts.
        .package(name: "Strata", path: "..")
    ],
    targets: [
        // The app-shaped code: a metadata cache over a Strata store, the scene-phase
        // handling around it, and the lifecycle scenario that metadata-cache and the tests
        // run; and the cache's helpers rewritten as StoreIO values, composed into one
        // transaction (MetadataIO.swift, which metadata-cache-io runs).
        .target(
            name: "MetadataCacheKit",
            dependencies: [.product(name: "Strata", package: "Strata")],
            swiftSettings: strictSettings
        ),
        // Each executable runs its scenario once and prints what it saw; it exits non-zero
        // if a check failed.
        .executableTarget(name: "MetadataCache", dependencies: ["MetadataCacheKit"], swiftSettings: strictSettings),
        .executableTarget(name: "MetadataCacheIO", dependencies: ["MetadataCacheKit"], swiftSettings: strictSettings),
        // "Add two dogs in one transaction": functions returning StoreIO, composed and run
        // once (the composition RealmIO users build by hand).
        .target(name: "DogsKit", dependencies: [.product(name: "Strata", package: "Strata")], swiftSettings: strictSettings),
        .executableTarget(name: "AddTwoDogs", dependencies: ["DogsKit"], swiftSettings: strictSettings),
        .testTarget(name: "DogsTests", dependencies: ["DogsKit"], swiftSettings: strictSettings),
        // "Two background edits of the same record": plain saves lose one edit without an
        // error; require(unchanged:) on a key reference turns that into a conflict to retry.
        .target(name: "TwoEditsKit", dependencies: [.product(name: "Strata", package: "Strata")], swiftSettings: strictSettings),
        .executableTarget(name: "TwoEdits", dependencies: ["TwoEditsKit"], swiftSettings: strictSettings),
        .testTarget(name: "TwoEditsTests", dependencies: ["TwoEditsKit"], swiftSettings: strictSettings),
        // "Delete read emails in the background": the UI hands a query reference to the
        // deletion, which runs the query again when it runs.
        .target(name: "MailKit", dependencies: [.product(name: "Strata", package: "Strata")], swiftSettings: strictSettings),
        .executableTarget(name: "DeleteReadMail", dependencies: ["MailKit"], swiftSettings: strictSettings),
        .testTarget(name: "MailTests", dependencies: ["MailKit"], swiftSettings: strictSettings),
        // A notes app's model on the records layer: typed notes, an index by folder newest
        // first, a unique slug, a migration at open, an observed folder that follows another
        // task's writes, and a backup by checkpoint.
        .target(
            name: "NotesKit",
            dependencies: [.product(name: "Strata", package: "Strata"), .product(name: "StrataRecords", package: "Strata")],
            swiftSettings: strictSettings
        ),
        .executableTarget(name: "NotesApp", dependencies: ["NotesKit"], swiftSettings: strictSettings),
        .testTarget(name: "NotesTests", dependencies: ["NotesKit"], swiftSettings: strictSettings),
        .testTarget(
            name: "MetadataCacheTests",
            dependencies: ["MetadataCacheKit", .product(name: "Strata", package: "Strata")],
            swiftSettings: strictSettings
        )
    ]
)
