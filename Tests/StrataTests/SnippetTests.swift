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
private let docComments = DocCommentSnippets.load(repository: repository)

/// Records each place where `snippet` does not compile, at its line in its own file.
private func recordFailures(of snippet: DocSnippet) async throws {
    for failure in try await snippet.failures(with: SwiftTypeChecker()) {
        Issue.record(
            "\(failure)",
            sourceLocation: SourceLocation(
                fileID: "Docs/\(snippet.file)", filePath: repository.appendingPathComponent(snippet.file).path, line: snippet.line, column: 1))
    }
}

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
        try await recordFailures(of: snippet)
    }

    @Test("the public modules' doc comments are found, with their blocks")
    func docCommentsAreFound() {
        #expect(docComments.problems.isEmpty, "\(docComments.problems.joined(separator: "\n"))")
        #expect(Set(docComments.snippets.map(\.module)) == ["Strata", "StrataRecords"])
        #expect(docComments.snippets.count >= 12, "only \(docComments.snippets.count) doc comment blocks found")
    }

    @Test("each doc comment block type-checks where its code runs", arguments: docComments.snippets)
    func docCommentBlockCompiles(_ snippet: DocSnippet) async throws {
        try await recordFailures(of: snippet)
    }

    @Test("a doc comment block is found at its Swift line, and one that awaits is checked as an async body")
    func docCommentParsing() throws {
        let source = """
            import Strata

            /// Text.
            ///
            /// ```swift
            /// for await update in store.observe(.get("k")) { print(update) }
            /// ```
            public struct Shown {}

            /// ```swift
            /// try store.sync()
            /// ```
            func f() {}
            """
        let parsed = DocCommentSnippets.parse(source, file: "Sources/Strata/Shown.swift", module: "Strata")
        #expect(parsed.problems.isEmpty)
        #expect(parsed.snippets.map(\.line) == [6, 11])
        #expect(parsed.snippets.map(\.places) == [[.asyncFunction], [.throwingFunction, .topLevel]])
        #expect(parsed.snippets.first?.lines == [#"for await update in store.observe(.get("k")) { print(update) }"#])
    }

    // README's "Swift picks one by context" paragraph, claim by claim. `missingAwaitFails` and
    // `awaitAtTopLevelFails` below hold the first and the last; these hold the others.

    @Test("README: synchronous code picks the blocking form, also a closure without await inside an async function or a Task")
    func blockingFormInSynchronousCode() async throws {
        let source = """
            import Strata
            func tool(_ store: Store) throws -> UInt64 {
                try store.sync()
                return try store.read { tx in tx.version }
            }
            func app(_ store: Store) async throws {
                let work = { () throws in try store.sync() }
                try work()
                Task { _ = try store.read { tx in tx.version } }
                Task { try await store.sync() }
            }
            """
        let result = try await SwiftTypeChecker().check(source)
        #expect(result.succeeded, "\(result.output)")
        #expect(!result.output.contains("warning"), "\(result.output)")
    }

    @Test("README: a closure that awaits anything is async, so a store call in it needs await")
    func closureThatAwaitsIsAsync() async throws {
        let source = """
            import Strata
            func app(_ store: Store) async throws {
                Task { try await Task.sleep(for: .milliseconds(1)); try store.sync() }
            }
            """
        let result = try await SwiftTypeChecker().check(source)
        #expect(!result.succeeded)
        #expect(result.output.contains("is 'async' but is not marked with 'await'"), "\(result.output)")
    }

    @Test("README: top-level code picks the blocking form even when it awaits other calls")
    func topLevelPicksBlockingEvenWhenAsync() async throws {
        let blocking = """
            import Strata
            let store = try Store(path: "unused")
            try await Task.sleep(for: .milliseconds(1))
            try store.sync()
            _ = try store.read { tx in tx.version }
            """
        let compiled = try await SwiftTypeChecker().check([.init(name: "main.swift", contents: blocking)], library: false)
        #expect(compiled.succeeded, "\(compiled.output)")
        #expect(!compiled.output.contains("warning"), "\(compiled.output)")
        let awaited = blocking + "\ntry await store.sync()\n"
        let warned = try await SwiftTypeChecker().check([.init(name: "main.swift", contents: awaited)], library: false)
        #expect(warned.output.contains("no 'async' operations occur within 'await' expression"), "\(warned.output)")
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
