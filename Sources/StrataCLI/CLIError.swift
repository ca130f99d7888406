/// A failure the CLI reports itself: printed as one `strata: <message>` line on stderr, with
/// exit status 1.
struct CLIError: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}
