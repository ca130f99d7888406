// The one place the crash-recovery and model-based tests hand a store's files to the
// independent verifier (module StrataVerifier), so that wiring it in is a change to this
// file only. Every caller has closed the store first: the files are then exactly what the
// next open would read, and no flush or compaction is writing beside the check.
import StrataIO
import StrataVerifier
import Testing

/// Checks the closed store at `path` on `fileSystem` with StrataVerifier and records an issue
/// (naming `context`) for every warning or error it reports. Called after each recovery case
/// of the crash tests and at each reopen of the model-based tests.
func assertStoreIsClean(
    path: String, fileSystem: any FileSystem, context: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let report = try Verifier.verify(path: path, fileSystem: fileSystem)
    for finding in report.findings where finding.severity != .info {
        let place = finding.offset.map { "\(finding.file) at \($0)" } ?? finding.file
        Issue.record(
            "\(context): the verifier finds \(finding.severity.rawValue) \(finding.code) in \(place): \(finding.message)",
            sourceLocation: sourceLocation)
    }
}
