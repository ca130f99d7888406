import Foundation
import StrataTestSupport
import Testing

/// Every input kept for the `jsonlines` fuzz target (Fixtures/fuzz/jsonlines, seeds and any
/// crash found later alike) goes through `strata import` as a user would pipe it: the
/// command must end with an exit status, never a signal, and a rejected line must be named
/// in a message.
@Suite struct JSONLinesCorpusTests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // StrataCLITests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Fixtures/fuzz/jsonlines")
    }

    @Test func everyKeptInputImportsOrIsRefusedWithAMessage() async throws {
        let inputs = try FileManager.default.subpathsOfDirectory(atPath: Self.corpus.path).sorted()
            .map { Self.corpus.appendingPathComponent($0) }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
        #expect(!inputs.isEmpty, "Fixtures/fuzz/jsonlines holds no inputs")
        for input in inputs {
            try await withTemporaryDirectory(label: "jsonlines-corpus") { dir in
                let result = try await strata("import", dir.path("corpus.strata"), input: try fileBytes(atPath: input.path))
                #expect(!result.signaled, "\(input.lastPathComponent): strata import died on a signal: \(result)")
                #expect(result.status == 0 || !result.errorText.isEmpty, "\(input.lastPathComponent): \(result)")
            }
        }
    }
}
