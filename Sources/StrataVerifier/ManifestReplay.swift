import StrataFormat

/// Applies a manifest's version edits in order, as the store does when it opens, and reports
/// every edit that does not make sense against the state before it (docs/format/manifest.md,
/// "Validity rules", rule 6, and "What the fields mean").
struct ManifestReplay {
    let file: String
    private(set) var state = ManifestState()
    private(set) var findings: [VerifierFinding] = []
    /// Numbers of segments that an edit removed for good. File numbers are never reused, so
    /// adding one again is an error. A segment that one edit removes and adds back (a move
    /// between levels) is not retired.
    private var retired: Set<UInt64> = []

    init(file: String) {
        self.file = file
    }

    mutating func apply(_ edit: VersionEdit, isFirst: Bool, offset: Int) {
        if isFirst { checkSnapshot(edit, offset: offset) }
        setScalar(\.logNumber, edit.logNumber, "log number", offset: offset)
        setScalar(\.lastSequence, edit.lastSequence, "last sequence", offset: offset)
        setScalar(\.droppedDeletions, edit.droppedDeletions, "dropped-deletions sequence", offset: offset)
        if let identifier = edit.storeIdentifier {
            if let old = state.storeIdentifier, old != identifier {
                report(
                    FindingCode.manifestBadEdit, offset,
                    "the record at byte \(offset) changes the store's identifier, which the store never does; the manifest is inconsistent: restore the store from a backup"
                )
            }
            state.storeIdentifier = identifier
        }
        if let next = edit.nextFileNumber {
            if let old = state.nextFileNumber, next < old {
                report(
                    FindingCode.manifestNumberDecreased, offset,
                    "the record at byte \(offset) lowers the next file number from \(old) to \(next), so a file number could be given out twice; the manifest is inconsistent: restore the store from a backup"
                )
            }
            state.nextFileNumber = next
        }

        var removedHere: [UInt64] = []
        for removal in edit.removed {
            let name = ManifestFormat.segmentFileName(removal.fileNumber)
            if let meta = state.live[removal.fileNumber], meta.level == removal.level {
                state.live[removal.fileNumber] = nil
                removedHere.append(removal.fileNumber)
            } else {
                let whereItIs = state.live[removal.fileNumber].map { "it is at level \($0.level)" } ?? "it is not a live segment"
                report(
                    FindingCode.manifestRemoveNotLive, offset,
                    "the record at byte \(offset) removes \(name) from level \(removal.level), but \(whereItIs); the manifest is inconsistent: restore the store from a backup"
                )
            }
        }
        var addedHere = Set<UInt64>()
        for meta in edit.added {
            let name = ManifestFormat.segmentFileName(meta.fileNumber)
            if state.live[meta.fileNumber] != nil || addedHere.contains(meta.fileNumber) {
                report(
                    FindingCode.manifestDuplicateFile, offset,
                    "the record at byte \(offset) adds \(name), which is already live; the manifest is inconsistent: restore the store from a backup")
            } else if retired.contains(meta.fileNumber) {
                report(
                    FindingCode.manifestDuplicateFile, offset,
                    "the record at byte \(offset) adds \(name) again after an earlier record removed it, but file numbers are never reused; the manifest is inconsistent: restore the store from a backup"
                )
            }
            addedHere.insert(meta.fileNumber)
            state.live[meta.fileNumber] = meta
            if let next = state.nextFileNumber, meta.fileNumber >= next {
                report(
                    FindingCode.manifestFileNumberTooLarge, offset,
                    "the record at byte \(offset) adds \(name), but the next file number is only \(next), so the number could be given out again; the manifest is inconsistent: restore the store from a backup"
                )
            }
        }
        for number in removedHere where state.live[number] == nil {
            retired.insert(number)
        }
    }

    /// Checks that apply to the final state: key ranges within levels 1 and up, and the
    /// manifest's own number against the counter it takes numbers from.
    mutating func finish(manifestNumber: UInt64) {
        let byLevel = Dictionary(grouping: state.live.values, by: \.level)
        for level in byLevel.keys.sorted() where level >= 1 {
            let files = byLevel[level]!.sorted { a, b in
                a.smallestKey == b.smallestKey ? a.fileNumber < b.fileNumber : a.smallestKey.lexicographicallyPrecedes(b.smallestKey)
            }
            for (a, b) in zip(files, files.dropFirst()) where !a.largestKey.lexicographicallyPrecedes(b.smallestKey) {
                report(
                    FindingCode.manifestOverlap, nil,
                    "\(ManifestFormat.segmentFileName(a.fileNumber)) and \(ManifestFormat.segmentFileName(b.fileNumber)) are both at level \(level) and their key ranges overlap, so reads may return the wrong version of a key; the manifest is inconsistent: restore the store from a backup"
                )
            }
        }
        if let next = state.nextFileNumber, manifestNumber >= next {
            report(
                FindingCode.manifestFileNumberTooLarge, nil,
                "the manifest's own number \(manifestNumber) is not below its next file number \(next), so the number could be given out again; the manifest is inconsistent: restore the store from a backup"
            )
        }
    }

    /// The first record must set every scalar and remove nothing: a manifest never depends
    /// on an older one.
    private mutating func checkSnapshot(_ edit: VersionEdit, offset: Int) {
        var missing: [String] = []
        if edit.logNumber == nil { missing.append("the log number") }
        if edit.lastSequence == nil { missing.append("the last sequence") }
        if edit.nextFileNumber == nil { missing.append("the next file number") }
        if !missing.isEmpty {
            report(
                FindingCode.manifestIncompleteSnapshot, offset,
                "the manifest's first record is not a full snapshot: it does not set \(missing.joined(separator: ", ")); the manifest is inconsistent: restore the store from a backup"
            )
        }
        if !edit.removed.isEmpty {
            report(
                FindingCode.manifestIncompleteSnapshot, offset,
                "the manifest's first record removes segments, but it must be a full snapshot that only adds them; the manifest is inconsistent: restore the store from a backup"
            )
        }
    }

    private mutating func setScalar(_ field: WritableKeyPath<ManifestState, UInt64>, _ value: UInt64?, _ what: String, offset: Int) {
        guard let value else { return }
        if value < state[keyPath: field] {
            report(
                FindingCode.manifestNumberDecreased, offset,
                "the record at byte \(offset) lowers the \(what) from \(state[keyPath: field]) to \(value), which the store never does; the manifest is inconsistent: restore the store from a backup"
            )
        }
        state[keyPath: field] = value
    }

    private mutating func report(_ code: String, _ offset: Int?, _ message: String) {
        findings.append(VerifierFinding(severity: .error, file: file, offset: offset.map(Int64.init), code: code, message: message))
    }
}
