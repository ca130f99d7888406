import ArgumentParser
import Strata

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Print the entries of a key range as JSON lines.",
        discussion: """
            Prints entries with FROM <= key < TO that start with PREFIX, in key order (or \
            from the last down with --reverse), in the format of `export`. Options combine: \
            the range is what all of them allow.
            """
    )

    @Argument(help: "The store's directory; opened read-only.")
    var path: String

    @Option(help: "Only keys that start with this.")
    var prefix: String?

    @Option(help: "Only keys at or after this one.")
    var from: String?

    @Option(help: "Only keys before this one.")
    var to: String?

    @Option(help: "Print at most this many entries.")
    var limit: Int?

    @Flag(help: "Print from the last key down.")
    var reverse = false

    @Flag(help: "PREFIX, FROM and TO are standard base64, for bytes that are not UTF-8.")
    var base64 = false

    func validate() throws {
        if let limit, limit < 0 {
            throw ValidationError("--limit must be 0 or more.")
        }
    }

    func run() throws {
        var lower = try from.map { try ByteEncoding.argument($0, base64: base64, what: "--from") } ?? []
        var upper = try to.map { try ByteEncoding.argument($0, base64: base64, what: "--to") }
        if let prefix {
            let prefixBytes = try ByteEncoding.argument(prefix, base64: base64, what: "--prefix")
            // Intersect [from, to) with the prefix's range [prefix, successor).
            if lower.lexicographicallyPrecedes(prefixBytes) { lower = prefixBytes }
            if let end = Scan.upperBound(forPrefix: prefixBytes), upper.map({ end.lexicographicallyPrecedes($0) }) ?? true {
                upper = end
            }
        }
        let limit = self.limit ?? Int.max
        let reverse = self.reverse
        try withStoreForReading(path) { store in
            var out = OutputBuffer()
            // Options that exclude each other leave an empty range: print nothing rather than
            // hand the engine inverted bounds.
            if let upper, !lower.lexicographicallyPrecedes(upper) { return }
            try store.read { tx in
                var line: [UInt8] = []
                for entry in try tx.scan(from: lower, to: upper, reverse: reverse).prefix(limit) {
                    line.removeAll(keepingCapacity: true)
                    JSONLines.encode(entry, into: &line)
                    try out.append(line)
                }
            }
            try out.flush()
        }
    }
}
