import StrataIO

// Opening a store read-only (`StoreOptions.readOnly`): the replay of an ordinary open, with
// no lock, no repair and no new file (Recovery.replay), so it works on read-only media and
// alongside a writer in another process.
extension Recovery {
    /// How many times a read-only open reads the directory afresh after a writer changed it
    /// while it was being read, before giving up.
    static let readOnlyAttempts = 8

    /// Opens the store at `path` for reading only. Creates nothing and takes no lock.
    ///
    /// A writer may install a new manifest, retire WAL segments or remove compacted segment
    /// files between this open's listing of the directory and its opening of those files.
    /// Files it has opened stay readable (a removed file lives on while open), but one
    /// removed before it was opened makes the attempt fail; when the directory's listing has
    /// changed since the attempt began, the open starts again from the new listing.
    static func openReadOnly(path: String, options: StoreOptions) throws -> OpenedStore {
        let fs = options.fileSystem
        guard !path.isEmpty else {
            throw StoreError(.invalidArgument, "the store's path is empty; give the directory that holds the store")
        }
        do {
            switch try fs.kind(of: path) {
            case nil:
                throw StoreError(.notAStore, "there is no store at \(path); a store opened read-only is never created", file: path)
            case .directory:
                break
            case .file, .other:
                throw StoreError(.notAStore, "\(path) is a file, not a Strata store; a store is a directory", file: path)
            }
        } catch let error as IOError {
            throw StoreError(error, while: "looking for the store at \(path)")
        }
        var attempt = 1
        while true {
            let names: Set<String>
            do {
                names = Set(try fs.listDirectory(path))
            } catch {
                throw mapEngineError(error, while: "listing the store directory")
            }
            do {
                return try replay(path: path, options: options, names: names)
            } catch {
                let failure = mapEngineError(error, while: "opening the store at \(path) read-only")
                // An unchanged directory means the failure is the store's own: report it.
                guard let now = try? Set(fs.listDirectory(path)), now != names else { throw failure }
                guard attempt < readOnlyAttempts else {
                    throw StoreError(
                        .locked,
                        "the store at \(path) changed \(attempt) times while it was being opened read-only: another Store is writing to it and removed files before they could be read; open it again (the last attempt failed with: \(failure))",
                        file: path)
                }
                options.logger.debug(
                    "the store changed while it was being opened read-only; reading it again", metadata: ["attempt": "\(attempt)", "error": "\(failure)"])
                attempt += 1
            }
        }
    }
}
