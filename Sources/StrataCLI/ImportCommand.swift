import ArgumentParser
import Foundation
import Strata

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Write JSON lines from standard input into the store.",
        discussion: """
            Reads one {"key":"...","value":"..."} object per line ("key_base64" / \
            "value_base64" for bytes that are not UTF-8); blank lines are skipped. Every \
            BATCH records commit as one transaction, and so does the last partial batch. \
            After each commit, prints `ack N` with N the number of records committed so far.

            A malformed line stops the import with an error naming its line number. Batches \
            committed before it stay committed; the records read since the last `ack` are not \
            written.
            """
    )

    @Argument(help: "The store's directory; created when missing.")
    var path: String

    @Option(help: "Records per transaction.")
    var batch = 1000

    @Option(help: "How durable each commit is before its `ack`: synced (on disk) or buffered (handed to the OS).")
    var durability: DurabilityOption = .synced

    @OptionGroup
    var opening: StoreOpeningOptions

    func validate() throws {
        if batch < 1 {
            throw ValidationError("--batch must be at least 1.")
        }
    }

    func run() throws {
        let batchSize = batch
        let durability = self.durability.durability
        try withStore(path, opening) { store in
            var reader = LineReader(descriptor: 0)
            let decoder = JSONDecoder()
            var pending: [(key: [UInt8], value: [UInt8])] = []
            pending.reserveCapacity(min(batchSize, 100_000))
            var committed = 0
            var lineNumber = 0

            func commit() throws {
                guard !pending.isEmpty else { return }
                try store.write(durability: durability) { tx in
                    for record in pending { try tx.put(record.key, record.value) }
                }
                committed += pending.count
                pending.removeAll(keepingCapacity: true)
                Console.printOut("ack \(committed)")
            }

            while let line = try reader.next() {
                lineNumber += 1
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
                    continue
                }
                do throws(CLIError) {
                    pending.append(try JSONLines.decodeRecord(line, using: decoder))
                } catch {
                    throw CLIError("line \(lineNumber): \(error.message) (\(committed) records were committed before it)")
                }
                if pending.count == batchSize { try commit() }
            }
            try commit()
        }
    }
}
