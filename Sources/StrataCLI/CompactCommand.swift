import ArgumentParser
import Foundation
import Strata

struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Merge every segment file into one level.",
        discussion: """
            Flushes the memtables and rewrites the store's files so each live key is stored \
            once: overwritten versions and deleted keys stop taking space. Prints the bytes \
            of segment files before and after.
            """
    )

    @Argument(help: "The store's directory.")
    var path: String

    @OptionGroup
    var opening: StoreOpeningOptions

    func run() throws {
        let (before, after) = try withStore(path, opening, create: false) { store in
            let before = try store.stats()
            try store.compact()
            return (before, try store.stats())
        }
        Console.printOut("segmentBytes: \(before.segmentBytes) -> \(after.segmentBytes)")
        Console.printOut("segmentFiles: \(before.segmentFiles) -> \(after.segmentFiles)")
        if let amplification = after.spaceAmplification {
            Console.printOut("spaceAmplification: " + String(format: "%.3f", amplification))
        }
    }
}
