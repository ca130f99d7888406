import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The child's record of what it meant to commit and what was acknowledged: an intent line
/// before each transaction, an ack line after its commit returned. Each line is one `write`
/// to a file opened for appending, so it reaches the kernel, and survives a SIGKILL, before
/// the thread goes on; the supervisor reads the file after the child ends.
///
///     I <writer> <txid> <slot>=P|D ...     before the transaction
///     A <writer> <txid>                    after its commit returned
final class Journal: Sendable {
    private let descriptor: Mutex<Int32>

    init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { throw SoakViolation("cannot open the journal \(path): errno \(errno)") }
        descriptor = Mutex(fd)
    }

    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        descriptor.withLock { fd in
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
                if n <= 0 { fatalError("strata-soak: cannot write the journal: errno \(errno)") }
                written += n
            }
        }
    }

    deinit {
        descriptor.withLock { _ = close($0) }
    }
}

/// One transaction as the journal records it.
struct JournalEntry {
    var writer: Int
    var txid: UInt64
    /// Slot and whether the transaction puts (true) or deletes (false) it.
    var writes: [(slot: Int, put: Bool)]
    var acknowledged = false
}

extension Journal {
    /// The intents of `path` in order, each marked acknowledged when its ack line is there.
    static func read(_ path: String) throws -> [JournalEntry] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var text = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n == 0 { break }
            text.append(contentsOf: buffer[0..<n])
        }
        var entries: [JournalEntry] = []
        var index: [UInt64: Int] = [:]
        // A kill can cut the last line short: only whole lines count.
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let fields = line.split(separator: " ")
            guard fields.count >= 3, let writer = Int(fields[1]), let txid = UInt64(fields[2]) else {
                throw SoakViolation("journal line is malformed: \(line)")
            }
            if fields[0] == "I" {
                let writes = try fields.dropFirst(3).map { field -> (slot: Int, put: Bool) in
                    let parts = field.split(separator: "=")
                    guard parts.count == 2, let slot = Int(parts[0]) else { throw SoakViolation("journal intent is malformed: \(line)") }
                    return (slot, parts[1] == "P")
                }
                index[txid] = entries.count
                entries.append(JournalEntry(writer: writer, txid: txid, writes: writes))
            } else if fields[0] == "A", let i = index[txid] {
                entries[i].acknowledged = true
            } else {
                throw SoakViolation("journal acknowledges a transaction it never announced: \(line)")
            }
        }
        return entries
    }
}
