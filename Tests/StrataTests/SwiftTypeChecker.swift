// Type-checks Swift source against the modules this test binary was built with: the snippet
// test compiles the documentation's code with it, and StoreIOTests checks that misuse of the
// access types does not compile.
import Dispatch
import Foundation

#if canImport(Darwin)
    import Darwin
#endif

struct SwiftTypeChecker: Sendable {
    /// What `swiftc -typecheck` said.
    struct Result: Sendable {
        var succeeded: Bool
        var output: String
    }

    /// A source file to check, by name (`main.swift` makes top-level code).
    struct File: Sendable {
        var name: String
        var contents: String
    }

    /// The package's root directory.
    let repository: URL
    /// The build directory of this test binary (`.build/<triple>/debug` or the like).
    let products: URL
    /// Where the Swift modules are: `products/Modules`, or `products` itself in older layouts.
    let modules: URL
    /// The compiler; `STRATA_SWIFTC` overrides the `swiftc` found on the path.
    let compiler: [String]

    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        // Tests/StrataTests/SwiftTypeChecker.swift -> the package root.
        repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // The binary holding this code lies in the build directory (on macOS, inside the
        // .xctest bundle there), wherever the scratch path is; the modules are beside it.
        let image = try Self.imagePath()
        var directory = image.deletingLastPathComponent()
        var found: (products: URL, modules: URL)? = nil
        while directory.path != "/" && found == nil {
            if Self.exists(directory.appendingPathComponent("Modules/Strata.swiftmodule")) {
                found = (directory, directory.appendingPathComponent("Modules"))
            } else if Self.exists(directory.appendingPathComponent("Strata.swiftmodule")) {
                found = (directory, directory)
            }
            directory = directory.deletingLastPathComponent()
        }
        guard let found else {
            throw SetupError(description: "no Strata.swiftmodule in a directory above the test binary \(image.path); build with swift build --build-tests")
        }
        products = found.products
        modules = found.modules
        if let override = ProcessInfo.processInfo.environment["STRATA_SWIFTC"], !override.isEmpty {
            compiler = [override]
        } else {
            compiler = ["/usr/bin/env", "swiftc"]
        }
    }

    /// The file of the executable or library that holds this code: on Linux the test
    /// executable itself; on macOS the bundle's binary, which a helper process loads.
    private static func imagePath() throws -> URL {
        #if canImport(Darwin)
            var info = Dl_info()
            guard dladdr(#dsohandle, &info) != 0, let name = info.dli_fname else {
                throw SetupError(description: "dladdr could not name the test binary")
            }
            return URL(fileURLWithPath: String(cString: name)).resolvingSymlinksInPath()
        #else
            return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #endif
    }

    private static func exists(_ url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.path)
    }

    /// The clang module maps the Swift modules need: those SwiftPM generates for C targets,
    /// and the package's own (system libraries, C targets with a custom map).
    var moduleMaps: [URL] {
        var maps: [URL] = []
        let manager = FileManager.default
        for entry in (try? manager.contentsOfDirectory(atPath: products.path)) ?? [] where entry.hasSuffix(".build") {
            let map = products.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if Self.exists(map) { maps.append(map) }
        }
        let sources = repository.appendingPathComponent("Sources")
        for target in (try? manager.contentsOfDirectory(atPath: sources.path)) ?? [] {
            for relative in ["module.modulemap", "include/module.modulemap"] {
                let map = sources.appendingPathComponent(target).appendingPathComponent(relative)
                if Self.exists(map) { maps.append(map) }
            }
        }
        return maps.sorted { $0.path < $1.path }
    }

    /// Runs `body` with a new directory for one check's files, removed afterwards.
    func withScratchDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-typecheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// Type-checks `files`, written into `directory`, as one module in Swift 6 mode; modules
    /// emitted into `directory` can be imported. A warning fails the check too (it is
    /// reported as a warning, so that an expected error can be told from it). `library`
    /// parses the files as a library's (no top-level code unless a file is `main.swift`).
    func check(_ files: [File], library: Bool, in directory: URL) async throws -> Result {
        var arguments = try compilerArguments(files, in: directory) + ["-typecheck", "-module-name", "Snippet"]
        if library { arguments.append("-parse-as-library") }
        return try await Self.run(arguments, in: directory)
    }

    /// Compiles `files` into the module `name` in `directory`, built for testing so that
    /// `@testable import` sees its internal declarations.
    func emitModule(_ name: String, from files: [File], in directory: URL) async throws -> Result {
        let arguments =
            try compilerArguments(files, in: directory) + [
                "-emit-module", "-parse-as-library", "-enable-testing", "-module-name", name,
                "-emit-module-path", directory.appendingPathComponent(name + ".swiftmodule").path
            ]
        return try await Self.run(arguments, in: directory)
    }

    /// Type-checks `files` in a scratch directory of their own.
    func check(_ files: [File], library: Bool) async throws -> Result {
        try await withScratchDirectory { directory in try await check(files, library: library, in: directory) }
    }

    /// One source file, as a library.
    func check(_ source: String) async throws -> Result {
        try await check([File(name: "snippet.swift", contents: source)], library: true)
    }

    /// The compiler and what every compilation here takes: Swift 6 mode, the built modules
    /// and those in `directory`, the C module maps; then the files, written into `directory`.
    private func compilerArguments(_ files: [File], in directory: URL) throws -> [String] {
        var arguments =
            compiler + [
                "-swift-version", "6", "-diagnostic-style", "llvm", "-I", modules.path, "-I", directory.path,
                // One cache for every check: the system's clang modules are built once.
                "-module-cache-path", products.appendingPathComponent("typecheck-module-cache").path
            ]
        for map in moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=" + map.path] }
        for file in files {
            let url = directory.appendingPathComponent(file.name)
            try file.contents.write(to: url, atomically: true, encoding: .utf8)
            arguments.append(url.path)
        }
        return arguments
    }

    /// Runs the compiler on a thread of its own: waiting for it must not hold one of Swift
    /// concurrency's few cooperative threads.
    private static func run(_ arguments: [String], in directory: URL) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: arguments[0])
                    process.arguments = Array(arguments.dropFirst())
                    process.currentDirectoryURL = directory
                    let pipe = Pipe()
                    process.standardOutput = pipe
                    process.standardError = pipe
                    try process.run()
                    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    process.waitUntilExit()
                    let clean = process.terminationReason == .exit && process.terminationStatus == 0 && !output.contains("warning:")
                    continuation.resume(returning: Result(succeeded: clean, output: output))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
