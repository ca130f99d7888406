import StrataFormat

/// The state of one check: the locked directory, the report so far, and what repair may do.
struct VerificationRun {
    let directory: StoreDirectory
    var report: VerificationReport
    /// Findings that repair can fix, by index into `report.findings`.
    private(set) var repairs: [(finding: Int, action: Repair.Action)] = []
    /// Files the store reads. Repair never touches them.
    private(set) var referenced: Set<String> = [StoreIdentityFormat.fileName, StoreFileName.lockFileName]
    /// WAL segments the store deletes unread when it opens (`markUnsynced`).
    private(set) var unsyncedSegments: Set<String> = []

    init(directory: StoreDirectory) {
        self.directory = directory
        self.report = VerificationReport(path: directory.path)
    }

    /// Regular files in the directory and what their names say they are.
    var files: [(name: String, kind: StoreFileName)] {
        directory.names.filter { !directory.nonFiles.contains($0) }.map { ($0, StoreFileName($0)) }
    }

    func exists(_ name: String) -> Bool {
        directory.nameSet.contains(name) && !directory.nonFiles.contains(name)
    }

    mutating func add(_ findings: [VerifierFinding]) {
        report.findings.append(contentsOf: findings)
    }

    mutating func add(_ finding: VerifierFinding, repair action: Repair.Action? = nil) {
        precondition((action != nil) == finding.repairable, "a finding is repairable exactly when repair has an action for it")
        if let action { repairs.append((report.findings.count, action)) }
        report.findings.append(finding)
    }

    /// Records that the store, when it opens, deletes the WAL segment `name` without reading
    /// it (it follows a torn write in an earlier segment): repair may delete it too.
    mutating func markUnsynced(_ name: String) {
        unsyncedSegments.insert(name)
    }

    mutating func reference(_ name: String) {
        referenced.insert(name)
    }

    mutating func markRepaired(_ finding: Int) {
        report.findings[finding].repaired = true
    }

    /// The whole file, counted as checked; nil (and a finding) when it cannot be read.
    mutating func read(_ name: String) -> [UInt8]? {
        do {
            let bytes = try directory.read(name)
            report.filesChecked += 1
            return bytes
        } catch {
            add(
                VerifierFinding(
                    severity: .error, file: name, code: FindingCode.fileUnreadable,
                    message: "the file could not be read (\(error)); check its permissions and the disk, then run the check again"))
            return nil
        }
    }
}
