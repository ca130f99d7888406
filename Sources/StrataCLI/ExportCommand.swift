import ArgumentParser
import Strata

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print every entry, in key order, as JSON lines.",
        discussion: """
            One {"key":"...","value":"..."} object per line; bytes that are not valid UTF-8 \
            are written as "key_base64" / "value_base64". `strata import` reads the output back.
            """
    )

    @Argument(help: "The store's directory; opened read-only.")
    var path: String

    func run() throws {
        try withStoreForReading(path) { store in
            var out = OutputBuffer()
            try store.read { tx in
                var line: [UInt8] = []
                for entry in try tx.scan(from: [], to: nil) {
                    line.removeAll(keepingCapacity: true)
                    JSONLines.encode(entry, into: &line)
                    try out.append(line)
                }
            }
            try out.flush()
        }
    }
}
