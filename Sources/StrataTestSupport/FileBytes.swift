import StrataIO

/// The whole contents of the file at `path`, read through Strata's own I/O seam (plain
/// `open` and `pread`).
///
/// Tests read files this way rather than with `Data(contentsOf:)`: the toolchain's Foundation
/// on Linux loses a 4 KiB buffer each time it reads an empty file (a store's lock file, an
/// empty stderr), which LeakSanitizer rightly reports under `scripts/asan`. A file that grows
/// while it is read gives what it held when its size was taken.
public func fileBytes(atPath path: String) throws -> [UInt8] {
    let handle = try POSIXFileSystem().openFileForReading(path)
    defer { try? handle.close() }
    return try handle.read(at: 0, count: Int(handle.size()))
}
