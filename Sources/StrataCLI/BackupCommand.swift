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
            them. The copy opens as a store of its own and passes strata-fsck.

            SOURCE is opened read-only, so another process may have it open meanwhile: the \
            copy then holds the commits made before `backup` started, and none after.
            """
    )

    @Argument(help: "The store to copy; opened read-only.")
    var source: String

    @Argument(help: "Where the copy goes: a new path, or an empty directory.")
    var destination: String

    func run() throws {
        let report = try withStoreForReading(source) { store in try store.checkpoint(to: destination) }
        Console.printOut("version: \(report.version)")
        Console.printOut("segmentFilesShared: \(report.sharedFiles)")
        Console.printOut("segmentFilesWritten: \(report.memtableFiles)")
        Console.printOut("copy: \(destination)")
    }
}
