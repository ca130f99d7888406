// The documentation's code compiles: every ```swift block of README.md and of each DocC
// article, in both places a reader pastes it (DocSnippets.swift says how blocks are found,
// skipped and given context). A block must type-check without a warning
//
// - as the body of an `async throws` function, where a call with an async overload
//   (`read`, `write`, `run`, `sync`, `compact`, `suspend`) needs `await`: without it the
//   compiler reports "expression is 'async' but is not marked with 'await'";
// - as top-level code of a main.swift, where the compiler resolves those calls to their
//   blocking overloads even when written `try await` (it warns "no 'async' operations
//   occur within 'await' expression"), so a call meant to suspend belongs in an `async`
//   function the block declares.
//
// A failure names the Markdown file and line, the place, and the compiler's messages, which
// point into the Markdown file.
import Foundation
import Testing

private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
private let catalog = DocSnippets.load(repository: repository)

extension DocSnippet: CustomTestStringConvertible {
    var testDescription: String { description }
}

@Suite("Snippets: the documentation's Swift blocks compile")
struct SnippetTests {
    @Test("README.md and the DocC articles are found, with blocks and well-formed markers")
    func catalogIsFound() {
        #expect(catalog.problems.isEmpty, "\(catalog.problems.joined(separator: "\n"))")
        let files = Set(catalog.snippets.map(\.file))
        #expect(files.contains("README.md"))
        #expect(files.contains { $0.hasPrefix("Sources/Strata/Strata.docc/") })
        #expect(catalog.snippets.count >= 20, "only \(catalog.snippets.count) blocks found")
    }

    @Test("each block type-checks as an async function's body and as top-level code", arguments: catalog.snippets)
    func blockCompiles(_ snippet: DocSnippet) async throws {
        for failure in try await snippet.failures(with: SwiftTypeChecker()) {
            Issue.record(
                "\(failure)",
                sourceLocation: SourceLocation(
                    fileID: "Docs/\(snippet.file)", filePath: repository.appendingPathComponent(snippet.file).path, line: snippet.line, column: 1))
        }
    }

    // The checks themselves: each would pass anything if the places were built wrongly.

    @Test("a blocking call without await fails as an async function's body, naming the Markdown line")
    func missingAwaitFails() async throws {
        let markdown = """
            Text.

            <!-- snippet: context
            let store = try! Store(path: "unused")
            -->

            ```swift
            try store.write { tx in try tx.put("a", "b") }
            ```
            """
        let parsed = DocSnippets.parse(markdown, file: "Synthetic.md", module: "Strata")
        #expect(parsed.problems.isEmpty)
        let snippet = try #require(parsed.snippets.first)
        #expect(snippet.line == 8)
        let failures = try await snippet.failures(with: SwiftTypeChecker())
        #expect(failures.count == 1, "only the async function's body should fail: \(failures)")
        let failure = try #require(failures.first)
        #expect(failure.contains(DocSnippet.Place.asyncFunction.rawValue))
        #expect(failure.contains("Synthetic.md:8:"), "\(failure)")
        #expect(failure.contains("is 'async' but is not marked with 'await'"), "\(failure)")
    }

    @Test("try await on a store call at top level fails: it resolves to the blocking overload")
    func awaitAtTopLevelFails() async throws {
        let markdown = """
            ```swift
            let store = try Store(path: "unused")
            try await store.sync()
            ```
            """
        let snippet = try #require(DocSnippets.parse(markdown, file: "Synthetic.md", module: "Strata").snippets.first)
        let failures = try await snippet.failures(with: SwiftTypeChecker())
        #expect(failures.count == 1, "only the top-level code should fail: \(failures)")
        let failure = try #require(failures.first)
        #expect(failure.contains(DocSnippet.Place.topLevel.rawValue))
        #expect(failure.contains("Synthetic.md:3:"), "\(failure)")
        #expect(failure.contains("no 'async' operations occur within 'await' expression"), "\(failure)")
    }

    @Test("a block may declare what its context declares: its own declaration wins")
    func blockShadowsContext() async throws {
        let markdown = """
            <!-- snippet: context
            import Foundation
            let store = try! Store(path: "unused")
            struct Note { var text = "" }
            -->

            ```swift
            let store = try Store(path: "notes.strata")
            struct Note { var title: String }
            let note = Note(title: "t")
            let data = Data(note.title.utf8)
            print(store.version, data.count)
            ```
            """
        let snippet = try #require(DocSnippets.parse(markdown, file: "Synthetic.md", module: "Strata").snippets.first)
        let failures = try await snippet.failures(with: SwiftTypeChecker())
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("skip markers, indented fences and imports are read as documented")
    func markers() throws {
        let markdown = """
            <!-- snippet: skip (a manifest fragment) -->
            ```swift
            .package(path: "../strata")
            ```
            - A list item:
              ```swift
              import Foundation
              let data = Data()
              ```
            <!-- snippet: skip -->
            Not a fence.
            <!-- snippet: frobnicate -->
            """
        let parsed = DocSnippets.parse(markdown, file: "M.md", module: "Strata")
        #expect(parsed.snippets.count == 1)
        let snippet = try #require(parsed.snippets.first)
        #expect(snippet.line == 7)
        #expect(snippet.lines == ["import Foundation", "let data = Data()"])
        #expect(parsed.problems.count == 2)
        #expect(snippet.source(.asyncFunction).file.contents.hasPrefix("import Strata\nimport Foundation\nfunc snippetBody() async throws {\n"))
    }
}
