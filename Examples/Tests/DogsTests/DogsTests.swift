import DogsKit
import Foundation
import Testing

@Suite("Two dogs in one transaction")
struct DogsTests {
    @Test("two composed adds are one commit; a failing composition applies nothing")
    func twoDogs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dogs-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = try runTwoDogsScenario(directory: directory)
        #expect(report.failures == [])
        #expect(report.commitsForTwoDogs == 1)
        #expect(report.dogsAfterTwo.map(\.name) == ["Fido", "Rex"])
        #expect(report.refusedError == DogExists(name: "Rex"))
        #expect(report.dogsAfterRefusal.map(\.name) == ["Fido", "Rex"])
    }
}
