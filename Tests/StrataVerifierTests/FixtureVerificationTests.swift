import Foundation
import StrataFixtureKit
import StrataVerifier
import Testing

/// Every checked-in fixture, checked by the library: the finding its README promises, and
/// for repairable damage, a repair after which the store checks clean.
@Suite("fixtures, verified")
struct FixtureVerificationTests {
    static let cases = Dictionary(uniqueKeysWithValues: FixtureCatalog.all().map { ($0.name, $0) })

    /// strata-fsck's exit status for a report, as its documentation gives it.
    static func exitStatus(_ report: VerificationReport) -> Int32 {
        (report.repairedCount > 0 ? 1 : 0) | (report.problemsLeft > 0 ? 4 : 0)
    }

    @Test(arguments: FixtureCatalog.all().map(\.name))
    func verifierReportsWhatTheFixturePromises(name: String) async throws {
        let fixture = try #require(Self.cases[name])
        try await withTestDirectory { directory in
            let store = directory.path(name)
            try FixturePaths.copy(name, to: store)
            let before = try directoryContents(store)

            let report = try Verifier.verify(path: store)
            #expect(try directoryContents(store) == before, "checking without repair must change nothing")
            if let code = fixture.expectedCode {
                #expect(!report.findings.isEmpty)
                for finding in report.findings {
                    #expect(finding.code == code, "\(finding)")
                    #expect(finding.severity.rawValue == fixture.expectedSeverity, "\(finding)")
                    if let file = fixture.expectedFile { #expect(finding.file == file, "\(finding)") }
                    #expect(!finding.message.isEmpty)
                }
            } else {
                #expect(report.findings.isEmpty, "\(report.findings)")
            }
            #expect(Self.exitStatus(report) == fixture.exitStatus)
            #expect(report.filesChecked > 0)

            let repaired = try Verifier.verify(path: store, repair: true)
            #expect(Self.exitStatus(repaired) == fixture.exitStatusWithRepair ?? fixture.exitStatus)
            if fixture.exitStatusWithRepair != nil {
                #expect(repaired.findings.allSatisfy { $0.repaired && $0.repairable })
                let again = try Verifier.verify(path: store)
                #expect(again.findings.isEmpty, "\(again.findings)")
            } else {
                #expect(try directoryContents(store) == before, "repair must not touch damage it cannot fix")
            }
        }
    }
}
