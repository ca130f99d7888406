// The production `FileSystem`: plain POSIX calls. This file and IOError.swift are the only
// places in Strata that talk to the operating system about files.
import CStrata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

public struct POSIXFileSystem: FileSystem {
    public init() {}

    public func openFile(_ path: String, create: Bool) throws -> any FileHandle {
        var flags = O_RDWR | O_CLOEXEC
        if create { flags |= O_CREAT }
        let fd = retryingEINTR { open(path, flags, 0o644) }
        guard fd >= 0 else { throw IOError(errno: errno, operation: "open", path: path) }
        return POSIXFileHandle(descriptor: fd, path: path)
    }

    public func openFileForReading(_ path: String) throws -> any FileHandle {
        let fd = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw IOError(errno: errno, operation: "open", path: path) }
        return POSIXFileHandle(descriptor: fd, path: path)
    }

    public func kind(of path: String) throws -> FileKind? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw IOError(errno: errno, operation: "stat", path: path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    public func createDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 else {
            if errno == EEXIST, try kind(of: path) == .directory { return }
            throw IOError(errno: errno, operation: "mkdir", path: path)
        }
    }

    public func listDirectory(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw IOError(errno: errno, operation: "opendir", path: path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public func rename(_ source: String, to destination: String) throws {
        #if canImport(Glibc)
            let result = Glibc.rename(source, destination)
        #else
            let result = Darwin.rename(source, destination)
        #endif
        guard result == 0 else { throw IOError(errno: errno, operation: "rename", path: "\(source) -> \(destination)") }
    }

    /// A hard link; a copy when the two paths are on different file systems or the file
    /// system has no hard links.
    public func linkOrCopyFile(_ source: String, to destination: String) throws {
        if link(source, destination) == 0 { return }
        let failure = errno
        switch failure {
        case EXDEV, EPERM, EMLINK, ENOTSUP:
            try copyFile(source, to: destination)
        default:
            throw IOError(errno: failure, operation: "link", path: "\(source) -> \(destination)")
        }
    }

    public func removeFile(_ path: String) throws {
        guard unlink(path) == 0 else { throw IOError(errno: errno, operation: "unlink", path: path) }
    }

    public func syncDirectory(_ path: String) throws {
        let fd = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY) }
        guard fd >= 0 else { throw IOError(errno: errno, operation: "open directory", path: path) }
        defer { _ = closeDescriptor(fd) }
        guard fsync(fd) == 0 else { throw IOError(errno: errno, operation: "fsync directory", path: path) }
    }

    public func lockFile(_ path: String) throws -> any FileLock {
        let fd = retryingEINTR { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw IOError(errno: errno, operation: "open lock file", path: path) }
        // flock, not fcntl: flock locks belong to the open file description, so a second
        // open of the same store inside this process is refused too.
        guard retryingEINTR({ flock(fd, LOCK_EX | LOCK_NB) }) == 0 else {
            let error = IOError(errno: errno, operation: "flock", path: path)
            _ = closeDescriptor(fd)
            throw error
        }
        return POSIXFileLock(descriptor: fd)
    }
}

/// `close` under a name that does not collide with the protocol methods.
@inline(__always)
func closeDescriptor(_ fd: Int32) -> Int32 {
    close(fd)
}

@inline(__always)
func retryingEINTR(_ call: () -> Int32) -> Int32 {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

// Sendable: the descriptor is an immutable integer, the kernel makes pread/pwrite/fdatasync
// on it safe from any thread, and `state` (closed or not) is an atomic flag.
final class POSIXFileHandle: FileHandle, Sendable {
    let path: String
    private let descriptor: Int32
    private let state = OnceFlag()

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        if !state.isSet { _ = closeDescriptor(descriptor) }
    }

    private func checkOpen(_ operation: String) throws {
        if state.isSet { throw IOError(code: .closed, operation: operation, path: path, message: "\(operation) \(path): file is closed") }
    }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try checkOpen("read")
        if count == 0 { return [] }
        var done = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            while done < count {
                let n = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    initialized = done
                    throw IOError(errno: errno, operation: "pread", path: path)
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        return bytes
    }

    func mapReadOnly() throws -> MappedFile? {
        try checkOpen("mmap")
        let count = Int(try size())
        guard count > 0 else { return nil }
        guard let base = mmap(nil, count, PROT_READ, MAP_SHARED, descriptor, 0), base != MAP_FAILED else {
            throw IOError(errno: errno, operation: "mmap", path: path)
        }
        return MappedFile(bytes: UnsafeRawBufferPointer(start: base, count: count)) { bytes in
            _ = munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
        }
    }

    func openWriteWindow(offset: Int64, count: Int) throws -> (any WriteWindow)? {
        try checkOpen("mmap")
        #if os(Linux)
            guard count > 0, offset % writeWindowAlignment == 0 else { return nil }
            // A store through a mapping that needs a block the disk cannot give, or lies past
            // the file's end, is a SIGBUS, not an error; so the window is only opened over
            // blocks that are allocated, inside the file. Where they cannot be, the caller
            // writes with pwrite and gets ENOSPC.
            guard posix_fallocate(descriptor, off_t(offset), off_t(count)) == 0 else { return nil }
            guard let base = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, off_t(offset)), base != MAP_FAILED
            else { return nil }
            return POSIXWriteWindow(base: base, offset: offset, count: count)
        #else
            // Darwin: whether fsync (and F_FULLFSYNC) alone writes out pages dirtied through a
            // mapping is not documented; until that is settled, writes use pwrite there.
            return nil
        #endif
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try checkOpen("write")
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw IOError(errno: errno, operation: "pwrite", path: path)
            }
            done += n
        }
    }

    func sync() throws {
        try checkOpen("sync")
        #if canImport(Darwin)
            // On Darwin fsync does not reach the platter; F_FULLFSYNC does.
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
            guard fsync(descriptor) == 0 else { throw IOError(errno: errno, operation: "fsync", path: path) }
        #else
            guard retryingEINTR({ fdatasync(descriptor) }) == 0 else {
                throw IOError(errno: errno, operation: "fdatasync", path: path)
            }
        #endif
    }

    func startWriteback(offset: Int64, count: Int64) throws {
        try checkOpen("sync_file_range")
        let result = strata_start_writeback(descriptor, offset, count)
        guard result == 0 else { throw IOError(errno: result, operation: "sync_file_range", path: path) }
    }

    func dropCachedPages(offset: Int64, count: Int64) throws {
        #if os(Linux)
            try checkOpen("posix_fadvise")
            let result = posix_fadvise(descriptor, off_t(offset), off_t(count), POSIX_FADV_DONTNEED)
            guard result == 0 else { throw IOError(errno: result, operation: "posix_fadvise", path: path) }
        #endif
    }

    func size() throws -> Int64 {
        try checkOpen("stat")
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw IOError(errno: errno, operation: "fstat", path: path) }
        return Int64(info.st_size)
    }

    func truncate(to size: Int64) throws {
        try checkOpen("truncate")
        guard retryingEINTR({ ftruncate(descriptor, off_t(size)) }) == 0 else {
            throw IOError(errno: errno, operation: "ftruncate", path: path)
        }
    }

    func preallocate(to size: Int64) throws {
        try checkOpen("preallocate")
        let current = try self.size()
        guard size > current else { return }
        #if os(Linux)
            // posix_fallocate returns the error number rather than setting errno.
            let failure = posix_fallocate(descriptor, off_t(current), off_t(size - current))
            if failure == 0 { return }
            // Some file systems cannot preallocate; an ordinary extension still keeps the file
            // size fixed while the log fills it, which is what matters for fdatasync.
            guard failure == EOPNOTSUPP || failure == ENOSYS || failure == EINVAL else {
                throw IOError(errno: failure, operation: "fallocate", path: path)
            }
        #endif
        try truncate(to: size)
    }

    func close() throws {
        guard state.set() else { return }
        guard closeDescriptor(descriptor) == 0 else { throw IOError(errno: errno, operation: "close", path: path) }
    }
}

/// A shared, writable mapping of part of a file: a store into it changes the file's page in
/// the page cache, as a pwrite would, so it survives the process and fdatasync writes it out.
final class POSIXWriteWindow: WriteWindow {
    let range: Range<Int64>
    private let base: UnsafeMutableRawPointer

    init(base: UnsafeMutableRawPointer, offset: Int64, count: Int) {
        self.base = base
        self.range = offset..<(offset + Int64(count))
    }

    deinit {
        _ = munmap(base, Int(range.count))
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        checkInside(offset, bytes.count)
        guard let source = bytes.baseAddress else { return }
        let start = Int(offset - range.lowerBound)
        (base + start).copyMemory(from: source, byteCount: bytes.count)
        // The next record lands right behind this one, a few microseconds from now: asking for
        // its lines now lets its stores complete without waiting for them (a single-put
        // commit's record is about 150 bytes; the stores of one waited about 100 ns).
        let next = start + bytes.count
        if next < Int(range.count) { strata_prefetch_for_write(base + next, min(Self.prefetchBytes, Int(range.count) - next)) }
    }

    /// How far past a write `write` prefetches.
    static let prefetchBytes = 256
}

final class POSIXFileLock: FileLock, Sendable {
    // Sendable: the descriptor is immutable and `released` is an atomic flag.
    private let descriptor: Int32
    private let released = OnceFlag()

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { try? unlock() }

    func unlock() throws {
        guard released.set() else { return }
        // Unlock before closing. Closing alone releases the flock only once every copy of the
        // descriptor is gone, and a process being spawned by another thread holds a copy
        // until it execs: a store closed at that moment stayed locked, and reopening it
        // failed with `.locked`.
        _ = retryingEINTR { flock(descriptor, LOCK_UN) }
        _ = closeDescriptor(descriptor)
    }
}
