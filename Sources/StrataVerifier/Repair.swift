import StrataIO

/// The only two changes the verifier ever makes to a store.
enum Repair {
    enum Action {
        /// Cut the WAL segment at `offset`, then zero-fill it back to its old size, as
        /// recovery does, so every byte past the data is zero again (docs/format/wal.md).
        case truncateWAL(file: String, offset: Int)
        /// Delete a file nothing references.
        case remove(file: String)

        var file: String {
            switch self {
            case .truncateWAL(let file, _), .remove(let file): file
            }
        }
    }
}

extension VerificationRun {
    /// Carries out every repair the check found. A failure is reported as a finding and the
    /// rest still run: each repair stands alone.
    mutating func repair() {
        let fs = directory.fileSystem
        var removed = false
        for (index, action) in repairs {
            do {
                switch action {
                case .truncateWAL(let file, let offset):
                    let handle = try fs.openFile(directory.filePath(file), create: false)
                    defer { try? handle.close() }
                    let size = try handle.size()
                    try handle.truncate(to: Int64(offset))
                    try handle.preallocate(to: size)
                    try handle.sync()
                case .remove(let file):
                    precondition(
                        !referenced.contains(file) || unsyncedSegments.contains(file), "repair must never remove \(file): the store reads it")
                    try fs.removeFile(directory.filePath(file))
                    removed = true
                }
                markRepaired(index)
            } catch {
                add(
                    VerifierFinding(
                        severity: .error, file: action.file, code: FindingCode.repairFailed,
                        message: "repair failed (\(error)); nothing else was changed in this file: fix the cause and run the repair again"))
            }
        }
        guard removed else { return }
        do {
            try fs.syncDirectory(directory.path)
        } catch {
            add(
                VerifierFinding(
                    severity: .error, file: "", code: FindingCode.repairFailed,
                    message: "the deletions may not be durable: syncing the directory failed (\(error)); run the repair again"))
        }
    }
}
