import StrataFormat

/// Reads the current manifest: header, every record, and the replay of its edits
/// (docs/format/manifest.md, "Validity rules").
enum ManifestCheck {
    struct Outcome {
        /// The replayed state, or nil when the manifest could not be read to its end. Without
        /// it nobody can say which files are referenced, so none may be called leftovers.
        var state: ManifestState?
        var findings: [VerifierFinding]
    }

    static func check(name: String, number: UInt64, bytes: [UInt8]) -> Outcome {
        var findings: [VerifierFinding] = []
        func report(_ code: String, _ offset: Int?, _ message: String) {
            findings.append(VerifierFinding(severity: .error, file: name, offset: offset.map(Int64.init), code: code, message: message))
        }

        let header: ManifestFormat.Header
        do {
            header = try withBorrowedBytes(bytes) { raw throws(FormatError) in try ManifestFormat.Header.decode(raw) }
        } catch {
            if case .unsupportedVersion = error.kind {
                report(FindingCode.manifestUnsupportedVersion, error.offset, "\(error.message); check this store with a newer strata-fsck")
            } else {
                report(
                    FindingCode.manifestHeader, error.offset,
                    "the manifest's header is damaged (\(error.message)), so the store cannot tell which segment files it holds; restore the store from a backup"
                )
            }
            return Outcome(state: nil, findings: findings)
        }
        if header.fileNumber != number {
            report(
                FindingCode.manifestNumberMismatch, 16,
                "the manifest's header says it is number \(header.fileNumber), but its name says \(number); the file was renamed or copied over: restore the store from a backup"
            )
        }

        var replay = ManifestReplay(file: name)
        var records = 0
        // The damage rules are ManifestRecordReader's, the same code the store runs.
        struct Stop: Error {}
        let outcome: ManifestRecordReader.Outcome
        do {
            outcome = try ManifestRecordReader.read(bytes) { payload, offset in
                let edit: VersionEdit
                do throws(FormatError) {
                    edit = try withBorrowedBytes(payload) { raw throws(FormatError) in try VersionEdit.decode(raw, baseOffset: offset) }
                } catch {
                    // The record passed its checksum, so it was written whole: a torn append
                    // cannot produce it, whatever its position.
                    report(
                        FindingCode.manifestBadEdit, offset,
                        "the manifest record at byte \(offset) is intact but does not decode (\(error.message)); it was written by a newer or faulty Strata: restore the store from a backup"
                    )
                    throw Stop()
                }
                replay.apply(edit, isFirst: records == 0, offset: offset)
                records += 1
            }
        } catch {
            return Outcome(state: nil, findings: findings + replay.findings)
        }
        switch outcome.damage {
        case nil:
            break
        case .corruption(let offset, let reason, .laterRecord(let later))?:
            report(
                FindingCode.manifestCorruptRecord, offset,
                "the manifest is damaged at byte \(offset) (\(reason)), and a record at byte \(later) follows, so these bytes had been synced: this is corruption, restore the store from a backup"
            )
            return Outcome(state: nil, findings: findings + replay.findings)
        case .corruption(let offset, let reason, _)?:
            report(
                FindingCode.manifestCorruptRecord, offset,
                "the manifest's first record, its snapshot, is damaged (\(reason)); it was synced before the manifest was installed, so this is corruption: restore the store from a backup"
            )
            return Outcome(state: nil, findings: findings + replay.findings)
        case .tornTail(let offset, let reason, _)?:
            findings.append(
                VerifierFinding(
                    severity: .info, file: name, offset: Int64(offset), code: FindingCode.manifestTornRecord,
                    message:
                        "the manifest's last record, at byte \(offset), is incomplete (\(reason)): an append that a crash interrupted before it was acknowledged; the store ignores it when it opens"
                ))
        }
        if records == 0 {
            report(
                FindingCode.manifestEmpty, ManifestFormat.headerSize,
                "the manifest has no records, not even its snapshot, so the store cannot tell which segment files it holds; restore the store from a backup")
            return Outcome(state: nil, findings: findings)
        }
        replay.finish(manifestNumber: number)
        return Outcome(state: replay.state, findings: findings + replay.findings)
    }
}
