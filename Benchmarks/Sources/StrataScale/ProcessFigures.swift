// What the scale run reads about the process and the disk: resident memory from
// /proc/self/status (Linux; nil elsewhere), the bytes of a store's directory, and a clock.
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum ProcessMemory {
    /// VmRSS and VmHWM in bytes, or nil when /proc/self/status cannot be read.
    static func status() -> (rss: Int, hwm: Int)? {
        guard let text = readSmallFile("/proc/self/status") else { return nil }
        var rss: Int?
        var hwm: Int?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { rss = kilobytes(line) }
            if line.hasPrefix("VmHWM:") { hwm = kilobytes(line) }
        }
        guard let rss, let hwm else { return nil }
        return (rss, hwm)
    }

    /// VmRSS in bytes, or nil.
    static func rss() -> Int? { status()?.rss }

    /// Resets VmHWM to the current RSS (Linux: "5" into /proc/self/clear_refs), so the
    /// high-water mark read later covers only what follows. False when it did not work.
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let written = "5".utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, 1) }
        return written == 1
    }

    /// "VmRSS:	  123456 kB" → 123456 × 1024.
    private static func kilobytes(_ line: Substring) -> Int? {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2, let value = Int(fields[1]) else { return nil }
        return value * 1024
    }

    /// Reads a /proc file, whose stat size is 0, to its end.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The regular files under a directory: their sizes (st_size, what `ls -l` shows) and the
/// blocks they hold on disk (st_blocks × 512, which differs for sparse or preallocated
/// files), in all and per kind of file.
struct DirectoryUsage: Sendable {
    struct Kind: Sendable {
        var name: String
        var files = 0
        var bytes = 0
    }

    var files = 0
    var bytes = 0
    var allocatedBytes = 0
    var kinds: [Kind] = []

    static func measure(_ path: String) throws -> DirectoryUsage {
        var usage = DirectoryUsage()
        var kinds: [String: Kind] = [:]
        guard let walker = FileManager.default.enumerator(atPath: path) else {
            throw ScaleSetupError("cannot list \(path)")
        }
        while let relative = walker.nextObject() as? String {
            let full = path + "/" + relative
            var info = stat()
            guard lstat(full, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let size = Int(info.st_size)
            usage.files += 1
            usage.bytes += size
            usage.allocatedBytes += Int(info.st_blocks) * 512
            let kind = kindName(of: relative)
            kinds[kind, default: Kind(name: kind)].files += 1
            kinds[kind, default: Kind(name: kind)].bytes += size
        }
        usage.kinds = kinds.values.sorted { $0.bytes > $1.bytes }
        return usage
    }

    /// A file's kind: its extension ("*.wal"), or its name without trailing digits and
    /// separators ("LOCK", "MANIFEST").
    private static func kindName(of relative: String) -> String {
        let name = relative.split(separator: "/").last.map(String.init) ?? relative
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "*" + name[dot...]
        }
        let stem = name.reversed().drop { $0.isNumber || $0 == "-" || $0 == "_" }
        return stem.isEmpty ? name : String(stem.reversed())
    }
}

struct ScaleSetupError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Monotonic seconds.
enum Clock {
    static func nanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// Runs `body` and returns its result with the seconds it took.
    static func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = nanoseconds()
        let result = try body()
        return (result, Double(nanoseconds() - start) / 1e9)
    }
}
