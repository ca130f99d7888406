/// A problem the person running the tool can fix; `message` says what to do, and the tool
/// prints it and exits with status 1.
struct ChartError: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
