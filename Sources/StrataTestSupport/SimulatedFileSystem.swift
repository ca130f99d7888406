// A simulated file system for crash tests: an in-memory tree that knows, besides what reads
// see, what a real disk would be guaranteed to keep if power failed now.
//
// Model. Every file has durable bytes and the ordered list of operations (write, truncate,
// preallocate) since its last `sync()`; reads see the durable bytes with those operations
// applied, and `sync()` makes them durable. Every directory has durable entries (as of its
// last `syncDirectory`) and the ordered list of entry operations since (create, mkdir,
// remove, rename in or out); lookups see all of them.
//
// A crash image (`crashImage`) keeps everything durable and undoes some of the rest:
// - of each directory's pending entry operations it keeps a prefix (metadata reaches the disk
//   in order, as with ext4's journal). A rename across directories is one operation in each,
//   so it can be half undone: the file under both names, or neither. (The reordered images of
//   SimulatedFileSystem+Reorder.swift keep any subset instead, a rename whole;)
// - of each file's pending operations it keeps any subset, and a write can be torn: each
//   512-byte sector it touches (aligned to absolute file offsets) independently gets the new
//   bytes, keeps the old ones, or gets garbage;
// - a file's bytes survive only with a surviving name: a file whose entry is undone is gone.
// Invariants: nothing written is durable before its file's `sync()`, no name is durable
// before its directory's `syncDirectory` (a new directory also needs its parent's), and a
// crash image always starts from the durable state and only replays, drops or tears the
// changes made after it, so synced bytes and names that nothing later touched always survive.
import StrataIO
import Synchronization

/// An in-memory `FileSystem` that models what survives power loss, with crash injection
/// ("power fails at mutating operation k"), one-shot fault injection, and faults aimed at
/// the k-th operation (SimulatedFileSystem+Faults.swift). Safe to use from
/// several threads at once.
///
/// Paths: "/" is the root; duplicate and trailing slashes and "." are ignored, ".." goes up,
/// and relative paths are taken from the root. Errors are `IOError`s with POSIX-like codes.
public final class SimulatedFileSystem: FileSystem {
    /// The kinds of operation, for `failNext(_:code:)` and `injectFault`.
    public enum OperationKind: Sendable, Hashable, CaseIterable {
        // FileSystem
        case open, kind, createDirectory, listDirectory, rename, removeFile, syncDirectory, lock
        // FileHandle
        case read, write, sync, size, truncate, preallocate
    }

    /// The whole live tree at one moment, for comparing states in tests.
    public struct Snapshot: Sendable, Equatable {
        /// Paths of all directories, sorted, including "/".
        public var directories: [String]
        /// Path -> contents of every file.
        public var files: [String: [UInt8]]
    }

    // All mutable state lives behind this one mutex and the class has no other stored
    // property, so the compiler checks its Sendable conformance: no @unchecked needed.
    let state: Locked<SimulatedState>

    /// An empty file system: just the root directory "/".
    public init() {
        TestLog.install()
        state = Locked(SimulatedState())
    }

    init(state initial: sending SimulatedState) {
        state = Locked(initial)
    }

    // MARK: Crash and fault injection

    /// Makes mutating operation number `operations` (0-based, counted by `operationCount`)
    /// fail with `.crashed` without taking effect, as if power failed just before it, and
    /// every later operation of any kind fail the same way. Mutating operations are: an open
    /// or lock that creates its file, write, sync, truncate, preallocate, rename, removeFile,
    /// a createDirectory that creates, syncDirectory.
    public func failAfter(operations: Int) {
        precondition(operations >= 0, "negative operation count")
        state.withLock { $0.crashAtOperation = operations }
    }

    /// Makes the file system behave as read-only media, or writable again: while read-only,
    /// every mutating operation (see `failAfter(operations:)`), every `openFile` of an
    /// existing file and every `lockFile` fails with `.readOnlyFileSystem`, as EROFS does,
    /// without taking effect; `openFileForReading`, reads and listings work.
    public func setReadOnly(_ readOnly: Bool) {
        state.withLock { $0.readOnly = readOnly }
    }

    /// Power fails now: every later operation throws `.crashed`.
    public func powerOff() {
        state.withLock { $0.crashed = true }
    }

    /// Mutating operations performed so far (those that failed or crashed are not counted).
    public var operationCount: Int {
        state.withLock { $0.operationCount }
    }

    /// Bytes whose cached pages a handle gave back (`FileHandle.dropCachedPages`), by path,
    /// summed over calls. Only a hint to a real kernel: nothing here changes.
    public var droppedCacheBytes: [String: Int64] {
        state.withLock { $0.droppedCacheBytes }
    }

    func recordDroppedCache(_ path: String, _ count: Int64) {
        state.withLock { $0.droppedCacheBytes[path, default: 0] += count }
    }

    /// How many times a handle started the writeback (`FileHandle.startWriteback`) of a
    /// range that a write window still open mapped, by path. A real kernel write-protects
    /// every mapped page it writes out, with a TLB flush on every core per page; nothing
    /// changes here.
    public var writebacksUnderOpenWindows: [String: Int] {
        state.withLock { $0.writebacksUnderOpenWindows }
    }

    func recordWindowOpened(_ path: String, _ range: Range<Int64>) -> Int {
        state.withLock { state in
            state.nextWindowToken += 1
            state.openWindows[state.nextWindowToken] = (path, range)
            return state.nextWindowToken
        }
    }

    func recordWindowClosed(_ token: Int) {
        _ = state.withLock { $0.openWindows.removeValue(forKey: token) }
    }

    func recordWriteback(_ path: String, _ range: Range<Int64>) {
        state.withLock { state in
            if state.openWindows.values.contains(where: { $0.path == path && $0.range.overlaps(range) }) {
                state.writebacksUnderOpenWindows[path, default: 0] += 1
            }
        }
    }

    /// Whether power has failed (by `failAfter(operations:)` or `powerOff()`).
    public var hasCrashed: Bool {
        state.withLock { $0.crashed }
    }

    /// Makes the next operation of `kind` throw `IOError` with `code` (for example `.other`
    /// for an EIO from fsync, `.noSpace` for a full disk) without taking effect. One-shot:
    /// the operation after it behaves normally.
    public func failNext(_ kind: OperationKind, code: IOError.Code = .other) {
        state.withLock { $0.injectedFaults[kind] = code }
    }

    // MARK: Inspection (never fails, even after a crash)

    /// The live contents of the file at `path`, or nil when no file is there.
    public func contents(of path: String) -> [UInt8]? {
        state.withLock { state in
            fileID(path, in: state).map { state.files[$0]!.live.bytes }
        }
    }

    /// The durable contents of the file at `path` (what its data would be after any crash,
    /// provided its name survives), or nil when no file is there.
    public func durableContents(of path: String) -> [UInt8]? {
        state.withLock { state in
            fileID(path, in: state).map { state.files[$0]!.durable.bytes }
        }
    }

    /// Every directory and file as reads see them now.
    public func snapshot() -> Snapshot {
        state.withLock { state in
            var snapshot = Snapshot(directories: [], files: [:])
            var stack = [(SimulatedState.rootID, "/")]
            while let (id, path) = stack.popLast() {
                snapshot.directories.append(path)
                for (name, target) in state.directories[id]!.entries {
                    let child = path == "/" ? "/" + name : path + "/" + name
                    if let file = state.files[target] {
                        snapshot.files[child] = file.live.bytes
                    } else {
                        stack.append((target, child))
                    }
                }
            }
            snapshot.directories.sort()
            return snapshot
        }
    }

    /// XORs the byte at `offset` of the file at `path` with `mask`, in the durable contents
    /// and in pending writes alike, as if the medium had decayed. For corruption tests; use it
    /// on synced files (or a crash image) to corrupt exactly the byte asked for. (Changes a
    /// `syncErrorLosingPages` fault left only in reads are dropped.)
    public func corrupt(path: String, offset: Int, xor mask: UInt8) throws {
        try state.withLock { state in
            guard let id = fileID(path, in: state) else {
                throw ioError(.notFound, "corrupt", path, "no such file")
            }
            var file = state.files[id]!
            guard offset >= 0, offset < file.live.count else {
                throw ioError(.other, "corrupt", path, "offset \(offset) is outside the file (\(file.live.count) bytes)")
            }
            if offset < file.durable.count {
                var byte = file.durable.read(offset..<offset + 1)
                byte[0] ^= mask
                file.durable.write(byte, at: offset)
            }
            file.pending = file.pending.map { operation in
                guard case .write(let start, var bytes) = operation, (start..<start + bytes.count).contains(offset) else {
                    return operation
                }
                bytes[offset - start] ^= mask
                return .write(offset: start, bytes: bytes)
            }
            // Rebuild the live view from the corrupted parts so it stays `durable + pending`.
            file.live = file.durable
            for operation in file.pending { operation.apply(to: &file.live) }
            state.files[id] = file
        }
    }

    private func fileID(_ path: String, in state: SimulatedState) -> Int? {
        guard let components = try? pathComponents(path, "inspect"),
            let id = try? state.lookup(components, "inspect", path),
            state.files[id] != nil
        else { return nil }
        return id
    }

    // MARK: FileSystem

    public func openFile(_ path: String, create: Bool) throws -> any FileHandle {
        var created = false
        let token = try state.withLock { state in
            try state.begin(.open, "open", path)
            let components = try pathComponents(path, "open")
            guard let name = components.last else { throw ioError(.isADirectory, "open", path, "is a directory") }
            let parent = try state.directoryID(components.dropLast(), "open", path)
            let inode: Int
            if let existing = state.directories[parent]!.entries[name] {
                guard state.files[existing] != nil else { throw ioError(.isADirectory, "open", path, "is a directory") }
                // Opening for writing needs writable media, even without writing.
                if state.readOnly { throw state.readOnlyError("open", path) }
                inode = existing
            } else {
                guard create else { throw ioError(.notFound, "open", path, "no such file") }
                state.noteCreation()
                if state.takeArmedFault(.diskFull) { throw state.armedFaultError(.diskFull, "open", path) }
                try state.beginMutation("open", path)
                inode = state.createFile(named: name, in: parent)
                created = true
            }
            let token = state.newToken()
            state.openHandles[token] = inode
            return token
        }
        if created { notifyEntryOperation(.init(kind: .create, path: path)) }
        return SimulatedFileHandle(fileSystem: self, token: token, path: path, readOnly: false)
    }

    /// A handle that reads only: its writes, truncations, preallocations and syncs fail, so
    /// a test sees any attempt to change a file through it.
    public func openFileForReading(_ path: String) throws -> any FileHandle {
        let token = try state.withLock { state in
            try state.begin(.open, "open", path)
            let components = try pathComponents(path, "open")
            guard let name = components.last else { throw ioError(.isADirectory, "open", path, "is a directory") }
            let parent = try state.directoryID(components.dropLast(), "open", path)
            guard let existing = state.directories[parent]!.entries[name] else { throw ioError(.notFound, "open", path, "no such file") }
            guard state.files[existing] != nil else { throw ioError(.isADirectory, "open", path, "is a directory") }
            let token = state.newToken()
            state.openHandles[token] = existing
            return token
        }
        return SimulatedFileHandle(fileSystem: self, token: token, path: path, readOnly: true)
    }

    public func kind(of path: String) throws -> FileKind? {
        try state.withLock { state in
            try state.begin(.kind, "stat", path)
            guard let id = try state.lookup(try pathComponents(path, "stat"), "stat", path) else { return nil }
            return state.directories[id] != nil ? .directory : .file
        }
    }

    public func createDirectory(_ path: String) throws {
        let created = try state.withLock { state -> Bool in
            try state.begin(.createDirectory, "mkdir", path)
            let components = try pathComponents(path, "mkdir")
            guard let name = components.last else { return false }  // root always exists
            let parent = try state.directoryID(components.dropLast(), "mkdir", path)
            if let existing = state.directories[parent]!.entries[name] {
                guard state.directories[existing] != nil else { throw ioError(.alreadyExists, "mkdir", path, "a file is in the way") }
                return false
            }
            state.noteCreation()
            try state.beginMutation("mkdir", path)
            let id = state.newNodeID()
            state.directories[id] = DirectoryNode()
            state.creatingOperation[id] = state.recordEntries([EntryChange(name: name, target: id)], in: parent)
            return true
        }
        if created { notifyEntryOperation(.init(kind: .createDirectory, path: path)) }
    }

    public func listDirectory(_ path: String) throws -> [String] {
        try state.withLock { state in
            try state.begin(.listDirectory, "opendir", path)
            let id = try state.directoryID(try pathComponents(path, "opendir")[...], "opendir", path)
            return state.directories[id]!.entries.keys.sorted()
        }
    }

    public func rename(_ source: String, to destination: String) throws {
        let description = "\(source) -> \(destination)"
        let moved = try state.withLock { state -> Bool in
            try state.begin(.rename, "rename", description)
            let from = try pathComponents(source, "rename")
            let to = try pathComponents(destination, "rename")
            guard let fromName = from.last, let toName = to.last else {
                throw ioError(.other, "rename", description, "cannot rename the root directory")
            }
            let fromParent = try state.directoryID(from.dropLast(), "rename", description)
            let toParent = try state.directoryID(to.dropLast(), "rename", description)
            guard let moving = state.directories[fromParent]!.entries[fromName] else {
                throw ioError(.notFound, "rename", description, "no such file")
            }
            let replaced = state.directories[toParent]!.entries[toName]
            if state.directories[moving] != nil {
                if let replaced, state.files[replaced] != nil {
                    throw ioError(.notADirectory, "rename", description, "cannot replace a file with a directory")
                }
                if let replaced, replaced != moving, !state.directories[replaced]!.entries.isEmpty {
                    throw ioError(.other, "rename", description, "directory not empty")
                }
                if to.count > from.count, Array(to.prefix(from.count)) == from {
                    throw ioError(.other, "rename", description, "cannot move a directory into itself")
                }
            } else if let replaced, state.directories[replaced] != nil {
                throw ioError(.isADirectory, "rename", description, "cannot replace a directory with a file")
            }
            try state.beginMutation("rename", description)
            // Renaming a name onto itself, or onto another name of the same node, does nothing.
            guard replaced != moving else { return false }
            if fromParent == toParent {
                state.recordEntries(
                    [EntryChange(name: fromName, target: nil), EntryChange(name: toName, target: moving)], in: fromParent)
            } else {
                let number = state.recordEntries([EntryChange(name: fromName, target: nil)], in: fromParent)
                state.recordEntries([EntryChange(name: toName, target: moving)], in: toParent, id: number)
            }
            return true
        }
        if moved { notifyEntryOperation(.init(kind: .rename, path: description)) }
    }

    public func removeFile(_ path: String) throws {
        try state.withLock { state in
            try state.begin(.removeFile, "unlink", path)
            let components = try pathComponents(path, "unlink")
            guard let name = components.last else { throw ioError(.isADirectory, "unlink", path, "is a directory") }
            let parent = try state.directoryID(components.dropLast(), "unlink", path)
            guard let target = state.directories[parent]!.entries[name] else {
                throw ioError(.notFound, "unlink", path, "no such file")
            }
            guard state.files[target] != nil else { throw ioError(.isADirectory, "unlink", path, "is a directory") }
            try state.beginMutation("unlink", path)
            state.recordEntries([EntryChange(name: name, target: nil)], in: parent)
        }
        notifyEntryOperation(.init(kind: .remove, path: path))
    }

    public func syncDirectory(_ path: String) throws {
        try state.withLock { state in
            try state.begin(.syncDirectory, "fsync directory", path)
            let id = try state.directoryID(try pathComponents(path, "fsync directory")[...], "fsync directory", path)
            try state.beginMutation("fsync directory", path)
            state.directories[id]!.sync()
            state.collectGarbage()
        }
    }

    public func lockFile(_ path: String) throws -> any FileLock {
        var created = false
        let token = try state.withLock { state in
            try state.begin(.lock, "flock", path)
            let components = try pathComponents(path, "flock")
            guard let name = components.last else { throw ioError(.isADirectory, "flock", path, "is a directory") }
            let parent = try state.directoryID(components.dropLast(), "flock", path)
            let inode: Int
            if let existing = state.directories[parent]!.entries[name] {
                guard state.files[existing] != nil else { throw ioError(.isADirectory, "flock", path, "is a directory") }
                // The lock file is opened for writing, as POSIXFileSystem does.
                if state.readOnly { throw state.readOnlyError("flock", path) }
                guard !state.heldLocks.values.contains(existing) else {
                    throw ioError(.wouldBlock, "flock", path, "the lock is held")
                }
                inode = existing
            } else {
                state.noteCreation()
                try state.beginMutation("flock", path)
                inode = state.createFile(named: name, in: parent)
                created = true
            }
            let token = state.newToken()
            state.heldLocks[token] = inode
            return token
        }
        if created { notifyEntryOperation(.init(kind: .create, path: path)) }
        return SimulatedFileLock(fileSystem: self, token: token, path: path)
    }

    // MARK: Handle and lock operations

    func read(_ token: Int, _ path: String, at offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0, count >= 0 else { throw ioError(.other, "pread", path, "negative offset or count") }
        return try state.withLock { state in
            let live = state.files[try state.openInode(token, .read, "pread", path)]!.live
            guard offset < live.count else { return [] }
            let start = Int(offset)
            return live.read(start..<start + min(count, live.count - start))
        }
    }

    func write(_ token: Int, _ path: String, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard offset >= 0 else { throw ioError(.other, "pwrite", path, "negative offset") }
        try state.withLock { state in
            let inode = try state.openInode(token, .write, "pwrite", path)
            guard offset <= Int64(maximumSimulatedFileSize - bytes.count) else {
                throw ioError(.noSpace, "pwrite", path, "file would exceed \(maximumSimulatedFileSize) bytes")
            }
            if state.takeArmedFault(.diskFull) { throw state.armedFaultError(.diskFull, "pwrite", path) }
            if state.takeArmedFault(.shortWrite) {
                // The first half reaches the file, as when the disk fills up during the write.
                let prefix = bytes.count / 2
                if prefix > 0 {
                    try state.beginMutation("pwrite", path)
                    state.files[inode]!.record(.write(offset: Int(offset), bytes: [UInt8](UnsafeRawBufferPointer(rebasing: bytes[..<prefix]))))
                }
                throw state.armedFaultError(.shortWrite, "pwrite", path)
            }
            try state.beginMutation("pwrite", path)
            state.files[inode]!.record(.write(offset: Int(offset), bytes: [UInt8](bytes)))
        }
    }

    func sync(_ token: Int, _ path: String) throws {
        try state.withLock { state in
            let inode = try state.openInode(token, .sync, "fdatasync", path)
            if state.takeArmedFault(.syncErrorLosingPages) {
                // Reads keep seeing the changes (`live`), but they leave the list a sync or a
                // crash image makes durable from: only writing them again brings them back.
                state.files[inode]!.pending.removeAll()
                throw state.armedFaultError(.syncErrorLosingPages, "fdatasync", path)
            }
            try state.beginMutation("fdatasync", path)
            state.files[inode]!.sync()
        }
    }

    /// The size of the file a handle has open, or nil once it is closed: no fault is injected
    /// and no operation counted. For checks a real file system makes without a system call.
    func uncountedSize(_ token: Int) -> Int64? {
        state.withLock { state in state.openHandles[token].flatMap { state.files[$0] }.map { Int64($0.live.count) } }
    }

    func size(_ token: Int, _ path: String) throws -> Int64 {
        try state.withLock { state in
            Int64(state.files[try state.openInode(token, .size, "fstat", path)]!.live.count)
        }
    }

    func resize(_ token: Int, _ path: String, to size: Int64, preallocating: Bool) throws {
        let operation = preallocating ? "fallocate" : "ftruncate"
        guard size >= 0 else { throw ioError(.other, operation, path, "negative size") }
        try state.withLock { state in
            let inode = try state.openInode(token, preallocating ? .preallocate : .truncate, operation, path)
            guard size <= maximumSimulatedFileSize else {
                throw ioError(.noSpace, operation, path, "file would exceed \(maximumSimulatedFileSize) bytes")
            }
            if state.takeArmedFault(.diskFull) { throw state.armedFaultError(.diskFull, operation, path) }
            try state.beginMutation(operation, path)
            state.files[inode]!.record(preallocating ? .preallocate(size: Int(size)) : .truncate(size: Int(size)))
        }
    }

    /// Closes a handle or releases a lock. Releasing works even after a crash (so nothing
    /// leaks), but then reports the crash like every other call.
    func release(_ token: Int, _ operation: String, _ path: String, lock: Bool) throws {
        try state.withLock { state in
            if lock {
                state.heldLocks[token] = nil
            } else {
                state.openHandles[token] = nil
            }
            if state.crashed { throw state.powerLoss(operation, path) }
        }
    }
}

/// A handle on a simulated file: a token the file system maps to an inode while it is open.
final class SimulatedFileHandle: FileHandle {
    let path: String
    let fileSystem: SimulatedFileSystem
    private let token: Int
    /// Opened with `openFileForReading`: nothing may change the file through it.
    private let readOnly: Bool

    init(fileSystem: SimulatedFileSystem, token: Int, path: String, readOnly: Bool) {
        self.fileSystem = fileSystem
        self.token = token
        self.path = path
        self.readOnly = readOnly
    }

    private func checkWritable(_ operation: String) throws {
        if readOnly { throw ioError(.other, operation, path, "the file was opened for reading only") }
    }

    // Like a file descriptor, a handle dropped without close is closed.
    deinit { try? fileSystem.release(token, "close", path, lock: false) }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try fileSystem.read(token, path, at: offset, count: count)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try checkWritable("pwrite")
        try fileSystem.write(token, path, bytes, at: offset)
    }

    /// A window whose writes are this handle's writes, so crash states and injected faults
    /// treat them alike. Opening it is no operation of its own (a real one is an mmap, which
    /// the simulation has no faults for).
    func openWriteWindow(offset: Int64, count: Int) throws -> (any WriteWindow)? {
        try checkWritable("mmap")
        guard count > 0, offset % writeWindowAlignment == 0 else { return nil }
        return SimulatedWriteWindow(handle: self, range: offset..<(offset + Int64(count)))
    }

    /// What a store into a real mapping past the file's end would punish with SIGBUS.
    func checkInsideFile(_ end: Int64) {
        if let size = fileSystem.uncountedSize(token) {
            precondition(end <= size, "SimulatedWriteWindow: a write to \(end) past the file's end \(size) (SIGBUS on a real mapping)")
        }
    }

    func sync() throws {
        try checkWritable("fdatasync")
        try fileSystem.sync(token, path)
    }

    func size() throws -> Int64 {
        try fileSystem.size(token, path)
    }

    func truncate(to size: Int64) throws {
        try checkWritable("ftruncate")
        try fileSystem.resize(token, path, to: size, preallocating: false)
    }

    func preallocate(to size: Int64) throws {
        try checkWritable("fallocate")
        try fileSystem.resize(token, path, to: size, preallocating: true)
    }

    /// Records the hint (`writebacksUnderOpenWindows`); changes nothing.
    func startWriteback(offset: Int64, count: Int64) throws {
        fileSystem.recordWriteback(path, offset..<(offset + count))
    }

    /// Records the hint (`droppedCacheBytes`); changes nothing.
    func dropCachedPages(offset: Int64, count: Int64) throws {
        fileSystem.recordDroppedCache(path, count)
    }

    /// Idempotent, like `POSIXFileHandle.close`.
    func close() throws {
        try fileSystem.release(token, "close", path, lock: false)
    }
}

/// A simulated `WriteWindow`: writes through its handle, once checked against the window and
/// the file's end.
final class SimulatedWriteWindow: WriteWindow {
    let range: Range<Int64>
    private let handle: SimulatedFileHandle
    private let token: Int

    init(handle: SimulatedFileHandle, range: Range<Int64>) {
        self.handle = handle
        self.range = range
        token = handle.fileSystem.recordWindowOpened(handle.path, range)
    }

    deinit {
        handle.fileSystem.recordWindowClosed(token)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        checkInside(offset, bytes.count)
        handle.checkInsideFile(offset + Int64(bytes.count))
        try handle.write(bytes, at: offset)
    }
}

/// A held lock on a simulated file.
final class SimulatedFileLock: FileLock {
    private let fileSystem: SimulatedFileSystem
    private let token: Int
    private let path: String

    init(fileSystem: SimulatedFileSystem, token: Int, path: String) {
        self.fileSystem = fileSystem
        self.token = token
        self.path = path
    }

    // Like closing the descriptor of a flock, dropping the lock releases it.
    deinit { try? fileSystem.release(token, "unlock", path, lock: true) }

    func unlock() throws {
        try fileSystem.release(token, "unlock", path, lock: true)
    }
}
