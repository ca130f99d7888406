// docs/guarantees.md, the promise ledger: every promise the README, the DocC articles and
// docs/ make, with the tests that prove it. This suite reads the ledger and fails when a row
// names no test, or names one that does not exist, so a renamed or deleted test cannot leave
// a promise unproved without someone noticing.
//
// A row is a Markdown table row of three cells: the promise, where it is made, and the tests,
// each written `Suite.function` in backticks: `Suite` a type (struct, class, enum or
// extension) declared in a Swift file under Tests/, and `function` a `func` in that file.
import Foundation
import Testing

private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// One promise of the ledger.
struct LedgerRow: Sendable, CustomStringConvertible {
    var line: Int
    var promise: String
    var tests: [(suite: String, function: String)]

    var description: String { "docs/guarantees.md:\(line) \(promise.prefix(60))" }
}

enum GuaranteesLedger {
    /// The rows of the ledger's tables, header and separator rows left out.
    static func rows(_ text: String) -> [LedgerRow] {
        var rows: [LedgerRow] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("|"), trimmed.hasSuffix("|") else { continue }
            let cells = trimmed.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 3, cells[0] != "Promise", !cells[0].allSatisfy({ $0 == "-" || $0 == ":" }) else { continue }
            rows.append(LedgerRow(line: index + 1, promise: cells[0], tests: testNames(cells[cells.count - 1])))
        }
        return rows
    }

    /// The `Suite.function` names in backticks in a cell.
    static func testNames(_ cell: String) -> [(suite: String, function: String)] {
        var names: [(String, String)] = []
        for (position, piece) in cell.split(separator: "`", omittingEmptySubsequences: false).enumerated() where position % 2 == 1 {
            let parts = piece.split(separator: ".")
            guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else { continue }
            names.append((String(parts[0]), String(parts[1])))
        }
        return names
    }

    /// The Swift files under Tests/, by path, with their text.
    static func testSources(repository: URL) -> [(path: String, text: String)] {
        let tests = repository.appendingPathComponent("Tests")
        guard let walker = FileManager.default.enumerator(atPath: tests.path) else { return [] }
        var sources: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            if let text = try? String(contentsOf: tests.appendingPathComponent(relative), encoding: .utf8) { sources.append((relative, text)) }
        }
        return sources
    }

    /// Whether some file declares the suite and, in the same file, the function.
    static func exists(_ suite: String, _ function: String, in sources: [(path: String, text: String)]) -> Bool {
        sources.contains { source in
            declares(source.text, ["struct", "class", "enum", "extension"].map { "\($0) \(suite)" })
                && declares(source.text, ["func \(function)(", "func \(function)<"])
        }
    }

    private static func declares(_ text: String, _ forms: [String]) -> Bool {
        forms.contains { form in
            var searched = text[...]
            while let range = searched.range(of: form) {
                // Whole words: `struct Store` must not match `struct StoreTests`.
                let next = searched[range.upperBound...].first
                if form.hasSuffix("(") || form.hasSuffix("<") || next.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? true { return true }
                searched = searched[range.upperBound...]
            }
            return false
        }
    }
}

@Suite("The promise ledger names tests that exist")
struct GuaranteesLedgerTests {
    @Test("every promise in docs/guarantees.md names at least one test, and each named test exists")
    func everyNamedTestExists() throws {
        let text = try String(contentsOf: repository.appendingPathComponent("docs/guarantees.md"), encoding: .utf8)
        let rows = GuaranteesLedger.rows(text)
        #expect(rows.count >= 40, "only \(rows.count) promises in the ledger")
        let sources = GuaranteesLedger.testSources(repository: repository)
        for row in rows {
            if row.tests.isEmpty { Issue.record("\(row): names no test as `Suite.function`") }
            for (suite, function) in row.tests where !GuaranteesLedger.exists(suite, function, in: sources) {
                Issue.record("\(row): no test \(suite).\(function) under Tests/ (a type \(suite) and a func \(function) in one file)")
            }
        }
    }

    @Test("the check itself: a name that exists passes, a made-up one and a rowless cell do not")
    func checkerCatchesMissingTests() {
        let sources = GuaranteesLedger.testSources(repository: repository)
        #expect(GuaranteesLedger.exists("GuaranteesLedgerTests", "everyNamedTestExists", in: sources))
        #expect(!GuaranteesLedger.exists("GuaranteesLedgerTests", "noSuchTest", in: sources))
        #expect(!GuaranteesLedger.exists("GuaranteesLedger", "everyNamedTestExistsX", in: sources))
        let rows = GuaranteesLedger.rows(
            """
            | Promise | Made in | Proved by |
            |---|---|---|
            | A refused write writes nothing | README | `LimitsTests.keys`, `LimitsTests.values` |
            | Untested | docs | none yet |
            """)
        #expect(rows.count == 2)
        #expect(rows[0].tests.map(\.function) == ["keys", "values"])
        #expect(rows[1].tests.isEmpty)
    }
}
