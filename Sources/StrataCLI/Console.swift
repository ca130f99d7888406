#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Output on the raw file descriptors. The CLI never uses `print`: stdio's buffer would
/// reorder its text against these direct writes, and `ack` lines must leave at once.
enum Console {
    /// Writes one line to stdout immediately.
    static func printOut(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        writeAll(STDOUT_FILENO, bytes)
    }

    /// Writes one line to stderr, folding any line breaks so a message stays on one line.
    static func printError(_ line: String) {
        var bytes = Array(line.utf8).map { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") ? UInt8(ascii: " ") : $0 }
        bytes.append(UInt8(ascii: "\n"))
        writeAll(STDERR_FILENO, bytes)
    }

    /// Writes every byte, retrying short writes and interruptions. Other failures (a closed
    /// pipe, a full disk) end the output silently: there is nowhere left to report them.
    @discardableResult
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}

/// Collects stdout bytes and writes them in large chunks, for commands that print many lines.
struct OutputBuffer {
    private var bytes: [UInt8] = []
    private let chunkSize = 64 * 1024

    init() {
        bytes.reserveCapacity(chunkSize + 1024)
    }

    /// Appends raw bytes (the caller adds any newline), writing out once a chunk is full.
    mutating func append(_ more: some Sequence<UInt8>) throws(CLIError) {
        bytes.append(contentsOf: more)
        if bytes.count >= chunkSize { try flush() }
    }

    mutating func flush() throws(CLIError) {
        guard !bytes.isEmpty else { return }
        defer { bytes.removeAll(keepingCapacity: true) }
        if !Console.writeAll(STDOUT_FILENO, bytes) {
            throw CLIError("cannot write to standard output: \(String(cString: strerror(errno)))")
        }
    }
}
