import Logging
@_spi(Engine) import StrataFormat
import StrataIO

/// Reads the current manifest when a store opens (format: docs/format/manifest.md): replays
/// its edits into the set of live segment files and the WAL position they cover.
struct ManifestLoader {
    var state = VersionSet.PersistedState(logNumber: 0, lastSequence: 0, nextFileNumber: 1)
    var segments: [UInt64: SegmentMeta] = [:]
    /// The number of the manifest read, nil for a store that has none yet.
    var currentManifest: UInt64? = nil

    static func load(directory: String, names: Set<String>, fileSystem fs: any FileSystem, report: inout RecoveryReport) throws -> ManifestLoader {
        var loader = ManifestLoader()
        if let current = names.compactMap(ManifestFormat.number(fromManifestName:)).max() {
            loader.currentManifest = current
            try loader.replay(fs.path(directory, ManifestFormat.fileName(current)), number: current, fileSystem: fs, report: &report)
        }
        try loader.reserveNumbers(names: names, directory: directory, fileSystem: fs)
        return loader
    }

    /// Raises `nextFileNumber` above every number a file in the directory carries.
    mutating func reserveNumbers(names: Set<String>, directory: String, fileSystem fs: any FileSystem) throws {
        // Numbers already on disk are never handed out again, even if a crash kept the
        // manifest from recording them.
        let used = names.compactMap { name in
            ManifestFormat.number(fromSegmentName: name) ?? ManifestFormat.number(fromManifestName: name) ?? ManifestFormat.number(fromTemporaryName: name)
        }
        let highest = used.max() ?? 0
        // A stray file numbered 2^64 - 1 leaves no number to hand out (and `+ 1` would trap).
        guard highest < UInt64.max else {
            throw StoreError(
                .corruption,
                "a file in the store directory carries the number \(highest), the largest there is, so no new file can be numbered; it is not a file Strata wrote: move it out of the directory",
                file: fs.path(
                    directory,
                    names.first { name in
                        ManifestFormat.number(fromSegmentName: name) == highest || ManifestFormat.number(fromManifestName: name) == highest
                            || ManifestFormat.number(fromTemporaryName: name) == highest
                    } ?? directory))
        }
        state.nextFileNumber = max(state.nextFileNumber, highest + 1)
    }

    private mutating func replay(_ path: String, number: UInt64, fileSystem fs: any FileSystem, report: inout RecoveryReport) throws {
        let bytes = try fs.readWholeFile(path)
        let header: ManifestFormat.Header
        do {
            header = try withBorrowedBytes(bytes) { raw throws(FormatError) in try ManifestFormat.Header.decode(raw) }
        } catch {
            throw StoreError(error, file: path)
        }
        guard header.fileNumber == number else {
            throw StoreError(.corruption, "the manifest's header says it is number \(header.fileNumber), but its name says \(number)", file: path, offset: 16)
        }
        // The damage rules are ManifestRecordReader's, shared with the verifier.
        let outcome = try ManifestRecordReader.read(bytes) { payload, offset in
            let edit: VersionEdit
            do throws(FormatError) {
                edit = try withBorrowedBytes(payload) { raw throws(FormatError) in try VersionEdit.decode(raw, baseOffset: offset) }
            } catch {
                throw StoreError(error, file: path)
            }
            try apply(edit, path: path, offset: offset)
        }
        switch outcome.damage {
        case nil:
            guard outcome.records > 0 else {
                throw StoreError(
                    .corruption,
                    "the manifest holds no record; run strata-fsck (with --salvage it keeps what can still be read), or restore the store from a backup",
                    file: path,
                    offset: Int64(ManifestFormat.headerSize))
            }
        case .corruption(let offset, let reason, _)?:
            throw StoreError(
                .corruption,
                "the manifest is damaged (\(reason)); run strata-fsck (with --salvage it keeps what can still be read), or restore the store from a backup",
                file: path, offset: Int64(offset))
        case .tornTail(let offset, _, let discarded)?:
            // A torn last record is an append that never finished, so nothing acted on it.
            report.discardedManifestTail = RecoveryReport.TruncatedTail(file: path, offset: Int64(offset), discardedBytes: Int64(discarded))
        }
    }

    private mutating func apply(_ edit: VersionEdit, path: String, offset: Int) throws {
        if let logNumber = edit.logNumber { state.logNumber = logNumber }
        if let lastSequence = edit.lastSequence { state.lastSequence = lastSequence }
        if let nextFileNumber = edit.nextFileNumber { state.nextFileNumber = nextFileNumber }
        if let identifier = edit.storeIdentifier { state.storeIdentifier = identifier }
        if let dropped = edit.droppedDeletions { state.droppedDeletions = max(state.droppedDeletions, dropped) }
        for removal in edit.removed {
            guard segments.removeValue(forKey: removal.fileNumber) != nil else {
                throw StoreError(.corruption, "a manifest edit removes segment \(removal.fileNumber), which is not live", file: path, offset: Int64(offset))
            }
        }
        for meta in edit.added {
            guard segments[meta.fileNumber] == nil else {
                throw StoreError(.corruption, "a manifest edit adds segment \(meta.fileNumber) twice", file: path, offset: Int64(offset))
            }
            segments[meta.fileNumber] = meta
        }
    }

    /// Throws `.corruption` when two files of a level below 0 overlap: reads would miss keys.
    func checkLevelsDisjoint(directory: String, fileSystem fs: any FileSystem) throws {
        let deeper = Dictionary(grouping: segments.values.filter { $0.level > 0 }, by: \.level)
        for (level, files) in deeper {
            let sorted = files.sorted { $0.smallestKey.lexicographicallyPrecedes($1.smallestKey) }
            for (a, b) in zip(sorted, sorted.dropFirst()) where !a.largestKey.lexicographicallyPrecedes(b.smallestKey) {
                throw StoreError(
                    .corruption, "segments \(a.fileNumber) and \(b.fileNumber) of level \(level) overlap",
                    file: fs.path(directory, ManifestFormat.segmentFileName(a.fileNumber)))
            }
        }
    }

    /// Opens every live segment: level 0 newest first, deeper levels by key.
    func openLevels(directory: String, fileSystem: any FileSystem, cache: BlockCache) throws -> [[SegmentTable]] {
        var levels: [[SegmentTable]] = Array(repeating: [], count: ManifestFormat.maxLevels)
        for meta in segments.values.sorted(by: { $0.fileNumber > $1.fileNumber }) {
            levels[meta.level].append(try SegmentTable.open(meta, directory: directory, fileSystem: fileSystem, cache: cache))
        }
        for level in levels.indices.dropFirst() {
            levels[level].sort { $0.meta.smallestKey.lexicographicallyPrecedes($1.meta.smallestKey) }
            for (a, b) in zip(levels[level], levels[level].dropFirst()) where !a.meta.largestKey.lexicographicallyPrecedes(b.meta.smallestKey) {
                throw StoreError(.corruption, "segments \(a.number) and \(b.number) of level \(level) overlap; run strata-fsck", file: a.path)
            }
        }
        return levels
    }
}
