import Foundation

/// A fresh directory under the system's temporary directory, for tests; `remove()` or
/// `withTemporaryDirectory` removes it.
public struct TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    /// `label` names the directory (`strata-<label>-<UUID>`), so a leftover says which tests
    /// made it.
    public init(label: String) throws {
        TestLog.install()
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory (not created).
    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a temporary directory and removes the directory afterwards, whether
/// `body` returns or throws.
public func withTemporaryDirectory<T>(label: String = "tests", _ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory(label: label)
    defer { directory.remove() }
    return try await body(directory)
}
