import ArgumentParser
import Foundation
import Logging
import Strata
import StrataVerifier

/// `strata-fsck <path> [--json] [--repair] [--salvage]`: a thin wrapper over
/// `Verifier.verify`, and for `--salvage` over a `Store` opened with `StoreOptions.salvage`.
/// Exit statuses add up as e2fsck's do; see ``ExitStatus``.
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

            --salvage goes further, for a store that no longer opens or reads: it opens the \
            store giving up what cannot be read, as StoreOptions.salvage does. A lost or \
            damaged manifest is rebuilt from the segment files; a damaged part of the WAL is \
            skipped and the intact records on both sides of it kept; a segment file that does \
            not read whole is left out. Damaged files are moved into the store's aside/ \
            directory, never deleted. It prints everything it gave up (key ranges of the \
            segment files left out, WAL bytes skipped, transactions lost), then checks the \
            store as without --salvage.

            Exit status, added together: 0 clean, 1 problems were repaired, 2 --salvage gave \
            something up, 4 problems are left, 8 the store could not be checked (or \
            salvaged), 16 usage error.
            """
    )

    @Argument(help: "The store directory.")
    var path: String

    @Flag(help: "Print the report as one JSON object instead of text.")
    var json = false

    @Flag(help: "Cut off a torn WAL tail and delete unreferenced files.")
    var repair = false

    @Flag(help: "Open a damaged store by giving up what cannot be read, report what was dropped, then check it.")
    var salvage = false

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
        var recovery: RecoveryReport? = nil
        if salvage {
            do {
                recovery = try salvageStore()
            } catch {
                Console.error("strata-fsck: the store could not be salvaged: \(error)")
                return ExitStatus.operationalError
            }
        }
        let report: VerificationReport
        do {
            report = try Verifier.verify(path: path, repair: repair)
        } catch {
            Console.error("strata-fsck: \(error.message)")
            return ExitStatus.operationalError
        }
        if let recovery {
            if json {
                Console.output(SalvageText.json(recovery, report))
            } else {
                for line in SalvageText.lines(recovery) { Console.output(line) }
                Console.output(SalvageText.summary(recovery))
            }
        }
        if json {
            if recovery == nil { Console.output(ReportText.json(report)) }
        } else {
            for finding in report.findings { Console.output(ReportText.line(finding)) }
            Console.output(ReportText.summary(report))
        }
        let salvaged = recovery?.salvage.map { !$0.isEmpty } ?? false
        return ExitStatus.of(report) | (salvaged ? ExitStatus.salvaged : ExitStatus.clean)
    }

    /// Opens the store with the engine's salvage and closes it again; its warnings go to
    /// stderr, the report to stdout.
    private func salvageStore() throws -> RecoveryReport {
        var options = StoreOptions()
        options.salvage = true
        options.createIfMissing = false
        var logger = Logger(label: "strata-fsck", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        options.logger = logger
        let store = try Store(path: path, options: options)
        let recovery = store.recovery
        try store.close()
        return recovery
    }
}
