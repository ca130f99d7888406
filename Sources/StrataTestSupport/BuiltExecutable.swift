import Foundation

/// Finds an executable that `swift test` builds next to the test bundle (a test target that
/// spawns it depends on its target for that reason). An environment variable can name another
/// path instead.
public enum BuiltExecutable {
    public struct NotFound: Error, CustomStringConvertible {
        public var name: String
        public var overrideVariable: String
        public var searched: [String]
        public var description: String {
            "the `\(name)` executable was not found next to the test bundle; build it with `swift build`, or set \(overrideVariable) to its path. Searched: \(searched.joined(separator: ", "))"
        }
    }

    /// The executable `name`, or the path in the environment variable `overrideVariable`.
    public static func url(named name: String, overrideVariable: String) throws -> URL {
        if let override = ProcessInfo.processInfo.environment[overrideVariable], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let directories = candidateDirectories()
        for directory in directories {
            let candidate = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
        }
        throw NotFound(name: name, overrideVariable: overrideVariable, searched: directories.map(\.path))
    }

    /// The build products directory, as seen from the places a test process can learn it.
    private static func candidateDirectories() -> [URL] {
        var directories: [URL] = []
        // Linux: the test binary is `<scratch>/<config>/StrataPackageTests.xctest`, run directly.
        if FileManager.default.fileExists(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        }
        #if canImport(Darwin)
            // macOS: the `.xctest` bundle sits in the products directory; `xctest` loads it.
            // (Not on Linux, where it is not needed and Foundation keeps the list of every
            // bundle in memory it never frees, which `scripts/asan` would report as leaked.)
            for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
                directories.append(bundle.bundleURL.deletingLastPathComponent())
            }
        #endif
        directories.append(Bundle.main.bundleURL)
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        if let first = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        return directories
    }
}
