import ArgumentParser
import Foundation
import StrataVerifier

/// `strata-fsck <path> [--json] [--repair]`: a thin wrapper over `Verifier.verify`. Exit
/// statuses add up as e2fsck's do; see ``ExitStatus``.
@main
struct FsckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-fsck",
        abstract: "Check a closed Strata store directory and, with --repair, fix what a crash leaves behind.",
        discussion: """
            Checks the identity file, the manifest, every segment file it lists, and every WAL \
            segment the store would replay, then reports files nothing references. The store \
            must be closed, or suspended by the process that has it open: strata-fsck takes \
            its lock (the LOCK file in the store directory).

            --repair does exactly two things: it cuts a torn write off the end of the WAL (as \
            the store does when it opens), and it deletes files nothing references. It never \
            changes a file the store reads.

            Exit status, added together: 0 clean, 1 problems were repaired, 4 problems are \
            left, 8 the store could not be checked, 16 usage error.
            """
    )

    @Argument(help: "The store directory.")
    var path: String

    @Flag(help: "Print the report as one JSON object instead of text.")
    var json = false

    @Flag(help: "Cut off a torn WAL tail and delete unreferenced files.")
    var repair = false

    /// Parses the arguments and runs. Usage errors exit 16, not ArgumentParser's 64, so the
    /// status stays a sum of e2fsck-style bits.
    static func main() {
        let command: FsckCommand
        do {
            command = try parse()
        } catch {
            let status = exitCode(for: error)
            if status == .success {
                // --help or --version: ArgumentParser prints it and exits 0.
                exit(withError: error)
            }
            // The message ends with the usage line (or, for a missing path, the whole help).
            Console.error(fullMessage(for: error))
            exit(withError: ExitCode(ExitStatus.usage))
        }
        exit(withError: ExitCode(command.check()))
    }

    /// Runs the check and prints the report; returns the exit status.
    func check() -> Int32 {
        let report: VerificationReport
        do {
            report = try Verifier.verify(path: path, repair: repair)
        } catch {
            Console.error("strata-fsck: \(error.message)")
            return ExitStatus.operationalError
        }
        if json {
            Console.output(ReportText.json(report))
        } else {
            for finding in report.findings { Console.output(ReportText.line(finding)) }
            Console.output(ReportText.summary(report))
        }
        return ExitStatus.of(report)
    }
}
