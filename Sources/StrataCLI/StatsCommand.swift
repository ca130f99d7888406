import ArgumentParser
import Foundation
import Strata

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print figures about the store.",
        discussion: "One `name: value` line per figure, or one JSON object with --json."
    )

    @Argument(help: "The store's directory; opened read-only.")
    var path: String

    @Flag(help: "Print one JSON object instead of one line per figure.")
    var json = false

    func run() throws {
        let stats = try withStoreForReading(path) { store in try store.stats() }
        let fields = Self.fields(of: stats)
        if json {
            var out: [UInt8] = [UInt8(ascii: "{")]
            for (index, field) in fields.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONLines.appendString(field.name, into: &out)
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: (field.value ?? "null").utf8)
            }
            out.append(UInt8(ascii: "}"))
            Console.printOut(String(decoding: out, as: UTF8.self))
        } else {
            for field in fields {
                Console.printOut("\(field.name): \(field.value ?? "none")")
            }
        }
    }

    /// The figures in declaration order; a nil value has none (JSON null).
    static func fields(of stats: StoreStats) -> [(name: String, value: String?)] {
        [
            ("version", "\(stats.version)"),
            ("memtableEntries", "\(stats.memtableEntries)"),
            ("memtableBytes", "\(stats.memtableBytes)"),
            ("sealedMemtables", "\(stats.sealedMemtables)"),
            ("walSegments", "\(stats.walSegments)"),
            ("walBytes", "\(stats.walBytes)"),
            ("segmentFiles", "\(stats.segmentFiles)"),
            ("segmentBytes", "\(stats.segmentBytes)")
        ]
            + stats.levels.filter { $0.files > 0 }.flatMap { level in
                [
                    ("level\(level.level)Files", "\(level.files)"), ("level\(level.level)Bytes", "\(level.bytes)"),
                    ("level\(level.level)Entries", "\(level.entries)")
                ]
            } + [
                ("spaceAmplification", stats.spaceAmplification.map { String(format: "%.3f", $0) }),
                ("liveSnapshots", "\(stats.liveSnapshots)"),
                ("oldestSnapshotVersion", stats.oldestSnapshotVersion.map { "\($0)" }),
                ("blockCacheBytes", "\(stats.blockCacheBytes)"),
                ("blockCacheCapacity", "\(stats.blockCacheCapacity)"),
                ("flushes", "\(stats.flushes)"),
                ("compactions", "\(stats.compactions)"),
                ("writeStalls", "\(stats.writeStalls)"),
                ("writeStallSeconds", String(format: "%.3f", stats.writeStallSeconds))
            ]
    }
}
