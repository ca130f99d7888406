@_spi(Engine) import StrataFormat
import StrataIO

/// What ``Store/checkpoint(to:)`` made.
public struct CheckpointReport: Sendable, Equatable {
    /// The commit sequence the copy holds: every commit up to it, nothing after.
    public let version: UInt64
    /// The store's segment files in the copy: hard links (no bytes copied), or copies when
    /// the destination is on another volume.
    public let sharedFiles: Int
    /// New segment files holding the commits that were still in memory.
    public let memtableFiles: Int
}

extension Store {
    /// Writes a consistent copy of the store, as of the latest commit, to `destination`,
    /// while reads and writes go on. The copy opens as a store and passes `strata-fsck`.
    ///
    /// Segment files never change once written, so they are shared by hard links (copied
    /// when `destination` is on another volume); the commits not yet flushed are written
    /// from memory as new segment files; a fresh manifest names them all. Nothing is read
    /// from or written to the store's own log, and the writer is never paused.
    ///
    /// The copy gets an identity of its own: it is a new store from the moment it exists,
    /// so references taken in one are refused by the other.
    ///
    /// A store opened read-only (``StoreOptions/readOnly``) checkpoints what it read when it
    /// opened, even if a writer in another process has removed some of those files since:
    /// the ones it still has open are copied instead of linked.
    ///
    /// `destination` must not exist or be an empty directory; its parent must exist. The copy
    /// is finished by writing its identity file last, so a copy interrupted by a crash is
    /// never taken for a store (opening it fails with `.notAStore`); delete it and start
    /// again.
    ///
    /// - Throws: `StoreError` `.invalidArgument` when `destination` holds something, is a
    ///   file, or its parent directory does not exist (nothing is created then);
    ///   `.suspended` or `.closed` when the store refuses calls; `.io` or `.diskFull` when
    ///   writing the copy fails.
    @discardableResult
    public func checkpoint(to destination: String) throws -> CheckpointReport {
        _ = try admit()
        if destination.isEmpty {
            throw StoreError(.invalidArgument, "the checkpoint's destination is empty; give a directory that does not exist yet, or an empty one")
        }
        try KeyValidation.checkStorePath(destination, role: "checkpoint's destination")
        let view = try published.current()
        return try Checkpoint(source: path, destination: destination, view: view, options: options).run()
    }
}

/// One checkpoint (docs/format/store.md, "Checkpoints"): the files of one Version, the
/// memtable entries at or below one sequence, a manifest, then the identity file.
struct Checkpoint {
    let source: String
    let destination: String
    let view: ReadView
    let options: StoreOptions

    private var fs: any FileSystem { options.fileSystem }

    func run() throws -> CheckpointReport {
        do {
            return try write()
        } catch {
            throw StoreError.wrapping(error, while: "writing a checkpoint to \(destination)")
        }
    }

    private func write() throws -> CheckpointReport {
        try prepareDestination()
        let version = view.version
        var metas: [SegmentMeta] = []
        var linked = 0
        var written = 0
        for table in version.levels.joined() {
            let name = ManifestFormat.segmentFileName(table.number)
            do {
                try fs.linkOrCopyFile(fs.path(source, name), to: fs.path(destination, name))
            } catch let error as IOError where error.code == .notFound {
                // Gone from the directory, but still open here: a store opened read-only whose
                // writer, in another process, compacted the file away. Copy what the table reads.
                try table.copy(to: fs.path(destination, name))
            }
            metas.append(table.meta)
            linked += 1
        }
        // Unflushed commits, oldest memtable first, each as one level-0 file numbered above
        // every file of the version: level 0 is searched newest number first, and memtables
        // hold newer data than any file.
        var nextNumber = (metas.map(\.fileNumber).max() ?? 0) + 1
        for table in ([version.memtable] + version.sealed).reversed() {
            if let meta = try writeMemtable(table, number: nextNumber) {
                metas.append(meta)
                written += 1
                nextNumber += 1
            }
        }
        try fs.syncDirectory(destination)
        let snapshot = VersionEdit(
            logNumber: 1, lastSequence: view.sequence, nextFileNumber: nextNumber + 1,
            added: metas.sorted { ($0.level, $0.fileNumber) < ($1.level, $1.fileNumber) },
            storeIdentifier: StoreIdentity.generate(), droppedDeletions: version.droppedDeletions)
        let manifest = try ManifestWriter.install(number: nextNumber, snapshot: snapshot, fileSystem: fs, directory: destination)
        manifest.close()
        try Recovery.writeIdentityFile(directory: destination, fileSystem: fs)
        // The directory's own entry, in its parent, is durable only once the parent is
        // synced: without it a crash could lose the whole finished copy. Done last rather
        // than when the directory is made, so that it also covers an empty directory the
        // caller gave, or one a failed checkpoint left before its own parent sync.
        try fs.syncDirectory(Recovery.parentDirectory(of: destination))
        return CheckpointReport(version: view.sequence, sharedFiles: linked, memtableFiles: written)
    }

    /// Creates the destination, or accepts an empty directory; refuses anything else.
    private func prepareDestination() throws {
        switch try fs.kind(of: destination) {
        case nil:
            // Its entry in the parent is made durable once the copy is complete (`write`).
            do {
                try fs.createDirectory(destination)
            } catch let error as IOError where error.code == .notFound {
                throw StoreError(
                    .invalidArgument,
                    "the checkpoint's destination \(destination) cannot be created: its parent directory does not exist; create it first, or give another path",
                    file: destination, underlying: error)
            }
        case .directory?:
            let names = try fs.listDirectory(destination)
            guard names.isEmpty else {
                throw StoreError(
                    .invalidArgument, "the checkpoint's destination \(destination) is not empty; give a new path or an empty directory",
                    file: destination)
            }
        default:
            throw StoreError(.invalidArgument, "the checkpoint's destination \(destination) is a file; give a new path", file: destination)
        }
        if try fs.kind(of: destination) != .directory {
            throw StoreError(.invalidArgument, "the checkpoint's destination \(destination) could not be created as a directory", file: destination)
        }
    }

    /// Writes the entries of `table` at or below the view's sequence as a level-0 file; nil
    /// when there are none. The writer may be inserting into the active table meanwhile:
    /// readers walk it safely, and newer entries are skipped.
    private func writeMemtable(_ table: MemTable, number: UInt64) throws -> SegmentMeta? {
        var output = SegmentOutput(level: 0, options: options)
        try table.forEachNode { node in
            guard node.sequence <= view.sequence else { return }
            try output.add(node)
        }
        guard output.entryCount > 0 else { return nil }
        return try output.write(number: number, fileSystem: fs, directory: destination)
    }
}
