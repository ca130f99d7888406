import Foundation
import Logging
import StrataIO

/// Where the store's log goes in tests: not to the terminal, where the crash and salvage
/// suites' thousands of expected warnings ("cut a torn write off the end of the WAL") would
/// bury a real failure.
///
/// ``install()`` points swift-log's process-wide factory at a handler that keeps the last
/// lines in memory and prints them only when `STRATA_TEST_LOG=1` is set. The test support
/// types that nearly every test starts with (``TemporaryDirectory``, `SimulatedFileSystem`,
/// ``TestSeeds``) install it, so a `StoreOptions` made after them logs there. A test whose
/// point is a warning passes ``Capture/logger`` as `options.logger` and asserts on what it
/// holds.
public enum TestLog {
    /// The lines kept from the process-wide handler, newest last.
    public static let retained = 200

    // `Locked`, not `Mutex`: ThreadSanitizer sees its pthread lock (StrataIO/Locked.swift).
    private static let recent = Locked<[String]>([])

    private static let installation: Void = {
        let printing = ProcessInfo.processInfo.environment["STRATA_TEST_LOG"] == "1"
        LoggingSystem.bootstrap { label in
            CapturingHandler(label: label) { line in
                if printing { FileHandle.standardError.write(Data((line + "\n").utf8)) }
                recent.withLock { lines in
                    if lines.count == retained { lines.removeFirst() }
                    lines.append(line)
                }
            }
        }
    }()

    /// Routes every logger made from now on to the quiet handler. Idempotent.
    public static func install() {
        _ = installation
    }

    /// The last lines logged through the process-wide handler, by any test.
    public static var recentLines: [String] { recent.withLock { $0 } }

    /// A logger of one test's own, whose lines the test can read.
    public final class Capture: Sendable {
        private let lines = Locked<[String]>([])

        public init() {}

        /// Pass as `StoreOptions.logger`.
        public var logger: Logger {
            Logger(label: "strata") { [self] label in
                CapturingHandler(label: label) { line in self.lines.withLock { $0.append(line) } }
            }
        }

        /// Every line logged, as `level: message key=value ...`.
        public var messages: [String] { lines.withLock { $0 } }

        /// True when a line contains `text`.
        public func contains(_ text: String) -> Bool { messages.contains { $0.contains(text) } }
    }
}

/// A swift-log handler that hands each formatted line to `sink`.
struct CapturingHandler: LogHandler {
    let label: String
    let sink: @Sendable (String) -> Void
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    init(label: String, sink: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.sink = sink
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink("\(event.level) \(label): \(event.message)" + (fields.isEmpty ? "" : " " + fields))
    }
}
