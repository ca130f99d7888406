import Foundation
import StrataTestSupport

/// The `strata-fsck` executable that `swift test` builds next to the test bundle (the test
/// target depends on StrataFsck for that reason). `STRATA_FSCK=/path/to/strata-fsck` overrides.
enum FsckBinary {
    static func url() throws -> URL {
        try BuiltExecutable.url(named: "strata-fsck", overrideVariable: "STRATA_FSCK")
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
    let directory = try TemporaryDirectory(label: "verifier-tests")
    defer { directory.remove() }
    let stdoutPath = directory.path("stdout")
    let stderrPath = directory.path("stderr")
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
    // Returns at once now; without it Foundation never releases the process it started.
    process.waitUntilExit()
    try stdout.close()
    try stderr.close()
    return FsckResult(
        status: process.terminationStatus,
        output: String(decoding: try fileBytes(atPath: stdoutPath), as: UTF8.self),
        errorText: String(decoding: try fileBytes(atPath: stderrPath), as: UTF8.self))
}

struct FsckTimeout: Error, CustomStringConvertible {
    var arguments: [String]
    var description: String { "strata-fsck \(arguments.joined(separator: " ")) did not finish within a minute; it was stopped" }
}
