import Foundation

/// Finds the `strata` executable that `swift test` builds next to the test bundle (the test
/// target depends on StrataCLI for that reason). `STRATA_CLI=/path/to/strata` overrides.
enum StrataBinary {
    struct NotFound: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "the `strata` executable was not found next to the test bundle; build it with `swift build`, or set STRATA_CLI to its path. Searched: \(searched.joined(separator: ", "))"
        }
    }

    static func url() throws -> URL {
        if let override = ProcessInfo.processInfo.environment["STRATA_CLI"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let directories = candidateDirectories()
        for directory in directories {
            let candidate = directory.appendingPathComponent("strata")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw NotFound(searched: directories.map(\.path))
    }

    /// The build products directory, as seen from the places a test process can learn it.
    private static func candidateDirectories() -> [URL] {
        var directories: [URL] = []
        // Linux: the test binary is `.build/<config>/StrataPackageTests.xctest`, run directly.
        if FileManager.default.fileExists(atPath: "/proc/self/exe") {
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            directories.append(executable.deletingLastPathComponent())
        }
        // macOS: the `.xctest` bundle sits in the products directory; `xctest` loads it.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL)
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        if let first = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        return directories
    }
}
