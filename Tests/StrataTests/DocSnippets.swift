// The ```swift blocks of README.md and of every DocC article (any .md file in a .docc
// catalog under Sources), and the Swift files that place each one where a reader pastes it.
//
// Conventions, written as HTML comments, which neither GitHub nor DocC renders:
//
// - `<!-- snippet: skip (reason) -->` on the line right above a ```swift fence leaves that
//   block out: for code that is not Swift to compile, such as a Package.swift fragment. Give
//   the reason; every other block is compiled.
// - `<!-- snippet: context` on a line of its own, then Swift declarations, then `-->` on a
//   line of its own: what the file's blocks assume without showing it (a `store`, a `key`,
//   an app's own types, stand-ins for app frameworks). It is compiled into a module of its
//   own, which each block of that Markdown file imports (with @testable, so nothing needs to
//   be public); a block's own declarations shadow the context's. It holds declarations only,
//   and its imports are added to every block. Fence the declarations with ``` lines inside
//   the comment when a line starts with `@`: DocC would take `@MainActor` at the start of a
//   line for a directive, even in a comment, but not in a code block.
//
// Each block imports its catalog's module (`Strata` for README.md) without saying so, as
// articles leave the import out.
import Foundation

/// The hidden declarations one Markdown file's blocks are compiled with.
struct SnippetContext: Sendable {
    /// The line of the first declaration.
    var line: Int
    var lines: [String]
    /// Where the declarations are written, when not in the block's own file.
    var file: String? = nil
}

/// One ```swift block.
struct DocSnippet: Sendable, CustomStringConvertible {
    /// The Markdown file, relative to the package root.
    var file: String
    /// The line of the block's first line of code (1-based).
    var line: Int
    var lines: [String]
    /// The module the block imports implicitly.
    var module: String
    var context: SnippetContext?
    /// Where the block must compile: an article's block in both places a reader pastes it.
    var places: [Place] = [.asyncFunction, .topLevel]

    var description: String { "\(file):\(line)" }

    /// Where a reader pastes a block, and so where it must compile.
    enum Place: String, CaseIterable, Sendable {
        case asyncFunction = "as the body of an async throws function"
        case topLevel = "as top-level code of a main.swift"
        /// For a doc comment's block that calls the blocking forms: where such code runs.
        case throwingFunction = "as the body of a throwing function that is not async"
    }

    /// The module the context is compiled into. The block imports it, so its own
    /// declarations shadow the context's: a block may declare a `store` the context has too.
    static let contextModule = "SnippetContext"

    /// The context as the single file of ``contextModule``, nil without one.
    var contextFile: SwiftTypeChecker.File? {
        guard let context else { return nil }
        let text = ["import \(module)", "#sourceLocation(file: \(quoted(context.file ?? file)), line: \(context.line))"] + context.lines + ["#sourceLocation()"]
        return .init(name: "context.swift", contents: text.joined(separator: "\n") + "\n")
    }

    /// The file that puts the block in `place`, and whether to parse it as a library's. The
    /// `#sourceLocation` lines make the compiler name the Markdown file and its lines.
    func source(_ place: Place) -> (file: SwiftTypeChecker.File, library: Bool) {
        var imports = ["import \(module)"]
        if let context { imports += ["@testable import \(Self.contextModule)"] + context.lines.filter(Self.isImport) }
        let text: [String]
        switch place {
        case .asyncFunction, .throwingFunction:
            // Imports cannot sit in a function: they move to the top, and blank lines keep the
            // line numbers.
            let signature = place == .asyncFunction ? "func snippetBody() async throws {" : "func snippetBody() throws {"
            text =
                imports + lines.filter(Self.isImport) + [signature, "#sourceLocation(file: \(quoted(file)), line: \(line))"]
                + lines.map { Self.isImport($0) ? "" : $0 } + ["#sourceLocation()", "}"]
            return (.init(name: "snippet.swift", contents: text.joined(separator: "\n") + "\n"), true)
        case .topLevel:
            text = imports + ["#sourceLocation(file: \(quoted(file)), line: \(line))"] + lines + ["#sourceLocation()"]
            return (.init(name: "main.swift", contents: text.joined(separator: "\n") + "\n"), false)
        }
    }

    /// Type-checks the block in each place; what failed, with the compiler's messages.
    func failures(with checker: SwiftTypeChecker) async throws -> [String] {
        try await checker.withScratchDirectory { directory in
            if let contextFile {
                let built = try await checker.emitModule(Self.contextModule, from: [contextFile], in: directory)
                if !built.succeeded { return ["the context of \(file) does not compile:\n\(built.output)"] }
            }
            var failures: [String] = []
            for place in places {
                let (source, library) = source(place)
                let result = try await checker.check([source], library: library, in: directory)
                if !result.succeeded { failures.append("\(file), the block at line \(line), does not compile \(place.rawValue):\n\(result.output)") }
            }
            return failures
        }
    }

    private func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\\", with: "\\\\") + "\"" }

    private static func isImport(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("import ") || trimmed.hasPrefix("@testable import ") || trimmed.hasPrefix("@_spi(")
    }
}

enum DocSnippets {
    /// Every block of README.md and of the DocC catalogs, and what was wrong with the
    /// Markdown (a misplaced marker, an unclosed block).
    static func load(repository: URL) -> (snippets: [DocSnippet], problems: [String]) {
        var snippets: [DocSnippet] = []
        var problems: [String] = []
        for (file, module) in markdownFiles(repository: repository) {
            guard let text = try? String(contentsOf: repository.appendingPathComponent(file), encoding: .utf8) else {
                problems.append("\(file): cannot be read")
                continue
            }
            let parsed = parse(text, file: file, module: module)
            snippets += parsed.snippets
            problems += parsed.problems
        }
        return (snippets, problems)
    }

    /// README.md, and each .md file under a .docc directory of Sources with the module it
    /// documents (the directory under Sources it is in), in a stable order.
    static func markdownFiles(repository: URL) -> [(file: String, module: String)] {
        var files: [(String, String)] = [("README.md", "Strata")]
        let sources = repository.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: sources.path) else { return files }
        var found: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".md") {
            if relative.split(separator: "/").dropLast().contains(where: { $0.hasSuffix(".docc") }) { found.append(relative) }
        }
        for relative in found.sorted() {
            files.append(("Sources/" + relative, String(relative.split(separator: "/")[0])))
        }
        return files
    }

    /// The blocks of one Markdown text.
    static func parse(_ text: String, file: String, module: String) -> (snippets: [DocSnippet], problems: [String]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [(line: Int, lines: [String])] = []
        var context: SnippetContext? = nil
        var problems: [String] = []
        var index = 0
        var skipNext = false
        while index < lines.count {
            let line = lines[index]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let number = index + 1
            if trimmed == "<!-- snippet: context" {
                guard let end = lines[(index + 1)...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "-->" }) else {
                    problems.append("\(file):\(number): a snippet context without a closing --> line")
                    break
                }
                var merged = context ?? SnippetContext(line: number + 1, lines: [])
                if context != nil {
                    // A second context continues the first; keep line numbers by padding.
                    merged.lines += Array(repeating: "", count: number + 1 - (merged.line + merged.lines.count))
                }
                // Fence lines keep DocC from reading the declarations; they are not code.
                merged.lines += lines[(index + 1)..<end].map { $0.trimmingCharacters(in: .whitespaces).hasPrefix("```") ? "" : $0 }
                context = merged
                index = end + 1
                continue
            }
            if trimmed.hasPrefix("<!-- snippet:") {
                if trimmed.hasPrefix("<!-- snippet: skip") && trimmed.hasSuffix("-->") {
                    let next = index + 1 < lines.count ? lines[index + 1].trimmingCharacters(in: .whitespaces) : ""
                    if next == "```swift" {
                        skipNext = true
                    } else {
                        problems.append("\(file):\(number): a skip marker must be on the line right above a ```swift fence")
                    }
                } else {
                    problems.append("\(file):\(number): unknown snippet marker \(trimmed)")
                }
                index += 1
                continue
            }
            if let fence = fenceOpening(line) {
                let indent = fence
                guard let end = lines[(index + 1)...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "```" }) else {
                    problems.append("\(file):\(number): a ```swift block is not closed")
                    break
                }
                if !skipNext {
                    let body = lines[(index + 1)..<end].map { String($0.dropFirst(min(indent, $0.prefix(while: { $0 == " " }).count))) }
                    blocks.append((number + 1, body))
                }
                skipNext = false
                index = end + 1
                continue
            }
            index += 1
        }
        let snippets = blocks.map { DocSnippet(file: file, line: $0.line, lines: $0.lines, module: module, context: context) }
        return (snippets, problems)
    }

    /// The indentation of a ```swift fence line, nil for any other line.
    private static func fenceOpening(_ line: String) -> Int? {
        let indent = line.prefix(while: { $0 == " " }).count
        return line.dropFirst(indent).trimmingCharacters(in: .whitespaces) == "```swift" ? indent : nil
    }
}
