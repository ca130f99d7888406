import StrataFormat

/// What the manifest step learned, for the steps after it.
struct ManifestReading {
    /// The current manifest's name; nil when the store has none (it has only a WAL).
    var name: String?
    /// The replayed state; nil when the manifest could not be read to its end.
    var state: ManifestState?
}

/// What the WAL step learned, for the leftover step.
struct WALReading {
    /// The first sequence found in the WAL, if it holds any record.
    var firstSequence: UInt64?
}

extension VerificationRun {
    /// The highest-numbered `manifest-*.log` is the current one (docs/format/manifest.md).
    mutating func checkManifest() -> ManifestReading {
        let manifests = files.compactMap { file -> (UInt64, String)? in
            if case .manifest(let number) = file.kind { return (number, file.name) }
            return nil
        }
        guard let (number, name) = manifests.max(by: { $0.0 < $1.0 }) else {
            return ManifestReading(name: nil, state: ManifestState())
        }
        reference(name)
        guard let bytes = read(name) else { return ManifestReading(name: name, state: nil) }
        let outcome = ManifestCheck.check(name: name, number: number, bytes: bytes)
        add(outcome.findings)
        return ManifestReading(name: name, state: outcome.state)
    }

    /// Every live segment against its manifest entry; when the manifest could not be read,
    /// every segment file on disk, on its own.
    mutating func checkSegments(_ manifest: ManifestReading) {
        guard let state = manifest.state else {
            for file in files {
                guard case .segment = file.kind else { continue }
                reference(file.name)
                guard let bytes = read(file.name) else { continue }
                add(SegmentCheck.check(name: file.name, bytes: bytes, meta: nil, lastSequence: nil))
            }
            return
        }
        for meta in state.live.values.sorted(by: { $0.fileNumber < $1.fileNumber }) {
            let name = ManifestFormat.segmentFileName(meta.fileNumber)
            reference(name)
            guard exists(name) else {
                add(
                    VerifierFinding(
                        severity: .error, file: name, code: FindingCode.manifestMissingSegment,
                        message:
                            "the manifest lists \(name) at level \(meta.level), but the file is missing, so the keys it held cannot be read; put the file back or restore the store from a backup"
                    ))
                continue
            }
            guard let bytes = read(name) else { continue }
            add(SegmentCheck.check(name: name, bytes: bytes, meta: meta, lastSequence: state.lastSequence))
        }
    }

    /// The WAL segments the store would replay: from the manifest's log number on, or all of
    /// them when the manifest could not be read.
    mutating func checkWAL(_ manifest: ManifestReading) -> WALReading {
        let firstNeeded = manifest.state?.logNumber ?? 0
        var segments = files.compactMap { file -> (number: UInt64, name: String)? in
            if case .wal(let number) = file.kind, number >= firstNeeded { return (number, file.name) }
            return nil
        }.sorted { $0.number < $1.number }
        for segment in segments { reference(segment.name) }

        var check = WALCheck(lastSequence: manifest.state?.lastSequence)
        var lastBytes: [UInt8]? = nil
        if let last = segments.last {
            lastBytes = read(last.name)
            if let bytes = lastBytes, check.checkIncomplete(name: last.name, bytes: bytes) {
                segments.removeLast()
                lastBytes = nil
            } else if let bytes = lastBytes, case .foreign(let reason) = FileRecognition.wal(bytes, number: last.number) {
                // The store sets such a file aside when it opens, and replays the one before.
                add(
                    VerifierFinding(
                        severity: .warning, file: last.name, code: FindingCode.fileForeign,
                        message:
                            "this file has the name of the store's last WAL segment, but \(reason), so it is not the store's: the store moves it into aside/ when it next opens; look at it and move it out of the store directory"
                    ))
                segments.removeLast()
                lastBytes = segments.last.flatMap { read($0.name) }
            }
        }
        var unsynced: [String] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            guard let bytes = isLast ? lastBytes : read(segment.name) else { continue }
            let store = directory
            let readSegment = { (name: String) in try? store.fileSystem.readWholeFile(store.filePath(name)) }
            if index > 0, let previous = check.lastOutcome, let last = check.lastSequenceRead,
                WALTail.endsAtUnfinishedRoll(
                    previous, lastSequence: last, next: { bytes },
                    later: { WALTail.laterSegmentProof(names: segments[index...].map(\.name), read: readSegment) })
            {
                // The segment before ended early, in zeros, unmarked, and this one does not
                // continue it: a roll whose sync a crash interrupted, where the store finds
                // the log's end (docs/format/wal.md, "Recovery").
                unsynced = segments[index...].map(\.name)
                break
            }
            let later = segments[(index + 1)...].map(\.name)
            let laterProof: (() -> SyncEvidence?)? = isLast ? nil : { WALTail.laterSegmentProof(names: later, read: readSegment) }
            check.check(name: segment.name, number: segment.number, bytes: bytes, later: laterProof)
            if !isLast, check.tornTail != nil {
                // The log ends in this segment, as the store finds when it opens: the ones after
                // it go (docs/format/wal.md, "Recovery").
                unsynced = later
                break
            }
        }
        for finding in check.findings {
            if finding.code == FindingCode.walTornTail, let tail = check.tornTail {
                add(finding, repair: .truncateWAL(file: tail.file, offset: tail.offset))
            } else {
                add(finding)
            }
        }
        for name in unsynced {
            markUnsynced(name)
            add(
                VerifierFinding(
                    severity: .warning, file: name, code: FindingCode.walUnsyncedSegment,
                    message:
                        "this WAL segment follows a segment whose sync a crash interrupted (it ends in a torn write, or early), and holds no record proving a sync of its own: nothing in it was acknowledged as durable, and it follows lost bytes; repair deletes it, as the store does when it opens",
                    repairable: true),
                repair: .remove(file: name))
        }
        return WALReading(firstSequence: check.firstSequence)
    }
}
