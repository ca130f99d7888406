import Foundation

/// Finds the `strata-fsck` executable that `swift test` builds next to the test bundle (the
/// test target depends on StrataFsck for that reason). `STRATA_FSCK=/path/to/strata-fsck`
/// overrides.
enum FsckBinary {
    struct NotFound: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "the `strata-fsck` executable was not found next to the test bundle; build it with `swift build`, or set STRATA_FSCK to its path. Searched: \(searched.joined(separator: ", "))"
        }
    }

    static func url() throws -> URL {
        if let override = ProcessInfo.processInfo.environment["STRATA_FSCK"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let directories = candidateDirectories()
        for directory in directories {
            let candidate = directory.appendingPathComponent("strata-fsck")
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
        // Linux: the test binary is `<scratch>/<config>/StrataPackageTests.xctest`, run directly.
        if FileManager.default.fileExists(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
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

/// What a finished `strata-fsck` run left behind.
struct FsckResult: CustomStringConvertible {
    var status: Int32
    var output: String
    var errorText: String

    var description: String { "status \(status), stdout: \(output.debugDescription), stderr: \(errorText.debugDescription)" }
}

/// Runs `strata-fsck <arguments>` to completion. Output goes to files rather than pipes, so
/// a large report can never fill a pipe and block the child while the test waits for it.
/// Waits by polling rather than `waitUntilExit`, so no thread of Swift concurrency's small
/// pool blocks; a run that hangs is killed after a minute.
func fsck(_ arguments: String...) async throws -> FsckResult {
    let directory = try TestDirectory()
    defer { directory.remove() }
    let stdoutPath = directory.path("stdout"), stderrPath = directory.path("stderr")
    try Data().write(to: URL(fileURLWithPath: stdoutPath))
    try Data().write(to: URL(fileURLWithPath: stderrPath))
    let stdout = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
    let stderr = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
    let process = Process()
    process.executableURL = try FsckBinary.url()
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let deadline = ContinuousClock.now + .seconds(60)
    while process.isRunning {
        if ContinuousClock.now >= deadline {
            process.terminate()
            throw FsckTimeout(arguments: arguments)
        }
        try await Task.sleep(for: .milliseconds(2))
    }
    try stdout.close()
    try stderr.close()
    return FsckResult(status: process.terminationStatus,
                      output: try String(contentsOfFile: stdoutPath, encoding: .utf8),
                      errorText: try String(contentsOfFile: stderrPath, encoding: .utf8))
}

struct FsckTimeout: Error, CustomStringConvertible {
    var arguments: [String]
    var description: String { "strata-fsck \(arguments.joined(separator: " ")) did not finish within a minute; it was stopped" }
}
