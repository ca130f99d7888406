#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file that could not be read, with the system's reason.
public struct FileReadError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    public var description: String { "cannot read \(path): \(String(cString: strerror(errno)))" }
}

/// The whole contents of the file at `path`, read with plain system calls.
///
/// Tests read files this way rather than with `Data(contentsOf:)`: the toolchain's Foundation
/// on Linux loses a 4 KiB buffer each time it reads an empty file (a store's lock file, an
/// empty stderr), which LeakSanitizer rightly reports under `scripts/asan`.
public func fileBytes(atPath path: String) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileReadError(path: path, errno: errno) }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw FileReadError(path: path, errno: errno)
        }
        if count == 0 { return bytes }
        bytes.append(contentsOf: chunk[0..<count])
    }
}
