import Logging
@_spi(Engine) import StrataFormat
import StrataIO

/// The state of one salvaging open (`StoreOptions.salvage`, docs/architecture.md,
/// "Salvage"): what it gave up so far, and the work left for after the new manifest is
/// installed.
struct SalvageRun {
    var report = SalvageReport()
    /// The newest sequence the segment files hold: WAL records at or below it are already
    /// in them, and are skipped without a report.
    var filesLastSequence: UInt64 = 0
    /// WAL segments in which salvage skipped bytes: set aside once what was replayed from
    /// them is in a segment file the new manifest lists.
    var damagedWAL: Set<String> = []

    /// True when what was replayed must be written to a segment file and the WAL started
    /// afresh, so that the next ordinary open does not meet the damage again.
    var mustRewriteLog: Bool {
        report.manifestRebuilt != nil || !report.droppedLogBytes.isEmpty || !report.missingSequences.isEmpty
    }
}

enum Salvage {
    // MARK: The manifest

    /// Loads the manifest as an ordinary open does; when it cannot be read, or is missing
    /// beside segment files, rebuilds the state from the segment files instead. `names` loses
    /// the files set aside or replaced on the way.
    static func loadManifest(
        path: String, names: inout Set<String>, options: StoreOptions, cache: BlockCache,
        report: inout RecoveryReport, run: inout SalvageRun?
    ) throws -> ManifestLoader {
        do {
            let loaded = try ManifestLoader.load(directory: path, names: names, fileSystem: options.fileSystem, report: &report)
            try refuseMissingManifest(loaded, path: path, names: names)
            // A manifest that reads but puts overlapping files in one level cannot be
            // trusted with levels at all: rebuilt too.
            if run != nil { try loaded.checkLevelsDisjoint(directory: path, fileSystem: options.fileSystem) }
            run?.filesLastSequence = loaded.state.lastSequence
            return loaded
        } catch let error as StoreError where error.code == .corruption && run != nil {
            return try rebuildManifest(
                path: path, names: &names, options: options, cache: cache, cause: error.message, report: &report, run: &run!)
        }
    }

    /// A store has a manifest from its first open on, before any segment file exists: segment
    /// files without one mean the manifest was lost, and opening would take them for
    /// leftovers and delete the data they hold.
    private static func refuseMissingManifest(_ loaded: ManifestLoader, path: String, names: Set<String>) throws {
        guard loaded.currentManifest == nil, let segment = names.sorted().first(where: { ManifestFormat.number(fromSegmentName: $0) != nil }) else {
            return
        }
        throw StoreError(
            .corruption,
            "the store has segment files (\(segment), ...) but no manifest, so it cannot tell which of them hold its data; open it with StoreOptions.salvage (or run strata-fsck --salvage) to rebuild the manifest from them, or restore the store from a backup",
            file: path)
    }

    /// The state rebuilt from the files present: every segment file that reads whole, merged
    /// into new level-1 files (a merge keeps every version, so reads stay right whatever level
    /// each file came from); the manifest's number series continued; the WAL replayed from
    /// its oldest segment.
    private static func rebuildManifest(
        path: String, names: inout Set<String>, options: StoreOptions, cache: BlockCache, cause: String,
        report: inout RecoveryReport, run: inout SalvageRun
    ) throws -> ManifestLoader {
        let fs = options.fileSystem
        options.logger.warning("the manifest cannot be read; salvage rebuilds it from the segment files", metadata: ["cause": "\(cause)"])
        var loaded = ManifestLoader()
        try loaded.reserveNumbers(names: names, directory: path, fileSystem: fs)

        // What the unreadable manifests still say about the store's identity and its
        // dropped deletions; then the current one goes aside, as evidence.
        var identifier: [UInt8] = []
        var droppedDeletions: UInt64 = 0
        let manifests = names.compactMap(ManifestFormat.number(fromManifestName:)).sorted()
        for number in manifests {
            let name = ManifestFormat.fileName(number)
            guard let bytes = try? fs.readWholeFile(fs.path(path, name)) else { continue }
            var scanner = WALScanner(bytes: bytes, start: ManifestFormat.headerSize)
            while case .record(let payload, let offset, _) = scanner.next() {
                guard let edit = try? withBorrowedBytes(payload, { raw throws(FormatError) in try VersionEdit.decode(raw, baseOffset: offset) }) else { break }
                if let found = edit.storeIdentifier { identifier = found }
                if let dropped = edit.droppedDeletions { droppedDeletions = max(droppedDeletions, dropped) }
            }
        }
        if let current = manifests.last {
            let name = ManifestFormat.fileName(current)
            try AsideDirectory.move(name, in: path, reason: "the manifest could not be read (\(cause)); salvage rebuilt it", options: options, report: &report)
            names.remove(name)
        }

        // Every segment file that reads whole; the others go aside.
        var sources: [SegmentMeta] = []
        for name in names.sorted() {
            guard let number = ManifestFormat.number(fromSegmentName: name) else { continue }
            let bytes = try fs.readWholeFile(fs.path(path, name))
            switch readWhole(bytes) {
            case .success(let meta?):
                sources.append(
                    SegmentMeta(
                        level: 0, fileNumber: number, fileSize: UInt64(bytes.count), entryCount: meta.entryCount,
                        smallestSequence: meta.smallestSequence, largestSequence: meta.largestSequence,
                        smallestKey: meta.smallestKey, largestKey: meta.largestKey))
            case .success(nil):
                continue  // no entries: a leftover the open removes
            case .failure(let failure):
                let reason = failure.reason
                if case .foreign = FileRecognition.segment(bytes) {
                    continue  // not the store's: the open sets it aside
                }
                let movedTo = try AsideDirectory.move(name, in: path, reason: reason, options: options, report: &report)
                names.remove(name)
                run.report.lostSegments.append(
                    SalvageReport.LostSegment(
                        file: name, movedTo: movedTo, smallestKey: nil, largestKey: nil, entryCount: footerEntryCount(bytes), reason: reason))
            }
        }

        // Merged into new files, synced before the sources are removed as leftovers.
        if !sources.isEmpty {
            let tables = try sources.map { try SegmentTable.open($0, directory: path, fileSystem: fs, cache: cache) }
            let outputs = try merge(tables, options: options, directory: path) {
                defer { loaded.state.nextFileNumber += 1 }
                return loaded.state.nextFileNumber
            }
            try fs.syncDirectory(path)
            for meta in outputs {
                loaded.segments[meta.fileNumber] = meta
                names.insert(ManifestFormat.segmentFileName(meta.fileNumber))
            }
        }

        let lastSequence = sources.map(\.largestSequence).max() ?? 0
        loaded.state.lastSequence = lastSequence
        loaded.state.logNumber = names.compactMap(WALWriter.segmentNumber(fromName:)).min() ?? 0
        loaded.state.storeIdentifier = identifier
        // Which deletions compactions dropped is lost with the manifest: every reference to a
        // key the store no longer holds answers "changed", the one answer always safe.
        loaded.state.droppedDeletions = max(droppedDeletions, lastSequence)
        loaded.currentManifest = nil
        run.filesLastSequence = lastSequence
        run.report.manifestRebuilt =
            "the manifest could not be read (\(cause)); rebuilt from \(sources.count) segment file\(sources.count == 1 ? "" : "s")"
        return loaded
    }

    /// What a readable segment file holds, nil when it holds no entry; a reason when any
    /// part of it does not read.
    private static func readWhole(_ bytes: [UInt8]) -> Result<SegmentMeta?, SalvageFailure> {
        do {
            let reader = try SegmentReader(bytes)
            let entries = try reader.entries()
            guard let first = entries.first, let last = entries.last else { return .success(nil) }
            guard UInt64(entries.count) == reader.footer.entryCount else {
                return .failure(SalvageFailure("it holds \(entries.count) entries, but its footer says \(reader.footer.entryCount)"))
            }
            return .success(
                SegmentMeta(
                    level: 0, fileNumber: 0, fileSize: UInt64(bytes.count), entryCount: reader.footer.entryCount,
                    smallestSequence: reader.footer.smallestSequence, largestSequence: reader.footer.largestSequence,
                    smallestKey: first.userKey, largestKey: last.userKey))
        } catch {
            return .failure(SalvageFailure("it does not read whole (\(error.message), at byte \(error.offset))"))
        }
    }

    struct SalvageFailure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func footerEntryCount(_ bytes: [UInt8]) -> UInt64? {
        (try? withBorrowedBytes(bytes) { raw throws(FormatError) in try SegmentFormat.Footer.decode(raw) })?.entryCount
    }

    /// Every entry of `tables`, all versions, in internal-key order, into new level-1 files;
    /// an entry found in two files (a compaction's output beside its inputs) is written once.
    private static func merge(
        _ tables: [SegmentTable], options: StoreOptions, directory: String, allocate: () -> UInt64
    ) throws -> [SegmentMeta] {
        let fs = options.fileSystem
        let runs = tables.map { RawFileIterator(files: [$0]) }
        var live = try runs.map { try $0.next() }
        var outputs: [SegmentMeta] = []
        var output = SegmentOutput(level: 1, options: options)
        let target = max(options.segmentFileBytes, 64 << 10)
        var previousKey: [UInt8]? = nil
        var previousTrailer: UInt64 = 0
        while true {
            var best = -1
            for i in runs.indices where live[i] {
                if best < 0 || compareInternal(runs[i].userKey, runs[i].trailer, runs[best].userKey, runs[best].trailer) < 0 { best = i }
            }
            if best < 0 { break }
            let source = runs[best]
            let trailer = source.trailer
            let sameKey = previousKey.map { key in key.withUnsafeBytes { compareKeys($0, source.userKey) == 0 } } ?? false
            if !(sameKey && trailer == previousTrailer) {
                // A key's versions never straddle two files, so the level stays disjoint.
                if !sameKey && output.entryCount > 0 && output.estimatedSize >= target {
                    outputs.append(try output.write(number: allocate(), fileSystem: fs, directory: directory))
                    output = SegmentOutput(level: 1, options: options)
                }
                let isTombstone = trailer & 0xFF == UInt64(SegmentFormat.EntryKind.tombstone.rawValue)
                try output.add(borrowingKey: source.userKey, sequence: trailer >> 8, isTombstone: isTombstone, value: source.value)
                if !sameKey { previousKey = [UInt8](source.userKey) }
                previousTrailer = trailer
            }
            live[best] = try source.next()
        }
        if output.entryCount > 0 { outputs.append(try output.write(number: allocate(), fileSystem: fs, directory: directory)) }
        return outputs
    }

    // MARK: Segment files the manifest lists

    /// Reads every live segment file whole; one that is missing or does not read is left out
    /// of the state (the manifest the open installs no longer lists it) and set aside.
    static func dropDamagedSegments(
        _ loaded: inout ManifestLoader, path: String, names: inout Set<String>, options: StoreOptions,
        report: inout RecoveryReport, run: inout SalvageRun
    ) throws {
        let fs = options.fileSystem
        for meta in loaded.segments.values.sorted(by: { $0.fileNumber < $1.fileNumber }) {
            let name = ManifestFormat.segmentFileName(meta.fileNumber)
            let reason: String
            var bytes: [UInt8] = []
            if names.contains(name) {
                bytes = try fs.readWholeFile(fs.path(path, name))
                switch readWhole(bytes) {
                case .success(let found?) where UInt64(bytes.count) == meta.fileSize && found.entryCount == meta.entryCount:
                    continue
                case .success:
                    reason = "it does not match its manifest record (\(bytes.count) bytes, the manifest says \(meta.fileSize))"
                case .failure(let failure):
                    reason = failure.reason
                }
            } else {
                reason = "the manifest lists it, but it is missing"
            }
            loaded.segments[meta.fileNumber] = nil
            var movedTo: String? = nil
            if names.contains(name) {
                movedTo = try AsideDirectory.move(name, in: path, reason: reason, options: options, report: &report)
                names.remove(name)
            }
            run.report.lostSegments.append(
                SalvageReport.LostSegment(
                    file: name, movedTo: movedTo, smallestKey: meta.smallestKey, largestKey: meta.largestKey, entryCount: meta.entryCount,
                    reason: reason))
            options.logger.warning(
                "salvage left out a segment file it cannot read", metadata: ["file": "\(name)", "level": "\(meta.level)", "reason": "\(reason)"])
        }
    }

    // MARK: The WAL

    /// Replays one segment keeping every intact record on both sides of damage: after a
    /// damaged region, replay resumes at the next intact record whose sequence continues the
    /// log. Damage that nothing proves synced (no later record, and for a segment that is
    /// not the last, no later segment: `later`, as in `WALSegmentReader.read`) is a torn
    /// tail, judged and reported as an ordinary open does.
    static func replaySegment(
        _ bytes: [UInt8], name: String, path: String, later: (() -> SyncEvidence?)?, into replayed: inout ReplayBuffer,
        lastSequence: inout UInt64, report: inout RecoveryReport, run: inout SalvageRun, logger: Logger
    ) -> WALSegmentReader.Outcome {
        var scanner = WALScanner(bytes: bytes)
        var provenThrough = WALFormat.headerSize
        var syncedThrough = 0
        while true {
            let damageAt: Int
            let reason: String
            switch scanner.next() {
            case .record(let payload, let start, let end):
                if let header = apply(payload, name: name, start: start, end: end, into: &replayed, lastSequence: &lastSequence, report: &report, run: &run) {
                    provenThrough = max(provenThrough, header.kind == .syncMark ? end : Int(clamping: header.syncedThrough))
                    syncedThrough = max(syncedThrough, Int(clamping: header.syncedThrough))
                }
                continue
            case .end(let end):
                if scanner.isZero(from: end) {
                    return WALSegmentReader.Outcome(end: end, damage: nil, provenThrough: provenThrough, syncedThrough: syncedThrough)
                }
                (damageAt, reason) = (end, "non-zero bytes follow the end of the log")
            case .invalid(let bad, let why):
                (damageAt, reason) = (bad, why)
            }
            let evidence =
                WALTail.recordProvingSynced(bytes, damageAt: damageAt, sequenceFloor: lastSequence).map { SyncEvidence.laterRecord(offset: $0) }
                ?? later?()
            guard let evidence else {
                let discarded = max(0, (lastNonZeroIndex(bytes) ?? damageAt) + 1 - damageAt)
                report.truncatedTail = RecoveryReport.TruncatedTail(file: path, offset: Int64(damageAt), discardedBytes: Int64(discarded))
                return WALSegmentReader.Outcome(
                    end: damageAt, damage: .tornTail(offset: damageAt, reason: reason, discardedBytes: discarded), provenThrough: provenThrough,
                    syncedThrough: syncedThrough)
            }
            let floor = lastSequence
            let next = WALTail.firstIntactRecord(in: bytes, after: damageAt) { payload, _ in
                guard let header = try? withBorrowedBytes(payload, { raw throws(FormatError) in try BatchFormat.decodeHeader(raw) }) else { return false }
                return header.kind == .syncMark ? header.sequence >= floor : header.sequence > floor
            }
            let stop = next ?? max(damageAt, (lastNonZeroIndex(bytes) ?? damageAt) + 1)
            drop(name: name, from: damageAt, to: stop, reason: reason, run: &run, logger: logger)
            guard let next else {
                return WALSegmentReader.Outcome(
                    end: damageAt, damage: .corruption(offset: damageAt, reason: reason, evidence: evidence), provenThrough: provenThrough,
                    syncedThrough: syncedThrough)
            }
            scanner = WALScanner(bytes: bytes, start: next)
        }
    }

    /// A segment whose header does not read: its records are still replayed, the header's
    /// bytes reported.
    static func dropHeader(name: String, reason: String, run: inout SalvageRun, logger: Logger) {
        drop(name: name, from: 0, to: WALFormat.headerSize, reason: reason, run: &run, logger: logger)
    }

    private static func drop(name: String, from start: Int, to end: Int, reason: String, run: inout SalvageRun, logger: Logger) {
        run.damagedWAL.insert(name)
        guard end > start else { return }
        run.report.droppedLogBytes.append(
            SalvageReport.DroppedLogBytes(file: name, offset: Int64(start), byteCount: Int64(end - start), reason: reason))
        logger.warning(
            "salvage skipped damaged WAL bytes", metadata: ["file": "\(name)", "offset": "\(start)", "bytes": "\(end - start)", "reason": "\(reason)"])
    }

    /// Applies one intact record whole, or drops it (reported) when it does not decode or
    /// does not continue the log. Returns its header when it was read.
    private static func apply(
        _ payload: [UInt8], name: String, start: Int, end: Int, into replayed: inout ReplayBuffer,
        lastSequence: inout UInt64, report: inout RecoveryReport, run: inout SalvageRun
    ) -> BatchFormat.Header? {
        guard let header = try? withBorrowedBytes(payload, { raw throws(FormatError) in try BatchFormat.decodeHeader(raw) }) else {
            run.report.droppedLogBytes.append(
                SalvageReport.DroppedLogBytes(
                    file: name, offset: Int64(start), byteCount: Int64(end - start), reason: "an intact record that is no transaction"))
            run.damagedWAL.insert(name)
            return nil
        }
        if header.kind == .syncMark { return header }
        guard header.sequence > lastSequence else {
            // Already in the segment files: nothing is lost.
            if header.sequence <= run.filesLastSequence { return header }
            run.report.droppedLogBytes.append(
                SalvageReport.DroppedLogBytes(
                    file: name, offset: Int64(start), byteCount: Int64(end - start),
                    reason: "a transaction with sequence \(header.sequence), not above the \(lastSequence) already replayed"))
            run.damagedWAL.insert(name)
            return header
        }
        var operations: [(key: [UInt8], value: [UInt8]?)] = []
        do {
            _ = try payload.withUnsafeBytes { raw in
                try BatchFormat.decode(raw, maxKeyBytes: StoreLimits.maxKeyBytes, maxValueBytes: StoreLimits.maxValueBytes) { kind, key, value in
                    operations.append(([UInt8](key), kind == .put ? value.map { [UInt8]($0) } ?? [] : nil))
                }
            }
        } catch {
            run.report.droppedLogBytes.append(
                SalvageReport.DroppedLogBytes(
                    file: name, offset: Int64(start), byteCount: Int64(end - start), reason: "a transaction that does not decode (\(error))"))
            run.damagedWAL.insert(name)
            return header
        }
        if header.sequence > lastSequence + 1 {
            run.report.missingSequences.append((lastSequence + 1)...(header.sequence - 1))
            run.damagedWAL.insert(name)
        }
        for operation in operations {
            operation.key.withUnsafeBytes { key in
                if let value = operation.value {
                    value.withUnsafeBytes { replayed.add(key: key, sequence: header.sequence, value: $0) }
                } else {
                    replayed.add(key: key, sequence: header.sequence, value: nil)
                }
            }
        }
        lastSequence = header.sequence
        report.transactionsReplayed += 1
        return header
    }

    // MARK: After the replay

    /// Writes what was replayed into a level-0 file and moves the log past every segment
    /// replayed, so that the next open replays none of them. Returns the file's table.
    static func writeReplayed(
        _ memtable: MemTable, loaded: inout ManifestLoader, lastSequence: UInt64, lastWAL: UInt64?,
        path: String, options: StoreOptions, cache: BlockCache
    ) throws -> SegmentTable? {
        let fs = options.fileSystem
        var table: SegmentTable? = nil
        var output = SegmentOutput(level: 0, options: options)
        try memtable.forEachNode { try output.add($0) }
        if output.entryCount > 0 {
            let number = loaded.state.nextFileNumber
            loaded.state.nextFileNumber += 1
            let meta = try output.write(number: number, fileSystem: fs, directory: path)
            try fs.syncDirectory(path)
            loaded.segments[number] = meta
            table = try SegmentTable.open(meta, directory: path, fileSystem: fs, cache: cache)
        }
        loaded.state.lastSequence = max(loaded.state.lastSequence, lastSequence)
        if let lastWAL {
            guard lastWAL < UInt64.max else {
                throw StoreError(
                    .corruption, "the WAL file numbered \(lastWAL) leaves no number for a new one", file: fs.path(path, WALFormat.fileName(lastWAL)))
            }
            loaded.state.logNumber = max(loaded.state.logNumber, lastWAL + 1)
        }
        return table
    }

    /// Once the new manifest no longer needs them: damaged WAL segments go aside, the others
    /// are removed (everything in them is in segment files now).
    static func retireLog(
        _ segments: [UInt64], path: String, options: StoreOptions, report: inout RecoveryReport, run: SalvageRun
    ) throws {
        let fs = options.fileSystem
        for number in segments {
            let name = WALFormat.fileName(number)
            if run.damagedWAL.contains(name) {
                try AsideDirectory.move(
                    name, in: path, reason: "a WAL segment salvage skipped damaged bytes in; what it could read is in segment files now",
                    options: options, report: &report)
            } else {
                try fs.removeFile(fs.path(path, name))
                report.removedUnreferencedFiles.append(name)
            }
        }
        try fs.syncDirectory(path)
    }
}
