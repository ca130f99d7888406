import ArgumentParser
import Strata

struct PutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Set a key to a value.",
        discussion: "The write is synced to disk before the command exits."
    )

    @Argument(help: "The store's directory; created when missing.")
    var path: String

    @Argument(help: "The key, as UTF-8 text (or base64 with --base64).")
    var key: String

    @Argument(help: "The value, as UTF-8 text (or base64 with --base64).")
    var value: String

    @Flag(help: "KEY and VALUE are standard base64, for bytes that are not UTF-8.")
    var base64 = false

    @OptionGroup
    var opening: StoreOpeningOptions

    func run() throws {
        let keyBytes = try ByteEncoding.argument(key, base64: base64, what: "KEY")
        let valueBytes = try ByteEncoding.argument(value, base64: base64, what: "VALUE")
        try withStore(path, opening) { store in
            try store.write { tx in try tx.put(keyBytes, valueBytes) }
        }
    }
}
