import Foundation
import Strata
import Synchronization

import class StrataIO.Locked

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a finished `strata` run left behind.
struct CLIResult: Sendable, CustomStringConvertible {
    var status: Int32
    /// True when the process ended on a signal rather than exiting.
    var signaled: Bool
    var stdout: [UInt8]
    var stderr: [UInt8]

    var output: String { String(decoding: stdout, as: UTF8.self) }
    var errorText: String { String(decoding: stderr, as: UTF8.self) }
    /// Stdout's lines, blank ones included; a final newline does not start another line.
    var outputLines: [String] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
    var errorLines: [String] { errorText.split(separator: "\n").map(String.init) }

    var description: String {
        "status \(status)\(signaled ? " (signal)" : ""), stdout: \(output.prefix(2000).debugDescription), stderr: \(errorText.prefix(2000).debugDescription)"
    }
}

/// Child processes must not kill the test process with SIGPIPE when they exit before
/// reading all their input; writes then fail with EPIPE instead.
private let ignoreSIGPIPE: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
}()

/// Reads a pipe on its own thread until end of file. Blocking reads stay off Swift
/// concurrency's small cooperative pool.
final class PipeReader: Sendable {
    private let collected = Locked<(bytes: [UInt8], finished: Bool)>(([], false))

    /// `onBytes` sees each chunk as it arrives, on the reader's thread.
    init(_ handle: FileHandle, onBytes: (@Sendable ([UInt8]) -> Void)? = nil) {
        Thread.detachNewThread {
            // The handle owns the descriptor: keep it open until end of file.
            withExtendedLifetime(handle) {
                let descriptor = handle.fileDescriptor
                var chunk = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    let bytes = Array(chunk[0..<count])
                    self.collected.withLock { $0.bytes.append(contentsOf: bytes) }
                    onBytes?(bytes)
                }
            }
            self.collected.withLock { $0.finished = true }
        }
    }

    var isFinished: Bool { collected.withLock { $0.finished } }
    var bytes: [UInt8] { collected.withLock { $0.bytes } }
}

/// Writes bytes to a pipe on its own thread, then closes it. A reader that went away (EPIPE)
/// ends the writing quietly.
enum PipeWriter {
    /// Writes `next()`'s chunks until it returns nil, a write fails, or `stop` is set.
    static func start(_ handle: FileHandle, stop: Stop? = nil, next: @escaping @Sendable () -> [UInt8]?) {
        _ = ignoreSIGPIPE
        Thread.detachNewThread {
            let descriptor = handle.fileDescriptor
            writing: while stop?.isSet != true, let chunk = next() {
                var offset = 0
                while offset < chunk.count {
                    let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                    if written < 0 {
                        if errno == EINTR { continue }
                        break writing
                    }
                    offset += written
                }
            }
            try? handle.close()
        }
    }

    static func start(_ handle: FileHandle, bytes: [UInt8]) {
        let remaining = Locked<[UInt8]?>(bytes)
        start(handle) {
            remaining.withLock { value in
                defer { value = nil }
                return value
            }
        }
    }

    final class Stop: Sendable {
        private let flag = Locked(false)
        var isSet: Bool { flag.withLock { $0 } }
        func set() { flag.withLock { $0 = true } }
    }
}

/// Polls `condition` every millisecond until it holds or `timeout` passes; returns whether
/// it held. Polling keeps waits cancellable and off blocking calls.
func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

struct ProcessTimeout: Error, CustomStringConvertible {
    var program = "strata"
    var arguments: [String]
    var description: String { "\(program) \(arguments.joined(separator: " ")) did not finish in time; it was killed" }
}

/// Segment size every test run of the CLI uses. Opening a store reads its last WAL segment
/// whole, and a debug build takes seconds over the default 64 MiB; 64 KiB keeps each open
/// quick (and makes the log roll over to new segments often).
let testSegmentBytes = 65536

/// Options for opening, in the test process, a store the CLI made.
var testStoreOptions: StoreOptions {
    var options = StoreOptions()
    options.walSegmentBytes = testSegmentBytes
    return options
}

/// A running `strata` (or other) child process with piped stdin, stdout and stderr.
final class StrataProcess: Sendable {
    let process: Process
    let stdin: FileHandle
    let stdoutReader: PipeReader
    let stderrReader: PipeReader
    let program: String
    let arguments: [String]

    /// The subcommands that open the store for writing, and so take `--wal-segment-bytes`;
    /// the others open it read-only and take no opening options.
    static let writingCommands: Set<String> = ["put", "delete", "import", "compact", "demo", "lifecycle-writer"]

    /// Starts `strata <arguments>`, adding `--wal-segment-bytes` when the arguments name a
    /// subcommand that writes and a store. `onStdout` sees each stdout chunk as it arrives.
    convenience init(_ arguments: [String], onStdout: (@Sendable ([UInt8]) -> Void)? = nil) throws {
        let writes = arguments.count >= 2 && StrataProcess.writingCommands.contains(arguments[0])
        let arguments = writes ? arguments + ["--wal-segment-bytes", String(testSegmentBytes)] : arguments
        try self.init(executable: try StrataBinary.url(), arguments: arguments, onStdout: onStdout)
    }

    /// Starts `executable <arguments>` as they are.
    init(executable: URL, arguments: [String], onStdout: (@Sendable ([UInt8]) -> Void)? = nil) throws {
        _ = ignoreSIGPIPE
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        self.process = process
        self.program = executable.lastPathComponent
        self.arguments = arguments
        self.stdin = input.fileHandleForWriting
        self.stdoutReader = PipeReader(output.fileHandleForReading, onBytes: onStdout)
        self.stderrReader = PipeReader(errors.fileHandleForReading)
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Waits for the process to end and its output to drain.
    func finish(timeout: Duration = .seconds(60)) async throws -> CLIResult {
        let done = await waitUntil(timeout: timeout) {
            !process.isRunning && stdoutReader.isFinished && stderrReader.isFinished
        }
        if !done {
            kill(pid, SIGKILL)
            throw ProcessTimeout(program: program, arguments: arguments)
        }
        // Returns at once, the process having ended. Foundation releases a process it started
        // (and the pipes it holds) only once `waitUntilExit` has seen it end; polling
        // `isRunning` alone keeps them in memory for good, which `scripts/asan` reports.
        process.waitUntilExit()
        return CLIResult(
            status: process.terminationStatus,
            signaled: process.terminationReason == .uncaughtSignal,
            stdout: stdoutReader.bytes, stderr: stderrReader.bytes)
    }
}

/// Runs `strata <arguments>` to completion with `input` on its stdin.
func strata(_ arguments: String..., input: [UInt8] = []) async throws -> CLIResult {
    try await strata(arguments, input: input)
}

func strata(_ arguments: [String], input: [UInt8] = []) async throws -> CLIResult {
    let child = try StrataProcess(arguments)
    PipeWriter.start(child.stdin, bytes: input)
    return try await child.finish()
}

/// Runs `strata-fsck <arguments>` to completion.
func strataFsck(_ arguments: String...) async throws -> CLIResult {
    let child = try StrataProcess(executable: try StrataFsckBinary.url(), arguments: arguments)
    try child.stdin.close()
    return try await child.finish()
}
