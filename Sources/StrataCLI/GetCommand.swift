import ArgumentParser
import Strata

struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the value of a key, followed by a newline.",
        discussion: "Exits with status 1 when the key has no value."
    )

    @Argument(help: "The store's directory; opened read-only.")
    var path: String

    @Argument(help: "The key, as UTF-8 text (or base64 with --base64).")
    var key: String

    @Flag(help: "KEY is standard base64, and the value is printed as base64.")
    var base64 = false

    func run() throws {
        let keyBytes = try ByteEncoding.argument(key, base64: base64, what: "KEY")
        let value = try withStoreForReading(path) { store in
            try store.read { tx in try tx.get(keyBytes) }
        }
        guard let value else {
            throw CLIError("no value for key \(ByteEncoding.display(keyBytes))")
        }
        var out = OutputBuffer()
        if base64 {
            try out.append(ByteEncoding.base64(value).utf8)
        } else {
            try out.append(value)
        }
        try out.append(CollectionOfOne(UInt8(ascii: "\n")))
        try out.flush()
    }
}
