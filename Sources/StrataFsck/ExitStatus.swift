import StrataVerifier

/// strata-fsck's exit statuses. Like e2fsck's they are bits that add up, so a script can
/// test "anything left?" with `status & 4`.
enum ExitStatus {
    static let clean: Int32 = 0
    static let repaired: Int32 = 1
    /// `--salvage` gave something up (a rebuilt manifest, WAL bytes, a segment file): the
    /// report lists it.
    static let salvaged: Int32 = 2
    static let problemsLeft: Int32 = 4
    static let operationalError: Int32 = 8
    static let usage: Int32 = 16

    static func of(_ report: VerificationReport) -> Int32 {
        (report.repairedCount > 0 ? repaired : clean) | (report.problemsLeft > 0 ? problemsLeft : clean)
    }
}
