import StrataFormat
import StrataIO

/// A store directory held under its `LOCK` for the length of one check, so a running store
/// cannot write while the verifier reads, and the verifier never reads a half-written file.
struct StoreDirectory {
    let path: String
    let fileSystem: any FileSystem
    private let lock: any FileLock
    /// The directory's entries, sorted so reports come out in the same order every time.
    let names: [String]
    /// The same names, for lookups.
    let nameSet: Set<String>
    /// Entries that are not regular files (directories, sockets, ...).
    let nonFiles: Set<String>

    /// Checks that `path` is a store and takes its lock. The identity file is looked for
    /// first, so the verifier never creates `LOCK` in a directory that is not a store.
    static func open(path: String, fileSystem: any FileSystem) throws(VerifierError) -> StoreDirectory {
        let kind = try io("looking at \(path)", path) { try fileSystem.kind(of: path) }
        switch kind {
        case nil:
            throw VerifierError(.notFound, "there is nothing at \(path); give the path of a store directory", path: path)
        case .file, .other:
            throw VerifierError(.notADirectory, "\(path) is not a directory; a Strata store is a directory holding a STRATA file", path: path)
        case .directory:
            break
        }
        let before = try list(path, fileSystem)
        guard before.contains(StoreIdentityFormat.fileName) else {
            let interrupted = before.contains(StoreIdentityFormat.fileName + ".tmp")
            throw VerifierError(
                .notAStore,
                interrupted
                    ? "\(path) is not a Strata store yet: its creation was interrupted (only STRATA.tmp is there); opening it with Strata creates the store"
                    : "\(path) is not a Strata store: it has no STRATA file", path: path)
        }
        let lockPath = fileSystem.path(path, StoreFileName.lockFileName)
        let lock: any FileLock
        do {
            lock = try fileSystem.lockFile(lockPath)
        } catch let error as IOError where error.code == .wouldBlock {
            throw VerifierError(
                .locked,
                "the store at \(path) is open in a running process, which holds its lock file \(lockPath); close it first (or suspend it), then check it again",
                path: path, underlying: error)
        } catch {
            throw ioError(error, "taking the store's lock", lockPath)
        }
        do {
            // Listed again under the lock: this listing is the one that counts.
            let names = try list(path, fileSystem).sorted()
            var nonFiles = Set<String>()
            for name in names {
                let entryPath = fileSystem.path(path, name)
                if try io("looking at \(entryPath)", entryPath, { try fileSystem.kind(of: entryPath) }) != .file {
                    nonFiles.insert(name)
                }
            }
            return StoreDirectory(path: path, fileSystem: fileSystem, lock: lock, names: names, nameSet: Set(names), nonFiles: nonFiles)
        } catch {
            try? lock.unlock()
            throw error
        }
    }

    func filePath(_ name: String) -> String { fileSystem.path(path, name) }

    /// The whole file.
    func read(_ name: String) throws -> [UInt8] {
        let handle = try fileSystem.openFileForReading(filePath(name))
        defer { try? handle.close() }
        return try handle.readAll()
    }

    func unlock() {
        try? lock.unlock()
    }

    private static func list(_ path: String, _ fileSystem: any FileSystem) throws(VerifierError) -> [String] {
        try io("listing \(path)", path) { try fileSystem.listDirectory(path) }
    }

    private static func io<T>(_ doing: String, _ path: String, _ body: () throws -> T) throws(VerifierError) -> T {
        do {
            return try body()
        } catch {
            throw ioError(error, doing, path)
        }
    }

    private static func ioError(_ error: any Error, _ doing: String, _ path: String) -> VerifierError {
        let underlying = error as? IOError
        return VerifierError(
            .io, "failed \(doing): \(underlying?.message ?? "\(error)"); check the path and its permissions", path: path, underlying: underlying)
    }
}
