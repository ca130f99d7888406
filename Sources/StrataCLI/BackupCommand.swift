import ArgumentParser
import Foundation
import Strata

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a store, consistent at one commit, to a new directory.",
        discussion: """
            Writes a checkpoint of SOURCE to DESTINATION (a new path or an empty directory): \
            the segment files are hard-linked (copied when DESTINATION is on another volume), \
            the commits still in memory are written as new files, and a fresh manifest names \
            them. The copy opens as a store of its own and passes strata-fsck. SOURCE must not \
            be open in another process (an app holding it can call Store.checkpoint(to:) itself).
            """
    )

    @Argument(help: "The store to copy.")
    var source: String

    @Argument(help: "Where the copy goes: a new path, or an empty directory.")
    var destination: String

    @OptionGroup
    var opening: StoreOpeningOptions

    func run() throws {
        let report = try withStore(source, opening, create: false) { store in try store.checkpoint(to: destination) }
        Console.printOut("version: \(report.version)")
        Console.printOut("segmentFilesShared: \(report.sharedFiles)")
        Console.printOut("segmentFilesWritten: \(report.memtableFiles)")
        Console.printOut("copy: \(destination)")
    }
}
