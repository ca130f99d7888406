import StrataFormat
import StrataIO

/// Checks a closed store directory, file by file and against each other, and optionally
/// repairs the two kinds of harmless damage a crash leaves behind.
///
/// The check reads, in order: the `STRATA` identity file; the current manifest (its header,
/// every record, and the replay of its edits); every segment file the manifest names (every
/// block, key order, and its match with the manifest); every WAL segment the store would
/// replay (every record, sequence continuity, torn tail rules); and finally every other file
/// in the directory (leftovers and strangers).
///
/// Repair does exactly two things: it cuts a torn write off the end of the WAL, as the store
/// itself does when it opens, and it deletes files that nothing references (segment files no
/// manifest lists, WAL segments already covered by segment files, older manifests, `.tmp`
/// leftovers). It never touches a file the store reads, and never rewrites data.
public enum Verifier {
    /// Checks the store at `path`, holding its lock throughout so a running store cannot
    /// change it mid-check.
    ///
    /// - Parameters:
    ///   - path: The store directory.
    ///   - fileSystem: The file system to read through; tests pass a simulated one.
    ///   - repair: Fix what ``VerifierFinding/repairable`` findings describe.
    /// - Returns: Everything found. Damage is reported here, never thrown.
    /// - Throws: ``VerifierError`` when the store cannot be checked at all: nothing at the
    ///   path, not a directory, not a store, open in a running process, written by a newer
    ///   format, or the directory cannot be listed.
    public static func verify(path: String, fileSystem: any FileSystem = POSIXFileSystem(), repair: Bool = false) throws(VerifierError) -> VerificationReport {
        let directory = try StoreDirectory.open(path: path, fileSystem: fileSystem)
        defer { directory.unlock() }
        var run = VerificationRun(directory: directory)
        try run.checkIdentity()
        let manifest = run.checkManifest()
        run.checkSegments(manifest)
        let wal = run.checkWAL(manifest)
        run.reportLeftovers(manifest, wal: wal)
        if repair { run.repair() }
        return run.report
    }
}

extension VerificationRun {
    mutating func checkIdentity() throws(VerifierError) {
        let name = StoreIdentityFormat.fileName
        guard let bytes = read(name) else { return }
        do {
            _ = try StoreIdentityFormat.validate(bytes)
        } catch {
            if case .unsupportedVersion = error.kind {
                throw VerifierError(.unsupportedVersion, "\(error.message); check it with the strata-fsck of that Strata version", path: directory.path)
            }
            add(
                VerifierFinding(
                    severity: .error, file: name, offset: Int64(error.offset), code: FindingCode.identityDamaged,
                    message:
                        "the STRATA identity file is damaged (\(error.message)), so the store will refuse to open; it holds the same 20 bytes in every version 1.0 store, so copying it from another store repairs it"
                ))
        }
    }
}
