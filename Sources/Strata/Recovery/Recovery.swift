import Logging
@_spi(Engine) import StrataFormat
import StrataIO

/// Opening a store: take the lock, check or create the identity file, replay the WAL into a
/// memtable, and leave the log ready for appends. The rules it applies to damaged bytes are
/// in docs/format/wal.md ("Recovery"). A read-only open (ReadOnlyOpen.swift) reads the same
/// way and changes nothing.
struct OpenedStore {
    let memtable: MemTable
    /// The log, open for appends; nil for a store opened read-only.
    let wal: WALWriter?
    let lastSequence: UInt64
    let report: RecoveryReport
    /// The persisted state, publishing the recovered Version.
    let versions: VersionSet
    let cache: BlockCache
    /// What a reload found for the change feeds, when asked (`Recovery.reload`).
    var history: ReloadHistory? = nil
}

enum Recovery {
    /// Opens the store at `path`: prepares the directory, takes `lock` (which must be this
    /// path's) and replays. On failure the lock is released again.
    static func open(path: String, lock: StoreLock, options: StoreOptions) throws -> OpenedStore {
        let fs = options.fileSystem
        guard options.walSegmentBytes >= 64 * 1024 else {
            throw StoreError(.invalidArgument, "walSegmentBytes is \(options.walSegmentBytes); it must be at least 65536")
        }
        try prepareDirectory(path, options: options)
        // Refuse someone else's directory before creating LOCK in it; the check is repeated
        // under the lock, where it is authoritative.
        do {
            try refuseForeignDirectory(path, names: Set(fs.listDirectory(path)))
        } catch let error as IOError {
            throw StoreError(error, while: "listing the store directory")
        }
        try lock.acquire()
        do {
            return try replay(path: path, options: options, names: Set(fs.listDirectory(path)))
        } catch {
            lock.release()
            throw mapEngineError(error, while: "opening the store at \(path)")
        }
    }

    /// Reads the store's state from disk again, as an open does, for a store that already
    /// holds its lock: `resume()` after another process changed the store. The lock stays
    /// held whatever happens.
    /// Reads the store's state again after another process wrote to it, into `published`.
    /// With `history`, also gathers the commits after its floor that the WAL still holds one
    /// by one, for the change feeds (`ReloadHistory`).
    static func reload(path: String, options: StoreOptions, into published: PublishedState, history: ReloadHistory.Request? = nil) throws
        -> OpenedStore
    {
        do {
            return try replay(
                path: path, options: options, names: Set(options.fileSystem.listDirectory(path)), published: published, history: history)
        } catch {
            throw mapEngineError(error, while: "reloading the store at \(path)")
        }
    }

    private static func prepareDirectory(_ path: String, options: StoreOptions) throws {
        let fs = options.fileSystem
        guard !path.isEmpty else {
            throw StoreError(.invalidArgument, "the store's path is empty; give the directory that holds, or will hold, the store")
        }
        do {
            switch try fs.kind(of: path) {
            case nil:
                guard options.createIfMissing else {
                    throw StoreError(.notAStore, "there is no store at \(path), and createIfMissing is false")
                }
                do {
                    try fs.createDirectory(path)
                } catch let error as IOError where error.code == .notFound {
                    throw StoreError(.invalidArgument, "cannot create the store at \(path): its parent directory does not exist", file: path, underlying: error)
                }
            case .directory:
                break
            case .file, .other:
                throw StoreError(.notAStore, "\(path) is a file, not a Strata store; a store is a directory", file: path)
            }
            // The directory's own entry is durable only once its parent is synced, and every
            // open does it, not only the one that made the directory: an attempt whose parent
            // sync failed (or that failed later in creating the store) leaves the directory and
            // maybe its identity file behind, and the next open, finding them, went on to
            // acknowledge commits that a crash could lose with the whole directory. The same
            // holds for an empty directory the caller made. A parent this process may not
            // read cannot be synced; its entry is then up to whoever made it.
            do {
                try fs.syncDirectory(parentDirectory(of: path))
            } catch let error as IOError where error.code == .permissionDenied {}
        } catch let error as IOError {
            throw StoreError(error, while: "preparing the store directory")
        }
    }

    static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// Checks the identity file, or writes it atomically into an empty directory when
    /// `mayCreate`; without it, a directory with no identity file holds no store.
    private static func checkIdentity(path: String, names: Set<String>, fs: any FileSystem, mayCreate: Bool) throws {
        let identityPath = fs.path(path, StoreIdentityFormat.fileName)
        if names.contains(StoreIdentityFormat.fileName) {
            let bytes = try fs.readWholeFile(identityPath)
            do {
                _ = try StoreIdentityFormat.validate(bytes)
            } catch {
                throw StoreError(error, file: identityPath, isIdentityFile: true)
            }
            return
        }
        guard mayCreate else {
            throw StoreError(
                .notAStore, "\(path) holds no Strata store (it has no \(StoreIdentityFormat.fileName) file), and a store opened read-only is never created",
                file: path)
        }
        try refuseForeignDirectory(path, names: names)
        try writeIdentityFile(directory: path, fileSystem: fs)
    }

    /// Writes the identity file atomically (docs/format/store.md): to `STRATA.tmp`, synced,
    /// renamed into place, the directory synced. Creating a store and finishing a checkpoint
    /// both end with it, so a directory without it is never taken for a store.
    static func writeIdentityFile(directory path: String, fileSystem fs: any FileSystem) throws {
        let temporaryPath = fs.path(path, StoreIdentityFormat.fileName + ".tmp")
        let handle = try fs.openFile(temporaryPath, create: true)
        do {
            try handle.truncate(to: 0)
            try handle.write(StoreIdentityFormat.encode(), at: 0)
            try handle.sync()
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        try fs.rename(temporaryPath, to: fs.path(path, StoreIdentityFormat.fileName))
        try fs.syncDirectory(path)
    }

    /// Throws `.notAStore` for a directory that holds files but no identity file: it
    /// belongs to someone else. Only `LOCK` and `STRATA.tmp` may precede the identity file.
    private static func refuseForeignDirectory(_ path: String, names: Set<String>) throws {
        guard !names.contains(StoreIdentityFormat.fileName) else { return }
        let strangers = names.subtracting([StoreLock.fileName, StoreIdentityFormat.fileName + ".tmp"])
        if !strangers.isEmpty {
            let sample = strangers.sorted().prefix(3).joined(separator: ", ")
            throw StoreError(.notAStore, "\(path) holds files (\(sample)) but no Strata store; open an empty directory or a new path", file: path)
        }
    }

    /// Reads the store's state from its files: the manifest's levels, then the WAL replayed
    /// into a memtable. `names` is a listing of the directory.
    ///
    /// A store that writes repairs the directory on the way (removes files nothing
    /// references and an interrupted WAL segment, cuts a torn tail off the log, writes a sync
    /// mark and a fresh manifest) and leaves the log open for appends. A store opened
    /// read-only (`options.readOnly`) does none of it: it only opens files for reading, skips
    /// what the repairs would remove, and closes every WAL segment once replayed.
    static func replay(
        path: String, options: StoreOptions, names listed: Set<String>, published existing: PublishedState? = nil,
        history request: ReloadHistory.Request? = nil
    ) throws -> OpenedStore {
        let fs = options.fileSystem
        let logger = options.logger
        let readOnly = options.readOnly
        guard !(readOnly && options.salvage) else {
            throw StoreError(.invalidArgument, "a store opened read-only cannot be salvaged, since salvage writes; leave out readOnly or salvage")
        }
        try checkIdentity(path: path, names: listed, fs: fs, mayCreate: !readOnly)

        var names = listed
        var report = RecoveryReport()
        let cache = BlockCache(capacity: options.blockCacheBytes)
        // A salvaging open gives up what it cannot read instead of failing (Salvage.swift).
        var salvage: SalvageRun? = options.salvage ? SalvageRun() : nil
        var loaded = try Salvage.loadManifest(path: path, names: &names, options: options, cache: cache, report: &report, run: &salvage)
        if salvage != nil {
            try Salvage.dropDamagedSegments(&loaded, path: path, names: &names, options: options, report: &report, run: &salvage!)
        }
        var levels = try loaded.openLevels(directory: path, fileSystem: fs, cache: cache)
        report.segmentFiles = loaded.segments.count

        if !readOnly {
            try removeUnreferencedFiles(path: path, names: names, loaded: loaded, options: options, report: &report)
            names = Set(try fs.listDirectory(path))
        }

        var segments = names.compactMap(WALWriter.segmentNumber(fromName:)).filter { $0 >= loaded.state.logNumber }.sorted()

        // A last segment whose header never reached the disk, with nothing after it, is a
        // segment creation that a crash interrupted: remove it (WALWriter invariant 3), or
        // when read-only, pass over it.
        // The last segment's bytes, read once for this check and for replay.
        // A last segment that does not even start with the WAL magic is no segment of this
        // store (WALWriter writes the header before anything else): it is set aside, never
        // removed, and the one before it is the last.
        var lastSegmentBytes: [UInt8]? = nil
        while let last = segments.last {
            let lastName = WALWriter.segmentName(last)
            let lastPath = fs.path(path, lastName)
            let bytes = try fs.readWholeFile(lastPath)
            lastSegmentBytes = bytes
            if WALTail.isIncompleteSegment(bytes) {
                lastSegmentBytes = nil
                segments.removeLast()
                if !readOnly {
                    try removeIfPresent(lastPath, fs)
                    try fs.syncDirectory(path)
                    report.removedIncompleteSegments.append(lastName)
                    logger.warning("removed a WAL segment whose creation was interrupted", metadata: ["file": "\(lastPath)"])
                }
                break
            }
            guard case .foreign(let reason) = FileRecognition.wal(bytes, number: last) else { break }
            lastSegmentBytes = nil
            segments.removeLast()
            if !readOnly {
                try AsideDirectory.move(lastName, in: path, reason: reason, options: options, report: &report)
            }
        }

        var replayed = ReplayBuffer()
        var lastSequence: UInt64 = loaded.state.lastSequence
        var segmentSizes: [UInt64: Int] = [:]
        var writerHandle: (any FileHandle)? = nil
        var writerOffset = WALFormat.headerSize
        var writerProvenThrough = WALFormat.headerSize
        var writerFileSize = 0

        var index = 0
        while index < segments.count {
            let number = segments[index]
            var isLast = index == segments.count - 1
            let segmentPath = fs.path(path, WALWriter.segmentName(number))
            // Only the last segment of a store that writes is written to again (and one whose
            // roll a crash interrupted, below).
            var handle = try isLast && !readOnly ? fs.openFile(segmentPath, create: false) : fs.openFileForReading(segmentPath)
            defer { index += 1 }
            do {
                let bytes = try (isLast ? lastSegmentBytes : nil) ?? handle.readAll()
                var header = WALFormat.SegmentHeader(segmentNumber: number)
                do {
                    header = try bytes.withUnsafeBytes { try WALFormat.SegmentHeader.decode($0) }
                } catch let error as FormatError {
                    if case .unsupportedVersion = error.kind { throw StoreError(error, file: segmentPath) }
                    guard salvage != nil else { throw StoreError(error, file: segmentPath) }
                    Salvage.dropHeader(
                        name: WALFormat.fileName(number), reason: "the segment's header is damaged (\(error.message))", run: &salvage!, logger: logger)
                }
                if header.segmentNumber != number {
                    guard salvage != nil else {
                        throw StoreError(
                            .corruption, "the WAL segment's header says it is number \(header.segmentNumber), but its name says \(number)",
                            file: segmentPath, offset: 16)
                    }
                    Salvage.dropHeader(
                        name: WALFormat.fileName(number), reason: "the segment's header says it is number \(header.segmentNumber)", run: &salvage!,
                        logger: logger)
                }
                let later = segments[(index + 1)...]
                let laterNames = later.map(WALWriter.segmentName)
                let laterProof: (() -> SyncEvidence?)? =
                    isLast ? nil : { WALTail.laterSegmentProof(names: laterNames) { try? fs.readWholeFile(fs.path(path, $0)) } }
                let outcome =
                    salvage != nil
                    ? Salvage.replaySegment(
                        bytes, name: WALFormat.fileName(number), path: segmentPath, later: laterProof, into: &replayed,
                        lastSequence: &lastSequence, report: &report, run: &salvage!, logger: logger)
                    : try replaySegment(
                        bytes, path: segmentPath, later: laterProof, into: &replayed,
                        lastSequence: &lastSequence, report: &report)
                let end = outcome.end
                report.segmentsReplayed += 1
                segmentSizes[number] = end
                // A roll whose sync a crash interrupted (WALWriter invariant 2) leaves this
                // segment torn at its end (judged by the reader), or ending early in zeros, with
                // nothing proving it complete (no mark) and the next segment not continuing it.
                // Either way, with no later segment proving a sync of its own, the log ends here.
                var tornRoll = false
                if let laterProof {
                    if case .tornTail? = outcome.damage {
                        tornRoll = true
                    } else {
                        tornRoll = WALTail.endsAtUnfinishedRoll(
                            outcome, lastSequence: lastSequence, next: { try? fs.readWholeFile(fs.path(path, laterNames[0])) },
                            later: laterProof)
                    }
                }
                if tornRoll {
                    // The segments after this one hold only writes never synced, which follow
                    // the lost bytes: they are not replayed, and go.
                    for dropped in later {
                        let name = WALWriter.segmentName(dropped)
                        report.removedUnsyncedSegments.append(name)
                        if !readOnly { try removeIfPresent(fs.path(path, name), fs) }
                    }
                    if !readOnly {
                        try fs.syncDirectory(path)
                        logger.warning(
                            "removed WAL segments that followed a torn write", metadata: ["files": "\(report.removedUnsyncedSegments)"])
                        try handle.close()
                        handle = try fs.openFile(segmentPath, create: false)
                    }
                    segments.removeSubrange((index + 1)...)
                    isLast = true
                } else if !isLast && !readOnly && outcome.provenThrough < end {
                    // A roll whose sync a crash may have interrupted, with every byte still
                    // readable (from the page cache, perhaps): synced and marked now, before
                    // any later segment is synced, as the writer would have (WALWriter
                    // invariant 2). Bytes no successful sync is known to cover are written
                    // again first, as for the last segment below.
                    try handle.close()
                    handle = try fs.openFile(segmentPath, create: false)
                    try rewriteUnproven(bytes, outcome: outcome, handle: handle)
                    let mark = WALWriter.framedSyncMark(sequence: lastSequence, at: end)
                    let finishing = WALRolledSegment(
                        handle: handle, end: end, synced: false, mark: mark,
                        preallocatedEnd: Int(try handle.size()))
                    try finishing.finish()
                    segmentSizes[number] = end + mark.count
                    continue
                }
                if isLast && !readOnly {
                    if let tail = report.truncatedTail {
                        logger.warning(
                            "cut a torn write off the end of the WAL",
                            metadata: [
                                "file": "\(tail.file)", "offset": "\(tail.offset)", "discardedBytes": "\(tail.discardedBytes)"
                            ])
                        // Cut the torn bytes off and zero-fill again (WALWriter invariant 4).
                        try handle.truncate(to: Int64(end))
                        try handle.preallocate(to: Int64(WALWriter.preallocationTarget(for: end)))
                    }
                    // Whatever a crashed process left in the page cache becomes durable now,
                    // so the writer may treat everything up to `end` as synced. The bytes no
                    // successful sync is known to cover are written again first: after a
                    // failed fdatasync, Linux marks the pages it could not write clean, so
                    // this replay read them from the cache, but no later sync would write
                    // them; once the commits acknowledged after this open were synced, a
                    // power loss left a hole before them (the log no longer opened, or lost
                    // them). Usually only a sync mark's bytes, since a clean close syncs all.
                    try rewriteUnproven(bytes, outcome: outcome, handle: handle)
                    try handle.sync()
                    if header.majorVersion < WALFormat.majorVersion {
                        // Written by an older format, which has no sync marks: appends go to
                        // a new segment, and this one, synced in full, is no longer the last.
                        try handle.close()
                    } else {
                        writerHandle = handle
                        writerOffset = end
                        writerProvenThrough = outcome.provenThrough
                        writerFileSize = Int(try handle.size())
                    }
                } else {
                    if isLast, let tail = report.truncatedTail {
                        // Read-only: the torn bytes stay; the next store that writes cuts them.
                        logger.info(
                            "skipped a torn write at the end of the WAL (opened read-only, so it stays)",
                            metadata: [
                                "file": "\(tail.file)", "offset": "\(tail.offset)", "discardedBytes": "\(tail.discardedBytes)"
                            ])
                    }
                    try handle.close()
                }
            } catch {
                try? handle.close()
                throw error
            }
        }

        // The log holds every commit after the manifest's last sequence one by one (they are
        // replayed in order from there, none missing); the ones before are only in segments.
        let historyCommits = request.map { replayed.commits(after: $0.floor, wanted: $0.wants) }
        let keptAfter = loaded.state.lastSequence
        var memtable = MemTable(runLength: options.memtableRunLength)
        replayed.apply(to: memtable)
        report.lastSequence = lastSequence
        // After a salvaged replay, what was read goes into a segment file and the log starts
        // afresh, so the next open meets none of the damage (the replayed segments are
        // retired once the new manifest is installed).
        var retiredLog: [UInt64] = []
        if let run = salvage, run.mustRewriteLog {
            try writerHandle?.close()
            writerHandle = nil
            if let table = try Salvage.writeReplayed(
                memtable, loaded: &loaded, lastSequence: lastSequence, lastWAL: segments.last, path: path, options: options, cache: cache)
            {
                levels[0].insert(table, at: 0)
            }
            memtable = MemTable(runLength: options.memtableRunLength)
            segmentSizes = [:]
            retiredLog = segments
        }

        if readOnly {
            // A store from before format 1.1 has no identity yet, and only a store that writes
            // records one: this open gets one of its own, so its references are refused by
            // any other open of the store rather than taken for theirs.
            if loaded.state.storeIdentifier.isEmpty { loaded.state.storeIdentifier = StoreIdentity.generate() }
            let published = publish(memtable: memtable, levels: levels, state: loaded.state, sequence: lastSequence, into: existing)
            let versions = VersionSet(
                published: published, wal: WALInventory(segmentSizes), manifest: nil, state: loaded.state,
                directory: path, options: options)
            return OpenedStore(memtable: memtable, wal: nil, lastSequence: lastSequence, report: report, versions: versions, cache: cache)
        }

        let handle: any FileHandle
        let number: UInt64
        if let writerHandle, let last = segments.last {
            handle = writerHandle
            number = last
        } else {
            // Never below the manifest's log number: that WAL segment may have been retired.
            let last = segments.last ?? 0
            // A WAL file numbered 2^64 - 1 leaves no number for the next (`+ 1` would trap).
            guard last < UInt64.max else {
                throw StoreError(
                    .corruption, "the WAL file numbered \(last) leaves no number for a new one; it is not a file Strata wrote",
                    file: fs.path(path, WALFormat.fileName(last)))
            }
            number = max(last + 1, loaded.state.logNumber)
            handle = try WALWriter.createSegment(fileSystem: fs, directory: path, number: number)
            writerOffset = WALFormat.headerSize
            writerProvenThrough = writerOffset
            writerFileSize = WALWriter.preallocationTarget(for: writerOffset)
        }
        let inventory = WALInventory(segmentSizes)
        let wal = WALWriter(
            fileSystem: fs, directory: path, segmentBytes: options.walSegmentBytes, inventory: inventory,
            handle: handle, segmentNumber: number, offset: writerOffset, provenThrough: writerProvenThrough,
            fileSize: writerFileSize, finishesRolledSegmentsInBackground: !options.runsBackgroundWorkInline,
            // A segment rolls at its size limit or when the memtable is sealed, whose records
            // take more room in memory than in the log: a quarter of the smaller is written
            // well before either, and by a store that writes in bulk.
            makesNextSegmentAfter: max(WALFormat.headerSize + 1, min(options.walSegmentBytes, options.memtableBytes) / 4),
            failpoints: options.failpoints)
        // The replayed records are synced now; a crash left no mark saying so, so write one
        // before anything else: from here on, damage to any of them is never taken for a
        // torn write (docs/format/wal.md, "Sync marks").
        try wal.writeSyncMarkIfNeeded(sequence: lastSequence)

        // A fresh manifest every open: it holds no torn tail, and a manifest an earlier
        // process failed to append to is never appended to again.
        let manifestNumber = loaded.state.nextFileNumber
        loaded.state.nextFileNumber += 1
        // A new store, or one written before format 1.1, gets its identity now; the snapshot
        // below records it.
        if loaded.state.storeIdentifier.isEmpty { loaded.state.storeIdentifier = StoreIdentity.generate() }
        let manifest = try ManifestWriter.install(
            number: manifestNumber, snapshot: VersionSet.snapshotEdit(loaded.state, Array(loaded.segments.values)),
            fileSystem: fs, directory: path, rollBytes: options.manifestRollBytes ?? ManifestWriter.rollBytes)
        if let run = salvage {
            if !retiredLog.isEmpty { try Salvage.retireLog(retiredLog, path: path, options: options, report: &report, run: run) }
            report.salvage = run.report
            if !run.report.isEmpty {
                logger.warning(
                    "opened a damaged store by salvage",
                    metadata: [
                        "manifestRebuilt": "\(run.report.manifestRebuilt ?? "no")", "droppedLogRegions": "\(run.report.droppedLogBytes.count)",
                        "missingSequences": "\(run.report.missingSequences)", "lostSegments": "\(run.report.lostSegments.map(\.file))"
                    ])
            }
        }
        let published = publish(memtable: memtable, levels: levels, state: loaded.state, sequence: lastSequence, into: existing)
        let versions = VersionSet(
            published: published, wal: inventory, manifest: manifest, state: loaded.state,
            directory: path, options: options)
        return OpenedStore(
            memtable: memtable, wal: wal, lastSequence: lastSequence, report: report,
            versions: versions, cache: cache,
            history: historyCommits.map {
                ReloadHistory(
                    commits: $0, keptAfter: keptAfter, lastSequence: lastSequence, storeID: StoreIdentity.uuid(loaded.state.storeIdentifier))
            })
    }

    /// The recovered state as what readers see: installed in `existing` (a reload) or in a
    /// new `PublishedState`.
    private static func publish(
        memtable: MemTable, levels: [[SegmentTable]], state: VersionSet.PersistedState, sequence: UInt64, into existing: PublishedState?
    ) -> PublishedState {
        let view = ReadView(
            version: Version(
                memtable: memtable, levels: levels, storeID: StoreIdentity.uuid(state.storeIdentifier),
                droppedDeletions: state.droppedDeletions),
            sequence: sequence)
        if let existing {
            existing.reset(to: view)
            return existing
        }
        return PublishedState(view)
    }

    /// Removes files nothing references: WAL segments a flush covered, segment files of a
    /// flush or compaction that never reached the manifest, and manifest leftovers. Only a
    /// file whose contents the store recognises as its own is removed; any other is set aside
    /// (`AsideDirectory`), since a name alone does not prove the store wrote it.
    private static func removeUnreferencedFiles(
        path: String, names: Set<String>, loaded: ManifestLoader, options: StoreOptions, report: inout RecoveryReport
    ) throws {
        let fs = options.fileSystem
        var removed: [String] = []
        for name in names.sorted() {
            // A file gone since the listing was removed by this process (see removeIfPresent).
            let verdict: FileRecognition.Verdict?
            do {
                verdict = try leftoverVerdict(name, path: path, loaded: loaded, fileSystem: fs)
            } catch let error as IOError where error.code == .notFound {
                continue
            }
            guard let verdict else { continue }
            switch verdict {
            case .own:
                try removeIfPresent(fs.path(path, name), fs)
                removed.append(name)
            case .foreign(let reason):
                try AsideDirectory.move(name, in: path, reason: reason, options: options, report: &report)
            }
        }
        report.removedUnreferencedFiles.append(contentsOf: removed)
        if !removed.isEmpty {
            try fs.syncDirectory(path)
            options.logger.info("removed files no manifest references", metadata: ["files": "\(removed)"])
        }
    }

    /// Removes a file that should go, and takes one already gone as removed: a snapshot of
    /// this process released since the directory was listed (a reload on `resume()`) removes
    /// its obsolete segment file itself.
    private static func removeIfPresent(_ path: String, _ fs: any FileSystem) throws {
        do {
            try fs.removeFile(path)
        } catch let error as IOError where error.code == .notFound {
            return
        }
    }

    /// For a file nothing references (by its name), whether its contents are the store's own;
    /// nil for any other file.
    private static func leftoverVerdict(
        _ name: String, path: String, loaded: ManifestLoader, fileSystem fs: any FileSystem
    ) throws -> FileRecognition.Verdict? {
        if let number = WALWriter.segmentNumber(fromName: name), number < loaded.state.logNumber {
            return FileRecognition.wal(try fs.readWholeFile(fs.path(path, name)), number: number)
        }
        if let number = ManifestFormat.number(fromSegmentName: name), loaded.segments[number] == nil {
            return FileRecognition.segment(try fs.readWholeFile(fs.path(path, name)))
        }
        let manifestNumber =
            ManifestFormat.number(fromTemporaryName: name)
            ?? ManifestFormat.number(fromManifestName: name).flatMap { $0 != loaded.currentManifest ? $0 : nil }
        if let manifestNumber {
            let identifier = loaded.state.storeIdentifier.isEmpty ? nil : loaded.state.storeIdentifier
            return FileRecognition.manifest(try fs.readWholeFile(fs.path(path, name)), number: manifestNumber, storeIdentifier: identifier)
        }
        return nil
    }

    /// Writes again the bytes of a replayed segment that no successful sync is known to
    /// cover (past the highest `syncedThrough` of its records; all of them when no record
    /// carries more than the header). After a failed fdatasync, Linux marks the pages it
    /// could not write clean: this replay read them from the cache, but no later sync would
    /// write them, and commits acknowledged after this open would follow a hole on the disk.
    /// Written again, they are dirty, and the caller's sync writes them.
    private static func rewriteUnproven(_ bytes: [UInt8], outcome: WALSegmentReader.Outcome, handle: any FileHandle) throws {
        let end = outcome.end
        let unproven = outcome.syncedThrough > WALFormat.headerSize ? min(outcome.syncedThrough, end) : 0
        if unproven < end {
            try bytes[unproven..<end].withUnsafeBytes { try handle.write($0, at: Int64(unproven)) }
        }
    }

    /// Replays one segment's records into `replayed` and returns where its valid data ends
    /// and how far the segment proves itself synced. The rules for damage are
    /// `WALSegmentReader`'s, shared with the verifier: damage is a torn tail unless a later
    /// record, or for a segment that is not the last a later segment (`later`), proves the
    /// damaged bytes had been synced.
    private static func replaySegment(
        _ bytes: [UInt8], path: String, later: (() -> SyncEvidence?)?, into replayed: inout ReplayBuffer,
        lastSequence: inout UInt64, report: inout RecoveryReport
    ) throws -> WALSegmentReader.Outcome {
        let outcome = try WALSegmentReader.read(bytes, later: later, sequenceFloor: lastSequence) { payload, offset in
            if try applyBatch(payload, path: path, offset: offset, into: &replayed, lastSequence: &lastSequence) {
                report.transactionsReplayed += 1
            }
        }
        switch outcome.damage {
        case nil:
            break
        case .corruption(let offset, let reason, .laterRecord(let proof))?:
            throw StoreError(
                .corruption,
                "WAL is damaged (\(reason)), and the record at byte \(proof) shows these bytes had been synced, so this is not a torn write; run strata-fsck (with --salvage it keeps what can still be read), or restore from a backup",
                file: path, offset: Int64(offset))
        case .corruption(let offset, let reason, .laterSegment(let file, let proof))?:
            throw StoreError(
                .corruption,
                "WAL segment is damaged (\(reason)), and the record at byte \(proof) of the later segment \(file) shows this one had been synced to its end, so this is not a torn write; run strata-fsck (with --salvage it keeps what can still be read), or restore from a backup",
                file: path, offset: Int64(offset))
        case .corruption(let offset, let reason, _)?:
            throw StoreError(
                .corruption,
                "WAL segment is damaged (\(reason)) in a part that had been synced; run strata-fsck (with --salvage it keeps what can still be read), or restore from a backup",
                file: path, offset: Int64(offset))
        case .tornTail(let offset, _, let discarded)?:
            report.truncatedTail = RecoveryReport.TruncatedTail(file: path, offset: Int64(offset), discardedBytes: Int64(discarded))
        }
        return outcome
    }

    /// Applies one record: a batch (returns true), or a sync mark, which changes nothing
    /// (returns false). Both must continue the sequence (docs/format/wal.md, rule 5).
    private static func applyBatch(
        _ payload: [UInt8], path: String, offset: Int, into replayed: inout ReplayBuffer,
        lastSequence: inout UInt64
    ) throws -> Bool {
        try payload.withUnsafeBytes { raw in
            let header: BatchFormat.Header
            do {
                header = try BatchFormat.decodeHeader(raw)
            } catch let error as FormatError {
                throw StoreError(error, file: path, baseOffset: Int64(offset))
            }
            if header.kind == .syncMark {
                guard header.sequence == lastSequence else {
                    throw StoreError(
                        .corruption, "a WAL sync mark carries sequence \(header.sequence), but the record before it has \(lastSequence)", file: path,
                        offset: Int64(offset))
                }
                return false
            }
            // `lastSequence < .max` first: no record can follow sequence 2^64 - 1, and `+ 1`
            // would trap on it.
            guard lastSequence < UInt64.max, header.sequence == lastSequence + 1 else {
                throw StoreError(
                    .corruption, "WAL sequence jumps from \(lastSequence) to \(header.sequence); a record is missing", file: path, offset: Int64(offset))
            }
            do {
                _ = try BatchFormat.decode(raw, maxKeyBytes: StoreLimits.maxKeyBytes, maxValueBytes: StoreLimits.maxValueBytes) { kind, key, value in
                    replayed.add(key: key, sequence: header.sequence, value: kind == .put ? value : nil)
                }
            } catch let error as FormatError {
                throw StoreError(error, file: path, baseOffset: Int64(offset))
            }
            lastSequence = header.sequence
            return true
        }
    }
}
