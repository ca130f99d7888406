// Flushes and merges write their segment files a stretch at a time as they build them
// (SegmentOutput, `StoreOptions.segmentWriteBytes`): the files read back whole, and a file
// begun and then failed is removed, its memtable flushed again later with nothing lost.
import Foundation
@_spi(Engine) import StrataFormat
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

@_spi(Testing) @testable import Strata

@Suite struct StreamedSegmentTests {
    static let path = "/streamed"

    /// Stretches of 8 KiB: a 64 KiB memtable's file goes out in several.
    static func options(_ fileSystem: SimulatedFileSystem, inline: Bool, failpoints: Failpoints? = nil) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.logger.logLevel = .critical
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 48 << 10
        options.level0CompactionTrigger = 2
        options.segmentWriteBytes = 8 << 10
        options.runsBackgroundWorkInline = inline
        options.failpoints = failpoints
        return options
    }

    static func key(_ index: Int) -> [UInt8] { Array(String(format: "key-%06d", index).utf8) }

    static func value(_ index: Int, round: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 31 &+ round), count: 200 + index % 300)
    }

    /// Puts keys `0..<count` with round `round`'s values, 20 to a transaction.
    static func fill(_ store: Store, count: Int, round: Int) throws {
        for start in stride(from: 0, to: count, by: 20) {
            try store.write { tx in
                for index in start..<min(start + 20, count) { try tx.put(key(index), value(index, round: round)) }
            }
        }
    }

    static func expectHolds(_ store: Store, count: Int, round: Int, _ context: String) throws {
        let entries = try store.read { tx in try tx.scan(from: []).map { ($0.key, $0.value) } }
        #expect(entries.count == count, "\(context): \(entries.count) entries, expected \(count)")
        for (index, entry) in entries.enumerated() where entry.0 != key(index) || entry.1 != value(index, round: round) {
            Issue.record("\(context): entry \(index) is not key \(index) with round \(round)'s value")
            return
        }
    }

    static func segmentNames(_ fileSystem: SimulatedFileSystem) -> [String] {
        ((try? fileSystem.listDirectory(path)) ?? []).filter { ManifestFormat.number(fromSegmentName: $0) != nil }
    }

    @Test("flushes and merges write each file in stretches, and the store reads every write back, reopened too")
    func streamedFilesHoldEveryWrite() throws {
        let fileSystem = SimulatedFileSystem()
        fileSystem.recordOperations(true)
        var store = try Store(path: Self.path, options: Self.options(fileSystem, inline: true))
        for round in 0..<3 { try Self.fill(store, count: 600, round: round) }
        try store.compact()
        let stats = try store.stats()
        #expect(stats.flushes >= 3 && stats.compactions >= 1, "flushes \(stats.flushes), compactions \(stats.compactions)")
        var writes: [String: Int] = [:]
        for operation in fileSystem.recordedOperations where operation.kind == .write && operation.path.hasSuffix(".sst") {
            writes[operation.path, default: 0] += 1
        }
        // The last flush's and merge's files may be small; the others take several writes.
        #expect(writes.values.filter { $0 >= 4 }.count >= 4, "segment files and their writes: \(writes)")
        try Self.expectHolds(store, count: 600, round: 2, "before the reopen")
        try store.close()
        store = try Store(path: Self.path, options: Self.options(fileSystem, inline: true))
        try Self.expectHolds(store, count: 600, round: 2, "after the reopen")
        try store.close()
        try assertStoreIsClean(path: Self.path, fileSystem: fileSystem, context: "streamed segment files")
    }

    @Test(
        "a flush whose write fails after its file was begun removes the file, and the table is flushed again",
        arguments: [SimulatedFileSystem.Fault.writeError, .diskFull, .shortWrite])
    func failedStreamedWriteLeavesNoFile(fault: SimulatedFileSystem.Fault) throws {
        let fileSystem = SimulatedFileSystem()
        // At the flush's start, aim the fault at its second write: the first stretch is in
        // the file by then, so the failure meets a file already begun.
        let armed = ArmedFlag()
        let failpoints = Failpoints { point in
            guard point == .beforeFlush, armed.disarm() else { return }
            fileSystem.recordOperations(true)
            fileSystem.injectFault(fault, atOperation: 1, countingOnly: [.write])
        }
        let store = try Store(path: Self.path, options: Self.options(fileSystem, inline: false, failpoints: failpoints))
        // Under the memtable's 64 KiB, so nothing flushes before `compact()` asks.
        try Self.fill(store, count: 100, round: 0)
        try #require(try store.stats().flushes == 0)
        armed.arm()
        // The flush the seal starts fails; the compaction flushes the table again first.
        try store.compact()
        guard case .fired(let record)? = fileSystem.faultOutcome else {
            Issue.record("the fault did not fire: \(String(describing: fileSystem.faultOutcome))")
            return
        }
        #expect(record.path.hasSuffix(".sst"), "the fault met \(record), not the flush's file")
        let writes = fileSystem.recordedOperations.filter { $0.kind == .write && $0.path == record.path }
        #expect(writes.count == 2, "the file the fault met saw \(writes)")
        #expect(fileSystem.contents(of: record.path) == nil, "the failed flush left \(record.path)")
        #expect(Self.segmentNames(fileSystem).count == 1, "files after the compaction: \(Self.segmentNames(fileSystem))")
        try Self.expectHolds(store, count: 100, round: 0, "after the failed flush")

        try Self.fill(store, count: 100, round: 1)
        try store.close()
        let reopened = try Store(path: Self.path, options: Self.options(fileSystem, inline: true))
        try Self.expectHolds(reopened, count: 100, round: 1, "after the reopen")
        try reopened.close()
        try assertStoreIsClean(path: Self.path, fileSystem: fileSystem, context: "after a failed streamed flush")
    }
}

/// Set by the test, taken once by the failpoint.
private final class ArmedFlag: Sendable {
    private let armed = Atomic<Bool>(false)
    func arm() { armed.store(true, ordering: .relaxed) }
    /// True once after each `arm()`.
    func disarm() -> Bool { armed.exchange(false, ordering: .relaxed) }
}
