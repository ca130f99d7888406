import ArgumentParser
import Strata

/// The root `strata` command. Named `StrataTool` so it does not clash with the `Strata`
/// library module this target imports.
@main
struct StrataTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Read, write, import and export a Strata key-value store.",
        discussion: """
            Every subcommand takes the store's directory as its first argument, for example \
            `strata get data.strata mykey`. put, delete, import and demo create the store when \
            it does not exist; compact needs one that exists. One process at a time may have a \
            store open for writing.

            The commands that only read (get, scan, export, stats, backup) open the store \
            read-only: they never create or change a file in it, so they work on read-only \
            media and while another process has the store open, and they see the store as it \
            was when they started.

            Records are JSON lines, one object per line: {"key":"...","value":"..."} with \
            UTF-8 strings. For keys or values that are not valid UTF-8, use "key_base64" / \
            "value_base64" (standard base64) in place of "key" / "value". `scan` and `export` \
            write that form only for bytes that are not valid UTF-8; `import` reads either.
            """,
        subcommands: [
            PutCommand.self, GetCommand.self, DeleteCommand.self, ScanCommand.self,
            ImportCommand.self, ExportCommand.self, StatsCommand.self, CompactCommand.self, BackupCommand.self, DemoCommand.self,
            LifecycleWriterCommand.self
        ]
    )

    /// Parses and runs the command, turning store and CLI failures into one
    /// `strata: <message>` line on stderr and exit status 1, instead of ArgumentParser's
    /// generic "Error:" output. Usage errors keep ArgumentParser's own reporting.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            try command.run()
        } catch let error as StoreError {
            fail(error.description)
        } catch let error as CLIError {
            fail(error.message)
        } catch {
            // ArgumentParser's own errors (help requests, validation, exit codes) also
            // arrive here from `run()`; it knows how to report them.
            exit(withError: error)
        }
    }

    private static func fail(_ message: String) -> Never {
        Console.printError("strata: " + message)
        exit(withError: ExitCode.failure)
    }
}
