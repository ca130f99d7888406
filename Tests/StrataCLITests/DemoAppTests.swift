import Foundation
import StrataTestSupport
import Testing

// `strata demo --app`: the typed-records tour shows each step, ends with nothing lost, and
// runs again on the store it left, adding to what is there.
@Suite struct DemoAppTests {
    @Test func appDemoShowsEveryStepAndLosesNothing() async throws {
        try await withTemporaryDirectory(label: "demo-app") { dir in
            let store = dir.path("app.strata")
            let first = try await strata("demo", "--app", store)
            #expect(first.status == 0, "\(first)")
            let output = first.output
            for step in [
                "1. Records:", "2. Query: the inbox, newest first: Book flights, Call Ada, Buy milk", "3. Observation:", "4. Suspension:",
                "5. Checkpoint:"
            ] {
                #expect(output.contains(step), "missing \(step.debugDescription) in:\n\(output)")
            }
            #expect(output.contains("refused with .suspended (retryable: true)"), "\(output)")
            #expect(output.contains("9 notes, nothing lost"), "\(output)")
            // The observer's last value is the inbox after the other task's three writes.
            #expect(output.contains("saw") && output.contains("→ 6.") || output.contains("saw 6."), "\(output)")
            #expect(output.contains("holding 9 notes"), "\(output)")
            #expect(first.outputLines.count <= 20, "\(first)")

            let second = try await strata("demo", "--app", store)
            #expect(second.status == 0, "\(second)")
            #expect(second.output.contains("18 notes, nothing lost"), "\(second)")
        }
    }
}
