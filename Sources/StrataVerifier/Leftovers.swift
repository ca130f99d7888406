import StrataFormat

extension VerificationRun {
    /// Reports every file the store does not read: leftovers of interrupted work, which
    /// repair may delete, and files the store does not know, which it leaves alone.
    mutating func reportLeftovers(_ manifest: ManifestReading, wal: WALReading) {
        for name in directory.names where directory.nonFiles.contains(name) {
            if name == StoreFileName.asideDirectoryName {
                add(
                    VerifierFinding(
                        severity: .info, file: name, code: FindingCode.asideDirectory,
                        message:
                            "the store set files aside here that it found under its own names but did not recognise, or that salvage took out of the store; the store never reads them: look at them, then delete them"
                    ))
                continue
            }
            add(
                VerifierFinding(
                    severity: .warning, file: name, code: FindingCode.fileUnknown,
                    message: "this is not a regular file, and the store does not use it; move it out of the store directory"))
        }
        for file in files where !referenced.contains(file.name) {
            if let reason = foreignLeftover(file, manifest) {
                add(
                    VerifierFinding(
                        severity: .warning, file: file.name, code: FindingCode.fileForeign,
                        message:
                            "this file has the name of a store file nothing references, but \(reason), so it may not be the store's: repair leaves it, and the store moves it into aside/ when it next opens; look at it and move it out of the store directory"
                    ))
                continue
            }
            switch file.kind {
            case .identity, .lock:
                continue
            case .manifest:
                // Only a manifest read to its end says the older ones are not needed.
                guard manifest.state != nil, let current = manifest.name else { continue }
                unreferenced(file.name, "an older manifest: \(current) replaced it, and the store never reads this one again")
            case .wal:
                guard let state = manifest.state else { continue }
                unreferenced(file.name, "a WAL segment below the manifest's log number \(state.logNumber): everything in it is also in segment files")
            case .segment:
                if manifest.name != nil {
                    guard manifest.state != nil else { continue }
                    unreferenced(
                        file.name,
                        "a segment file the manifest does not list: left behind by a flush or compaction that a crash interrupted, or whose removal did not finish"
                    )
                } else if wal.firstSequence == 1 {
                    unreferenced(
                        file.name,
                        "a segment file, but the store has no manifest yet and its WAL holds every write from sequence 1: left behind by a first flush that a crash interrupted"
                    )
                } else {
                    // Without a manifest, a segment file is only provably redundant when the
                    // WAL holds everything; otherwise the manifest may be what was lost.
                    add(
                        VerifierFinding(
                            severity: .warning, file: file.name, code: FindingCode.fileUnreferenced,
                            message:
                                "no manifest lists this segment file, but the store has no manifest at all and its WAL does not start at sequence 1, so the manifest may have been lost and this file may hold the only copy of some writes; keep it, and restore the store from a backup"
                        ))
                }
            case .temporary:
                unreferenced(file.name, "a file written before a rename that a crash prevented; the store never reads it")
            case .unknown:
                add(
                    VerifierFinding(
                        severity: .warning, file: file.name, code: FindingCode.fileUnknown,
                        message: "the store does not use this file; move it out of the store directory, which should hold only Strata's files"))
            }
        }
    }

    /// Why a leftover the store would otherwise remove is not recognisably its own, or nil
    /// (the store's rule: FileRecognition, the same code recovery runs).
    private func foreignLeftover(_ file: (name: String, kind: StoreFileName), _ manifest: ManifestReading) -> String? {
        let verdict: FileRecognition.Verdict
        switch file.kind {
        case .wal(let number):
            guard manifest.state != nil, let bytes = try? directory.read(file.name) else { return nil }
            verdict = FileRecognition.wal(bytes, number: number)
        case .segment:
            guard manifest.state != nil, let bytes = try? directory.read(file.name) else { return nil }
            verdict = FileRecognition.segment(bytes)
        case .manifest(let number):
            guard let state = manifest.state, let bytes = try? directory.read(file.name) else { return nil }
            verdict = FileRecognition.manifest(bytes, number: number, storeIdentifier: state.storeIdentifier)
        case .temporary:
            guard let number = ManifestFormat.number(fromTemporaryName: file.name), let bytes = try? directory.read(file.name) else { return nil }
            verdict = FileRecognition.manifest(bytes, number: number, storeIdentifier: manifest.state?.storeIdentifier)
        case .identity, .lock, .unknown:
            return nil
        }
        if case .foreign(let reason) = verdict { return reason }
        return nil
    }

    private mutating func unreferenced(_ name: String, _ why: String) {
        add(
            VerifierFinding(
                severity: .warning, file: name, code: FindingCode.fileUnreferenced,
                message: "nothing references this file (\(why)); repair deletes it", repairable: true),
            repair: .remove(file: name))
    }
}
