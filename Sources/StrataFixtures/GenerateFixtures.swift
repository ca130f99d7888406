import StrataFixtureKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `strata-fixtures <directory>`: writes every fixture store, and their README, into
/// `<directory>` (normally Fixtures/stores, from the repository root).
@main
struct GenerateFixtures {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 1, let directory = arguments.first, !directory.hasPrefix("-") else {
            printError("usage: strata-fixtures <directory>\n  for example, from the repository root: swift run strata-fixtures Fixtures/stores")
            exit(16)
        }
        let cases = FixtureCatalog.all()
        do {
            try FixtureWriter.write(cases, to: directory)
        } catch {
            printError("strata-fixtures: \(error)")
            exit(8)
        }
        print("wrote \(cases.count) fixture stores to \(directory)")
    }
}

/// One line on stderr. Written straight to the descriptor: the C `stderr` global is shared
/// mutable state that strict concurrency refuses.
private func printError(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
