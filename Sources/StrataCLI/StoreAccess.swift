import ArgumentParser
import Foundation
import Strata

/// Options for opening the store, shared by the subcommands that write. The commands that
/// only read take none: they open the store read-only, as it is.
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

/// Opens the store at `path` for writing, runs `body`, and closes the store whether `body`
/// succeeds or throws. `create: false` (compact) refuses a path with no store rather than
/// making an empty one there.
func withStore<T>(_ path: String, _ opening: StoreOpeningOptions, create: Bool = true, _ body: (Store) throws -> T) throws -> T {
    // The library's createIfMissing is about the directory: a store that writes would still
    // make one in an empty directory.
    if !create && isNothing(path) { throw noStore(path) }
    var options = opening.storeOptions
    options.createIfMissing = create
    return try run(body, on: try open(path, options))
}

/// Opens the store at `path` read-only (`StoreOptions.readOnly`), runs `body`, and closes the
/// store. Nothing in the directory is created or changed, so this works on read-only media,
/// and beside a process that has the store open for writing.
func withStoreForReading<T>(_ path: String, _ body: (Store) throws -> T) throws -> T {
    var options = StoreOptions()
    options.readOnly = true
    return try run(body, on: try open(path, options))
}

/// The store, or the tool's own message when there is none at `path`: the library's names
/// options (`createIfMissing`, `readOnly`) the tool's user never set.
private func open(_ path: String, _ options: StoreOptions) throws -> Store {
    do {
        return try Store(path: path, options: options)
    } catch let error as StoreError where error.code == .notAStore && isNothing(path) {
        throw noStore(path)
    }
}

private func noStore(_ path: String) -> CLIError {
    CLIError("there is no store at \(path); `strata put` or `strata import` creates one")
}

/// A missing path, or an empty directory. (An empty path is the library's to refuse.)
private func isNothing(_ path: String) -> Bool {
    guard !path.isEmpty else { return false }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return true }
    return isDirectory.boolValue && (try? FileManager.default.contentsOfDirectory(atPath: path).isEmpty) == true
}

/// Runs `body` and closes `store` whether it succeeds or throws. A failing close is reported
/// when `body` succeeded.
private func run<T>(_ body: (Store) throws -> T, on store: Store) throws -> T {
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
