// The one seam through which every byte of Strata's I/O goes. The engine never calls the
// operating system directly: it holds a `FileSystem`, which is `POSIXFileSystem` in
// production and a simulated file system with crash states in tests.
//
// Every method throws `IOError` (and only `IOError`).

/// What a path names.
public enum FileKind: Sendable, Equatable {
    case file
    case directory
    case other
}

/// A file system as Strata uses it: paths are absolute or relative to the process's working
/// directory, and directory entries become durable only after `syncDirectory`.
public protocol FileSystem: Sendable {
    /// Opens a file for reading and writing, creating it (empty) when `create` is true and it
    /// does not exist. Creating a file changes its directory: call `syncDirectory` to make
    /// the new entry durable.
    func openFile(_ path: String, create: Bool) throws -> any FileHandle

    /// Opens an existing file for reading only; writing through the handle fails. Unlike
    /// `openFile`, it works where the file, its directory or the whole medium is read-only,
    /// which is what a store opened read-only relies on.
    func openFileForReading(_ path: String) throws -> any FileHandle

    /// What `path` names, or nil when nothing is there.
    func kind(of path: String) throws -> FileKind?

    /// Creates one directory (its parent must exist). Succeeds if it already exists.
    func createDirectory(_ path: String) throws

    /// Names (not paths) of the entries in a directory, in no particular order.
    func listDirectory(_ path: String) throws -> [String]

    /// Atomically replaces `destination` with `source`. Durable after `syncDirectory`.
    func rename(_ source: String, to destination: String) throws

    /// Removes a file. Durable after `syncDirectory`.
    func removeFile(_ path: String) throws

    /// Makes every create, rename and remove in the directory durable (fsync of the directory).
    func syncDirectory(_ path: String) throws

    /// Takes an exclusive advisory lock on `path` (created if missing), without waiting.
    /// Throws `IOError` with code `.wouldBlock` when someone else holds it, in this process or
    /// another.
    func lockFile(_ path: String) throws -> any FileLock

    /// Gives `destination` (which must not exist) the same contents as `source`: a hard link
    /// where the file system allows one, otherwise a copy, synced. Durable after
    /// `syncDirectory` of the destination's directory. Only for files that are never written
    /// again: a hard link shares later writes.
    func linkOrCopyFile(_ source: String, to destination: String) throws
}

/// An open file. All offsets are absolute: there is no file position to share.
public protocol FileHandle: AnyObject, Sendable {
    var path: String { get }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int64, count: Int) throws -> [UInt8]

    /// Writes all of `bytes` at `offset`, extending the file if needed.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws

    /// Makes the file's data (and the metadata needed to read it back) durable: fdatasync.
    func sync() throws

    /// The file's size in bytes.
    func size() throws -> Int64

    /// Cuts or extends the file to `size` bytes.
    func truncate(to size: Int64) throws

    /// Reserves space so the file is at least `size` bytes, zero-filled past its old end,
    /// so later writes inside it need not change the file's size.
    func preallocate(to size: Int64) throws

    /// Starts writing `count` bytes at `offset` that are not yet on the device to it, without
    /// waiting, so that a later `sync()` has less left to wait for. Makes nothing durable;
    /// file systems that cannot do this do nothing.
    func startWriteback(offset: Int64, count: Int64) throws

    /// Tells the system that `count` bytes at `offset` will not be read again soon, so it may
    /// drop the cached copies that are already on the device and reuse their memory. Changes
    /// nothing a read returns; file systems that cannot do this do nothing.
    func dropCachedPages(offset: Int64, count: Int64) throws

    /// Closes the file. Later calls throw.
    func close() throws

    /// The whole file mapped read-only, or nil where this file system does not map files (the
    /// caller then reads with `read`). The mapping outlives `close`.
    func mapReadOnly() throws -> MappedFile?

    /// A window onto `offset ..< offset + count` of the file for writing through memory
    /// instead of a system call per write, or nil where this file system has none (the
    /// caller then uses `write`). The range must lie inside the file's size, and `offset` be
    /// a multiple of `writeWindowAlignment`. What is written through the window is the file's data exactly as
    /// after `write`: other handles read it, the process dying loses none of it, and `sync()`
    /// makes it durable. Nothing may cut the file below the window's end while it is in use.
    /// The window outlives `close`.
    func openWriteWindow(offset: Int64, count: Int) throws -> (any WriteWindow)?
}

/// What a write window's file offset must be a multiple of: a page size on every platform
/// Strata runs on (a mapping starts at a page), and the WAL's preallocation step.
public let writeWindowAlignment: Int64 = 1 << 20

/// Part of a file open for writing through memory (`FileHandle.openWriteWindow`); closed when
/// the object goes. Used by one thread at a time.
public protocol WriteWindow: AnyObject {
    /// The file offsets the window covers.
    var range: Range<Int64> { get }

    /// Writes all of `bytes` at file offset `offset`; they must lie inside `range`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws
}

/// A file's bytes mapped read-only into memory; unmapped when the object goes. Only for files
/// that never change while mapped (Strata's segment files).
public final class MappedFile: @unchecked Sendable {
    // @unchecked Sendable: the mapping is read-only and lives, unchanged, as long as this object.
    public let bytes: UnsafeRawBufferPointer
    private let release: @Sendable (UnsafeRawBufferPointer) -> Void

    public init(bytes: UnsafeRawBufferPointer, release: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) {
        self.bytes = bytes
        self.release = release
    }

    deinit {
        release(bytes)
    }
}

/// A held advisory lock; released by `unlock` (idempotent).
public protocol FileLock: AnyObject, Sendable {
    func unlock() throws
}

extension WriteWindow {
    /// Traps unless `count` bytes at `offset` lie inside the window: a caller's bug, which a
    /// real mapping would turn into a store to memory that is not the file's.
    package func checkInside(_ offset: Int64, _ count: Int) {
        precondition(
            offset >= range.lowerBound && offset + Int64(count) <= range.upperBound,
            "WriteWindow: a write to \(offset)..<\(offset + Int64(count)) outside the window \(range)")
    }
}

extension FileHandle {
    public func mapReadOnly() throws -> MappedFile? { nil }

    public func startWriteback(offset: Int64, count: Int64) throws {}

    public func dropCachedPages(offset: Int64, count: Int64) throws {}

    public func openWriteWindow(offset: Int64, count: Int) throws -> (any WriteWindow)? { nil }

    public func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Reads the whole file.
    public func readAll() throws -> [UInt8] {
        let total = try size()
        return try read(at: 0, count: Int(total))
    }
}

extension FileSystem {
    /// For file systems that have no read-only handles: an ordinary open of an existing file.
    public func openFileForReading(_ path: String) throws -> any FileHandle {
        try openFile(path, create: false)
    }

    /// Opens `path` for reading, reads all of it and closes it (also when the read fails).
    public func readWholeFile(_ path: String) throws -> [UInt8] {
        let handle = try openFileForReading(path)
        defer { try? handle.close() }
        return try handle.readAll()
    }

    /// The copy half of `linkOrCopyFile`, and the whole of it for file systems without links:
    /// 1 MiB at a time, then synced.
    public func linkOrCopyFile(_ source: String, to destination: String) throws {
        try copyFile(source, to: destination)
    }

    public func copyFile(_ source: String, to destination: String) throws {
        guard try kind(of: destination) == nil else {
            throw IOError(code: .alreadyExists, operation: "copy", path: destination, message: "the destination exists")
        }
        let input = try openFileForReading(source)
        defer { try? input.close() }
        let output = try openFile(destination, create: true)
        do {
            let size = try input.size()
            var offset: Int64 = 0
            while offset < size {
                let chunk = try input.read(at: offset, count: Int(min(size - offset, 1 << 20)))
                if chunk.isEmpty { break }
                try output.write(chunk, at: offset)
                offset += Int64(chunk.count)
            }
            try output.sync()
            try output.close()
        } catch {
            try? output.close()
            try? removeFile(destination)
            throw error
        }
    }

    /// Joins a directory and a name with exactly one separator.
    public func path(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
