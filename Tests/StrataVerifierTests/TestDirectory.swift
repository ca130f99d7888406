import Foundation

/// A fresh directory under the system's temporary directory, removed when the body ends.
struct TestDirectory {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-verifier-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory (not created).
    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

func withTestDirectory<T>(_ body: (TestDirectory) async throws -> T) async throws -> T {
    let directory = try TestDirectory()
    defer { directory.remove() }
    return try await body(directory)
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
        contents[name] = Array(try Data(contentsOf: URL(fileURLWithPath: path).appendingPathComponent(name)))
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
