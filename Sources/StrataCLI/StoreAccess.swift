import ArgumentParser
import Foundation
import Strata

/// Options for opening the store, shared by every subcommand.
struct StoreOpeningOptions: ParsableArguments {
    @Option(help: "Size of each WAL segment file this run creates, in bytes (at least 65536; default 64 MiB). Smaller segments open faster.")
    var walSegmentBytes: Int?

    @Option(help: "Flush the memtable to a segment file once it holds this many bytes (at least 65536; default 16 MiB).")
    var memtableBytes: Int?

    func validate() throws {
        if let walSegmentBytes, walSegmentBytes < 64 * 1024 {
            throw ValidationError("--wal-segment-bytes must be at least 65536.")
        }
        if let memtableBytes, memtableBytes < 64 * 1024 {
            throw ValidationError("--memtable-bytes must be at least 65536.")
        }
    }

    var storeOptions: StoreOptions {
        var options = StoreOptions()
        if let walSegmentBytes { options.walSegmentBytes = walSegmentBytes }
        if let memtableBytes { options.memtableBytes = memtableBytes }
        return options
    }
}

/// Opens the store at `path`, runs `body`, and closes the store whether `body` succeeds or
/// throws. A failing close is reported when `body` succeeded. Commands that only read pass
/// `create: false`, so a mistyped path is an error rather than a new, empty store.
func withStore<T>(_ path: String, _ opening: StoreOpeningOptions, create: Bool = true, _ body: (Store) throws -> T) throws -> T {
    var options = opening.storeOptions
    options.createIfMissing = create
    let store: Store
    do {
        store = try Store(path: path, options: options)
    } catch let error as StoreError where !create && error.code == .notAStore && !FileManager.default.fileExists(atPath: path) {
        // The library's message names its option; the tool's user never set one.
        throw CLIError("there is no store at \(path); put, delete and import create one")
    }
    let result: T
    do {
        result = try body(store)
    } catch {
        try? store.close()
        throw error
    }
    try store.close()
    return result
}

/// The `--durability` choices.
enum DurabilityOption: String, CaseIterable, ExpressibleByArgument {
    case synced
    case buffered

    var durability: Durability {
        switch self {
        case .synced: .synced
        case .buffered: .buffered
        }
    }
}
