import ArgumentParser
import Foundation

/// `strata-soak`: a long randomized run of writers, readers, snapshots, suspensions, clean
/// reopens and SIGKILLs against one store, checked against a model after every epoch
/// (`scripts/soak MINUTES`). Its last line is `N operations, M violations`; it exits 1 when
/// M is not 0. The seed fixes every choice the processes make, not how their threads
/// interleave.
@main
struct SoakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-soak",
        abstract: "Soak a store: concurrent writes, reads, snapshots, suspensions, reopens and kills, checked against a model.",
        subcommands: [Supervise.self, Child.self],
        defaultSubcommand: Supervise.self)

    struct Supervise: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the soak (the default).")

        @Option(help: "How long to run, in minutes.")
        var minutes: Double = 1

        @Option(help: "The seed; a random one is chosen and printed when omitted.")
        var seed: UInt64?

        @Option(help: "Writer threads in each child process.")
        var writers: Int = 3

        @Option(help: "A directory to run in (kept); by default a temporary one, removed after a clean run.")
        var directory: String?

        func run() throws {
            let seed = self.seed ?? UInt64.random(in: 1...UInt64(UInt32.max))
            let directory = self.directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("strata-soak-\(seed)-\(getpid())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            print("strata-soak: seed \(seed), \(minutes) minutes, \(writers) writers, in \(directory)")
            var supervisor = SoakSupervisor(directory: directory, seed: seed, writers: writers, deadline: Date().addingTimeInterval(minutes * 60))
            do {
                try supervisor.run()
            } catch {
                print("strata-soak: stopped by an error: \(error)")
                supervisor.violations += 1
            }
            print("\(supervisor.epochs) epochs, \(supervisor.kills) of them ended by SIGKILL; replay with --seed \(seed)")
            if supervisor.violations == 0 && self.directory == nil { try? FileManager.default.removeItem(atPath: directory) }
            print("\(supervisor.operations) operations, \(supervisor.violations) violations")
            if supervisor.violations > 0 { throw ExitCode(1) }
        }
    }

    struct Child: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One epoch in a child process (run by the supervisor).", shouldDisplay: false)

        @Option var store: String
        @Option var journal: String
        @Option var epoch: UInt64
        @Option var seed: UInt64
        @Option var writers: Int

        func run() throws {
            try SoakChild.run(storePath: store, journalPath: journal, epoch: epoch, seed: seed, writers: writers)
        }
    }
}
