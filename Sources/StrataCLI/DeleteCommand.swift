import ArgumentParser
import Strata

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Remove a key.",
        discussion: "Removing a key that has no value is not an error."
    )

    @Argument(help: "The store's directory; created when missing.")
    var path: String

    @Argument(help: "The key, as UTF-8 text (or base64 with --base64).")
    var key: String

    @Flag(help: "KEY is standard base64, for bytes that are not UTF-8.")
    var base64 = false

    @OptionGroup
    var opening: StoreOpeningOptions

    func run() throws {
        let keyBytes = try ByteEncoding.argument(key, base64: base64, what: "KEY")
        try withStore(path, opening) { store in
            try store.write { tx in try tx.delete(keyBytes) }
        }
    }
}
