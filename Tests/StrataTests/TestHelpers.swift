import Foundation
// Shared plumbing for the model-based, snapshot-isolation and concurrent-writer tests:
// seeds (replayable through STRATA_SEED), the long-test switch (STRATA_LONG_TESTS=1),
// temporary directories, and a thread-safe place to collect failures found off the test's
// own task (writer queue, reader threads), so they can be reported with the seed.
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

enum TestEnvironment {
    // The seed conventions live in StrataTestSupport, shared with the other test targets.
    static var longTests: Bool { TestSeeds.longTests }
    static func scaled(_ count: Int) -> Int { TestSeeds.scaled(count) }
    static func seed(_ defaultSeed: UInt64, test: String) -> UInt64 { TestSeeds.seed(defaultSeed, test: test) }
    static var replaySeed: UInt64? { TestSeeds.replaySeed }

    /// Creates a fresh, empty directory under the system's temporary directory, runs `body`
    /// with its path, and removes it (and everything in it) afterwards.
    static func withTemporaryDirectory<T>(_ label: String, _ body: (String) async throws -> T) async throws -> T {
        TestLog.install()
        let base = FileManager.default.temporaryDirectory.path
        let path = (base.hasSuffix("/") ? base : base + "/") + "strata-\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    /// Bytes as hex, cut after `limit` bytes, for failure messages.
    static func hex(_ bytes: [UInt8]?, limit: Int = 12) -> String {
        guard let bytes else { return "nil" }
        let shown = bytes.prefix(limit).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        return bytes.count > limit ? "\(shown)…(\(bytes.count) bytes)" : (bytes.isEmpty ? "<empty>" : shown)
    }
}

extension TestEnvironment {
    /// Failures noticed where `#expect` cannot attribute them to the test (a writer-queue
    /// closure, a reader thread), kept until the test's own task reports them.
    final class FailureLog: Sendable {
        private let messages = Locked<[String]>([])
        /// At most this many are kept; a broken invariant tends to fail thousands of times.
        let limit: Int

        init(limit: Int = 50) {
            self.limit = limit
        }

        func record(_ message: String) {
            messages.withLock { if $0.count < limit { $0.append(message) } }
        }

        var isEmpty: Bool { messages.withLock { $0.isEmpty } }

        /// Removes and returns what was recorded.
        func drain() -> [String] {
            messages.withLock { messages in
                defer { messages.removeAll() }
                return messages
            }
        }

        /// Reports every recorded failure as an issue of the current test. Returns false when
        /// there was any.
        @discardableResult
        func report(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
            let found = drain()
            for message in found {
                Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
            }
            return found.isEmpty
        }
    }
}

/// An awaited value that never came: what `withDeadline` throws.
struct TimedOut: Error {}

/// Runs `body`, failing the test instead of hanging when it takes longer than `seconds`
/// (an observation that never delivers would otherwise wait forever). Only a guard against a
/// hang, never a speed check: in the full suite on two cores these tests share the machine
/// with crash suites that keep both cooperative threads busy for minutes, so the body may not
/// run at all until they end. A test that takes 1.5 s alone once took over 30 s there, and
/// later 309 s; the deadline is longer than the whole suite takes on two cores (about 550 s),
/// so only a real hang reaches it.
func withDeadline(_ seconds: Int = 900, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut()
        }
        defer { group.cancelAll() }
        try await group.next()
    }
}
