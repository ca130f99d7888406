import Foundation
import StrataTestSupport

/// A temporary directory for these tests (`TemporaryDirectory` of StrataTestSupport).
func withTestDirectory<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    try await withTemporaryDirectory(label: "verifier-tests", body)
}

/// The checked-in fixtures, found from this file's place in the repository.
enum FixturePaths {
    static var stores: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // StrataVerifierTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Fixtures/stores")
    }

    /// Copies the checked-in fixture `name` to `destination`, so checks and repairs never
    /// touch the tree.
    static func copy(_ name: String, to destination: String) throws {
        try FileManager.default.copyItem(at: stores.appendingPathComponent(name), to: URL(fileURLWithPath: destination))
    }
}

/// Regular files in a directory and their bytes (subdirectories are left out).
func directoryContents(_ path: String) throws -> [String: [UInt8]] {
    var contents: [String: [UInt8]] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory), isDirectory.boolValue { continue }
        contents[name] = try fileBytes(atPath: URL(fileURLWithPath: path).appendingPathComponent(name).path)
    }
    return contents
}

/// Writes a store held in memory into a new directory.
func writeStore(_ files: [String: [UInt8]], to path: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    for (name, bytes) in files {
        try Data(bytes).write(to: URL(fileURLWithPath: path).appendingPathComponent(name))
    }
}
