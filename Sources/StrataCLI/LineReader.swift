#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Reads lines from a file descriptor as raw bytes. It returns each line as soon as its
/// newline arrives, so `import` can commit and acknowledge while its input is still being
/// written.
struct LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var start = 0
    private var atEnd = false

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line without its line break (`\n` or `\r\n`), or nil at the end of input. A
    /// last line without a newline is still returned.
    mutating func next() throws(CLIError) -> [UInt8]? {
        var searchFrom = start
        while true {
            if let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = Array(buffer[start..<end])
                start = newline + 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return line
            }
            // Drop consumed bytes before reading more, so the buffer holds at most one
            // partial line plus one read.
            if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            searchFrom = buffer.count
            try fill()
        }
    }

    private mutating func fill() throws(CLIError) {
        let chunk = 64 * 1024
        let oldCount = buffer.count
        buffer.append(contentsOf: [UInt8](repeating: 0, count: chunk))
        var count = 0
        while true {
            count = buffer.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress! + oldCount, chunk)
            }
            if count < 0 && errno == EINTR { continue }
            break
        }
        if count < 0 {
            let reason = String(cString: strerror(errno))
            buffer.removeSubrange(oldCount...)
            throw CLIError("cannot read standard input: \(reason)")
        }
        buffer.removeSubrange((oldCount + count)...)
        if count == 0 { atEnd = true }
    }
}
