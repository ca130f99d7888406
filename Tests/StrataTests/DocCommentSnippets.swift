// The ```swift blocks of the public modules' doc comments (`///` lines in the Swift files of
// every module under Sources that has a .docc catalog), which DocC shows beside the API.
//
// A doc comment cannot carry snippet markers the way an article does (Quick Help would show
// them), so each module's blocks share one context, declared below, and a block is compiled
// where its own code says it runs: a block that awaits, as the body of an `async throws`
// function; any other, as the body of a throwing function that is not async and as top-level
// code of a main.swift, the two places that pick the blocking forms. A block is parsed with
// the articles' rules (DocSnippets.swift), so the compiler's messages name the Swift file and
// the line of the doc comment.
import Foundation

enum DocCommentSnippets {
    /// Every doc comment block of the public modules, each with its module's context.
    static func load(repository: URL) -> (snippets: [DocSnippet], problems: [String]) {
        var snippets: [DocSnippet] = []
        var problems: [String] = []
        let sources = repository.appendingPathComponent("Sources")
        for module in documentedModules(sources: sources) {
            guard let walker = FileManager.default.enumerator(atPath: sources.appendingPathComponent(module).path) else { continue }
            var files: [String] = []
            for case let relative as String in walker where relative.hasSuffix(".swift") { files.append(relative) }
            for relative in files.sorted() {
                let file = "Sources/\(module)/\(relative)"
                guard let text = try? String(contentsOf: repository.appendingPathComponent(file), encoding: .utf8) else {
                    problems.append("\(file): cannot be read")
                    continue
                }
                let parsed = parse(text, file: file, module: module)
                snippets += parsed.snippets
                problems += parsed.problems
            }
        }
        return (snippets, problems)
    }

    /// The directories under Sources that hold a .docc catalog: the modules whose API is
    /// documented for users.
    static func documentedModules(sources: URL) -> [String] {
        let manager = FileManager.default
        let modules = (try? manager.contentsOfDirectory(atPath: sources.path)) ?? []
        return modules.sorted().filter { module in
            let entries = (try? manager.contentsOfDirectory(atPath: sources.appendingPathComponent(module).path)) ?? []
            return entries.contains { $0.hasSuffix(".docc") }
        }
    }

    /// The blocks of one Swift file's doc comments.
    static func parse(_ text: String, file: String, module: String) -> (snippets: [DocSnippet], problems: [String]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var snippets: [DocSnippet] = []
        var problems: [String] = []
        var index = 0
        while index < lines.count {
            guard comment(lines[index]) != nil else {
                index += 1
                continue
            }
            // One run of consecutive `///` lines is one doc comment.
            let first = index
            var body: [String] = []
            while index < lines.count, let line = comment(lines[index]) {
                body.append(line)
                index += 1
            }
            guard body.contains(where: { $0.trimmingCharacters(in: .whitespaces) == "```swift" }) else { continue }
            let parsed = DocSnippets.parse(body.joined(separator: "\n"), file: file, module: module)
            problems += parsed.problems.map { "\($0) (in the doc comment at line \(first + 1))" }
            for var snippet in parsed.snippets {
                snippet.line += first
                snippet.context = context(for: module)
                let awaits = snippet.lines.contains { $0.contains("await ") }
                snippet.places = awaits ? [.asyncFunction] : [.throwingFunction, .topLevel]
                snippets.append(snippet)
            }
        }
        return (snippets, problems)
    }

    /// The text of a `///` line, without the marker and the one space after it.
    private static func comment(_ line: String) -> String? {
        let trimmed = line.drop(while: { $0 == " " })
        guard trimmed.hasPrefix("///") else { return nil }
        let text = trimmed.dropFirst(3)
        return String(text.hasPrefix(" ") ? text.dropFirst() : text)
    }

    /// What a module's doc comments assume without showing it.
    static func context(for module: String) -> SnippetContext? {
        switch module {
        case "Strata": return strata
        case "StrataRecords": return strataRecords
        default: return nil
        }
    }

    private static let file = "Tests/StrataTests/DocCommentSnippets.swift"

    private static let strata = SnippetContext(
        line: #line + 3,
        lines: lines(
            """
            import Foundation
            let store = try! Store(path: "unused")
            let key: [UInt8] = Array("key".utf8)
            let value: [UInt8] = Array("value".utf8)
            let edited: [UInt8] = Array("edited".utf8)
            let dogValue: [UInt8] = Array("dog".utf8)
            func dogKey(_ name: String) -> [UInt8] { Array("dog/\\(name)".utf8) }
            func show<Shown>(_ shown: Shown, at version: UInt64) {}
            """), file: file)

    private static let strataRecords = SnippetContext(
        line: #line + 3,
        lines: lines(
            """
            import Foundation
            import Strata
            let store = try! Store(path: "unused")
            struct Note: Codable, Sendable, Identifiable {
                var id: UUID
                var folder: String
                var title: String
                var edited: Date
            }
            let byFolder = RecordIndex<Note>("folder") { [$0.folder, $0.edited.descending] }
            let notes = RecordCollection<Note>("notes", indexes: [byFolder])
            let id = UUID()
            struct Mail: Codable, Sendable, Identifiable {
                var id: UUID
                var folder: String
                var received: Date
                var messageID: String
            }
            let customerID = 42
            let placedAt = Date()
            let value: [UInt8] = Array("value".utf8)
            let storedKey = KeyTuple("orders", 42).bytes
            """), file: file)

    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}
