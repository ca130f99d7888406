import Foundation
import StrataTestSupport
import Testing

// `strata demo --app`: the typed-records tour shows each step, ends with nothing lost, and
// runs again on the store it left, adding to what is there.
@Suite struct DemoAppTests {
    /// The steps' first words, in the order the demo prints them.
    private let steps = ["1. Records:", "2. Query:", "3. Observation:", "4. Suspension:", "5. Checkpoint:"]

    @Test func appDemoShowsEveryStepAndLosesNothing() async throws {
        try await withTemporaryDirectory(label: "demo-app") { dir in
            let store = dir.path("app.strata")
            let first = try await strata("demo", "--app", store)
            #expect(first.status == 0, "\(first)")
            #expect(first.stderr.isEmpty, "\(first)")
            let output = first.output
            let lines = first.outputLines
            let positions = steps.map { step in lines.firstIndex { $0.hasPrefix(step) } }
            #expect(positions.allSatisfy { $0 != nil }, "a step is missing in:\n\(output)")
            #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "steps out of order in:\n\(output)")
            #expect(output.contains("2. Query: the inbox, newest first: Book flights, Call Ada, Buy milk."), "\(output)")
            #expect(output.contains("refused with .suspended (retryable: true)"), "\(output)")
            #expect(output.contains("9 notes, nothing lost"), "\(output)")
            // The observer's last value is the inbox after the other task's three writes.
            #expect(output.contains("saw") && output.contains("→ 6.") || output.contains("saw 6."), "\(output)")
            #expect(output.contains("holding 9 notes"), "\(output)")
            #expect(lines.count <= 20, "\(first)")

            // Again at once, naming the directory with a trailing slash: the notes add up, the
            // newest-first query shows this run's notes, and the checkpoint goes beside the
            // store, never into its directory.
            let second = try await strata("demo", "--app", store + "/")
            #expect(second.status == 0, "\(second)")
            #expect(second.stderr.isEmpty, "\(second)")
            #expect(second.output.contains("2. Query: the inbox, newest first: Book flights, Call Ada, Buy milk."), "\(second)")
            #expect(second.output.contains("18 notes, nothing lost"), "\(second)")
            #expect(second.output.contains("holding 18 notes"), "\(second)")
            let inside = try FileManager.default.contentsOfDirectory(atPath: store)
            #expect(!inside.contains { $0.contains("checkpoint") }, "\(inside)")

            // A store deleted and made again counts its versions from 0 again; its checkpoint
            // takes a free name beside the old store's one instead of failing.
            try FileManager.default.removeItem(atPath: store)
            let fresh = try await strata("demo", "--app", store)
            #expect(fresh.status == 0, "\(fresh)")
            #expect(fresh.output.contains("9 notes, nothing lost"), "\(fresh)")
            #expect(fresh.output.contains("\(store)-checkpoint-v5-2 at version 5"), "\(fresh)")
        }
    }
}
