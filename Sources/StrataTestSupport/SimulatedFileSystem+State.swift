// The state behind `SimulatedFileSystem`: nodes, pending operations, path lookup. Everything
// here runs with the file system's mutex held.
import StrataIO

/// One change to a file's bytes since its last sync, kept in call order so a crash image can
/// replay any subset of them.
enum PendingFileOperation {
    case write(offset: Int, bytes: [UInt8])
    case truncate(size: Int)
    case preallocate(size: Int)

    func apply(to contents: inout SparseBytes) {
        switch self {
        case .write(let offset, let bytes):
            contents.write(bytes, at: offset)
        case .truncate(let size):
            contents.resize(to: size)
        case .preallocate(let size):
            if size > contents.count { contents.resize(to: size) }
        }
    }
}

/// A regular file (an inode: several names may refer to it after a crash undoes half of a
/// rename).
struct FileNode {
    /// What survives any crash.
    var durable = SparseBytes()
    /// Changes since the last sync, oldest first.
    var pending: [PendingFileOperation] = []
    /// `durable` with `pending` applied: what reads see. Kept separately so a write costs
    /// O(bytes written), not a replay of everything since the last sync. (After a sync that
    /// lost its pages, it also holds changes that are in neither.)
    var live = SparseBytes()

    init() {}

    /// A file whose contents are all durable (a file of a fresh crash image).
    init(synced contents: SparseBytes) {
        durable = contents
        live = contents
    }

    mutating func record(_ operation: PendingFileOperation) {
        operation.apply(to: &live)
        pending.append(operation)
    }

    mutating func sync() {
        // Replay onto `durable` in place rather than assigning `live`, so the two never share
        // storage and the next write does not copy the whole page table.
        for operation in pending { operation.apply(to: &durable) }
        pending.removeAll()
    }
}

/// One directory entry change: `name` now refers to `target`, or is removed when nil.
struct EntryChange {
    var name: String
    var target: Int?
}

struct DirectoryNode {
    /// Name -> node id, as lookups see it.
    var entries: [String: Int] = [:]
    /// The entries as of the last `syncDirectory`.
    var durableEntries: [String: Int] = [:]
    /// Entry operations since then, oldest first. Each is applied atomically: a rename within
    /// one directory is a single operation of two changes.
    var pending: [[EntryChange]] = []
    /// The file system wide number of each pending operation (`SimulatedState.nextEntryOperation`):
    /// the two halves of a rename across directories share one, so a crash image that keeps
    /// any subset keeps both or neither.
    var pendingIDs: [Int] = []

    init() {}

    /// A directory whose entries are all durable (a directory of a fresh crash image).
    init(synced entries: [String: Int]) {
        self.entries = entries
        durableEntries = entries
    }

    mutating func record(_ changes: [EntryChange], id: Int) {
        for change in changes { entries[change.name] = change.target }
        pending.append(changes)
        pendingIDs.append(id)
    }

    mutating func sync() {
        durableEntries = entries
        pending.removeAll()
        pendingIDs.removeAll()
    }
}

/// Files larger than this are refused with `.noSpace`: it keeps offset arithmetic far from
/// overflow and catches runaway offsets in the engine.
let maximumSimulatedFileSize = 1 << 40

struct SimulatedState {
    static let rootID = 0

    /// Inodes by id. A removed file stays while anything could still bring it back: an open
    /// handle, a held lock, or a durable or pending directory entry (see `collectGarbage`).
    var files: [Int: FileNode] = [:]
    /// Directories by id; they share the id space with files. Never removed.
    var directories: [Int: DirectoryNode] = [rootID: DirectoryNode()]
    var nextNodeID = rootID + 1

    /// Open handle token -> inode id.
    var openHandles: [Int: Int] = [:]
    /// Held lock token -> inode id.
    var heldLocks: [Int: Int] = [:]
    var nextToken = 0

    var operationCount = 0
    /// Bytes whose cached pages were given back (`dropCachedPages`), by path; a hint only,
    /// so it changes no file and is no operation.
    var droppedCacheBytes: [String: Int64] = [:]
    /// Write windows not yet closed: token -> (path, range). Hints, like the above.
    var openWindows: [Int: (path: String, range: Range<Int64>)] = [:]
    /// Writebacks started over a range an open window still maps, by path.
    var writebacksUnderOpenWindows: [String: Int] = [:]
    var nextWindowToken = 0
    var crashAtOperation: Int?
    var crashed = false
    var injectedFaults: [SimulatedFileSystem.OperationKind: IOError.Code] = [:]
    /// Every operation begun (SimulatedFileSystem+Faults.swift).
    var totalOperations = 0
    /// The operations begun, while recording.
    var operationRecords: [SimulatedFileSystem.OperationRecord]? = nil
    /// The fault aimed at a later operation, and what became of it.
    var faultPlan: FaultPlan? = nil
    var faultOutcome: SimulatedFileSystem.FaultOutcome? = nil
    /// The aimed fault of the operation under way, when it applies past the operation's start.
    var armedFault: (fault: SimulatedFileSystem.Fault, record: SimulatedFileSystem.OperationRecord)? = nil
    /// Read-only media: every mutation and every open for writing fails with EROFS.
    var readOnly = false
    /// The number the next directory entry operation gets (`DirectoryNode.pendingIDs`).
    var nextEntryOperation = 0
    /// Node id -> the number of the entry operation that created it, while that may be
    /// pending: a crash image keeps no later operation on the node without it.
    var creatingOperation: [Int: Int] = [:]
    /// Told of every entry operation (SimulatedFileSystem+Reorder.swift).
    var entryObserver: (@Sendable (SimulatedFileSystem.EntryOperation) -> Void)? = nil

    // MARK: Operation accounting

    /// Called first by every operation: a crashed file system refuses everything, an
    /// injected fault for this kind of operation fires once, and an aimed fault fires or arms
    /// when this is its operation.
    mutating func begin(_ kind: SimulatedFileSystem.OperationKind, _ operation: String, _ path: String) throws {
        if crashed { throw powerLoss(operation, path) }
        try countOperation(kind, operation, path)
        if let code = injectedFaults.removeValue(forKey: kind) {
            throw ioError(code, operation, path, "injected fault")
        }
    }

    /// Called by a mutating operation after validating its arguments and before changing
    /// anything, so an operation that crashes leaves no trace.
    mutating func beginMutation(_ operation: String, _ path: String) throws {
        if readOnly { throw readOnlyError(operation, path) }
        if let limit = crashAtOperation, operationCount >= limit {
            crashed = true
            throw powerLoss(operation, path)
        }
        operationCount += 1
    }

    func readOnlyError(_ operation: String, _ path: String) -> IOError {
        ioError(.readOnlyFileSystem, operation, path, "read-only file system")
    }

    func powerLoss(_ operation: String, _ path: String) -> IOError {
        ioError(.crashed, operation, path, "simulated power loss")
    }

    // MARK: Lookup

    /// The id of the directory named by `components`.
    func directoryID(_ components: ArraySlice<String>, _ operation: String, _ path: String) throws -> Int {
        var id = Self.rootID
        for name in components {
            guard let next = directories[id]!.entries[name] else {
                throw ioError(.notFound, operation, path, "no such directory")
            }
            guard directories[next] != nil else {
                throw ioError(.notADirectory, operation, path, "\(name) is not a directory")
            }
            id = next
        }
        return id
    }

    /// The node a path names, nil when it does not exist (its parent may be missing too);
    /// throws when a component before the last is a file.
    func lookup(_ components: [String], _ operation: String, _ path: String) throws -> Int? {
        var id = Self.rootID
        for name in components {
            guard let directory = directories[id] else {
                throw ioError(.notADirectory, operation, path, "a path component is not a directory")
            }
            guard let next = directory.entries[name] else { return nil }
            id = next
        }
        return id
    }

    /// The inode behind an open handle.
    mutating func openInode(_ token: Int, _ kind: SimulatedFileSystem.OperationKind, _ operation: String, _ path: String) throws -> Int {
        try begin(kind, operation, path)
        guard let inode = openHandles[token] else { throw ioError(.closed, operation, path, "file is closed") }
        return inode
    }

    // MARK: Changes

    mutating func newNodeID() -> Int {
        defer { nextNodeID += 1 }
        return nextNodeID
    }

    mutating func newToken() -> Int {
        defer { nextToken += 1 }
        return nextToken
    }

    mutating func createFile(named name: String, in directory: Int) -> Int {
        let id = newNodeID()
        files[id] = FileNode()
        creatingOperation[id] = recordEntries([EntryChange(name: name, target: id)], in: directory)
        return id
    }

    /// Records one entry operation in `directory`, numbered; returns its number.
    @discardableResult
    mutating func recordEntries(_ changes: [EntryChange], in directory: Int, id: Int? = nil) -> Int {
        let number = id ?? newEntryOperation()
        directories[directory]!.record(changes, id: number)
        return number
    }

    mutating func newEntryOperation() -> Int {
        defer { nextEntryOperation += 1 }
        return nextEntryOperation
    }

    /// Drops inodes nothing refers to any more, live or in some possible crash state, so a
    /// long workload that removes files does not keep their bytes forever.
    mutating func collectGarbage() {
        var referenced = Set(openHandles.values)
        referenced.formUnion(heldLocks.values)
        for directory in directories.values {
            referenced.formUnion(directory.entries.values)
            referenced.formUnion(directory.durableEntries.values)
            for operation in directory.pending {
                for change in operation {
                    if let target = change.target { referenced.insert(target) }
                }
            }
        }
        if files.keys.contains(where: { !referenced.contains($0) }) {
            files = files.filter { referenced.contains($0.key) }
        }
        // A creation no directory still holds pending is durable (or gone) for good.
        let pendingOperations = Set(directories.values.flatMap(\.pendingIDs))
        creatingOperation = creatingOperation.filter { pendingOperations.contains($0.value) }
    }
}

/// The components of a path: "/" is root, duplicate and trailing slashes and "." are
/// ignored, ".." goes up (stopping at root). Relative paths are taken from root.
func pathComponents(_ path: String, _ operation: String) throws -> [String] {
    guard !path.isEmpty else { throw ioError(.notFound, operation, path, "empty path") }
    var components: [String] = []
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
        switch part {
        case ".": continue
        case "..": _ = components.popLast()
        default: components.append(String(part))
        }
    }
    return components
}

func ioError(_ code: IOError.Code, _ operation: String, _ path: String, _ text: String) -> IOError {
    IOError(code: code, operation: operation, path: path, message: "\(operation) \(path): \(text) (simulated file system)")
}
