import Foundation
import Strata
import StrataFormat
import StrataIO
import StrataTestSupport
import StrataVerifier
import Testing

/// The damaged-store fixtures (Fixtures/stores, written by StrataFixtureKit), opened with
/// `StoreOptions.salvage`: each keeps exactly what is not in its damaged part, reports exactly
/// what it dropped, verifies clean, and opens normally afterwards.
@Suite struct SalvageFixtureTests {
    static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/stores")
    }

    /// What the clean fixture holds after its 14 transactions (Sources/StrataFixtureKit/CleanStore.swift).
    static let clean: [String: String] = [
        "banana": "ripe", "date": "brown", "elderberry": "purple", "fig": "green", "grape": "purple", "lemon": "yellow",
        "mango": "orange", "nectarine": "orange"
    ]

    static func copy(_ fixture: String, to directory: TemporaryDirectory) throws -> String {
        let path = directory.path(fixture)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent(fixture), to: URL(fileURLWithPath: path))
        return path
    }

    static func contents(_ store: Store) throws -> [String: String] {
        var result: [String: String] = [:]
        for entry in try store.read({ Array(try $0.scan(from: [])) }) {
            result[String(decoding: entry.key, as: UTF8.self)] = String(decoding: entry.value, as: UTF8.self)
        }
        return result
    }

    static func salvageOptions() -> StoreOptions {
        var options = StoreOptions()
        options.salvage = true
        options.createIfMissing = false
        return options
    }

    /// Salvages `path`, checks the result against `expected`, the verifier and a normal open;
    /// returns the report.
    static func salvage(
        _ path: String, expecting expected: [String: String], log: TestLog.Capture? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RecoveryReport {
        var options = salvageOptions()
        if let log { options.logger = log.logger }
        let store = try Store(path: path, options: options)
        let report = store.recovery
        #expect(try contents(store) == expected, sourceLocation: sourceLocation)
        try store.close()
        let verification = try Verifier.verify(path: path)
        #expect(verification.isClean, "\(verification.findings)", sourceLocation: sourceLocation)
        let again = try Store(path: path)
        #expect(try contents(again) == expected, sourceLocation: sourceLocation)
        #expect(again.recovery.salvage == nil)
        try again.close()
        return report
    }

    static func expectCorruption(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: StoreError.self, sourceLocation: sourceLocation) {
            let store = try Store(path: path)
            defer { try? store.close() }
            _ = try contents(store)
        }
        #expect(error?.code == .corruption, sourceLocation: sourceLocation)
    }

    @Test func anUndamagedStoreLosesNothing() async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy("clean", to: directory)
            let report = try Self.salvage(path, expecting: Self.clean)
            #expect(report.salvage == SalvageReport())
            #expect(report.salvage?.isEmpty == true)
            #expect(report.movedAside.isEmpty)
        }
    }

    @Test func aDamagedManifestIsRebuiltFromTheSegmentFiles() async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy("flipped-manifest-record", to: directory)
            Self.expectCorruption(path)
            let report = try Self.salvage(path, expecting: Self.clean)
            let salvage = try #require(report.salvage)
            #expect(salvage.manifestRebuilt?.contains("rebuilt from 2 segment files") == true, "\(salvage)")
            #expect(salvage.droppedLogBytes.isEmpty && salvage.missingSequences.isEmpty && salvage.lostSegments.isEmpty)
            #expect(report.movedAside.map(\.name) == ["manifest-0000000003.log"])
            #expect(FileManager.default.fileExists(atPath: path + "/aside/manifest-0000000003.log"))
        }
    }

    @Test func aManifestWithOverlappingFilesInALevelIsRebuilt() async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy("overlapping-level1", to: directory)
            Self.expectCorruption(path)
            let report = try Self.salvage(path, expecting: Self.clean)
            #expect(report.salvage?.manifestRebuilt?.contains("overlap") == true, "\(report)")
            #expect(report.salvage?.lostSegments.isEmpty == true)
        }
    }

    @Test func aDeletedManifestIsRebuiltFromTheSegmentFiles() async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy("clean", to: directory)
            try FileManager.default.removeItem(atPath: path + "/manifest-0000000003.log")
            // An ordinary open must not take the segment files for leftovers and delete them.
            Self.expectCorruption(path)
            #expect(FileManager.default.fileExists(atPath: path + "/seg-0000000002.sst"))
            let report = try Self.salvage(path, expecting: Self.clean)
            #expect(report.salvage?.manifestRebuilt != nil)
            #expect(report.salvage?.lostSegments.isEmpty == true, "\(report)")
        }
    }

    @Test func aDamagedWALRecordLosesThatTransactionOnly() async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy("flipped-wal-record", to: directory)
            Self.expectCorruption(path)
            // Sequence 11 put lemon and mango; 12, 13 and 14 come after it.
            var expected = Self.clean
            expected["lemon"] = nil
            expected["mango"] = nil
            let log = TestLog.Capture()
            let report = try Self.salvage(path, expecting: expected, log: log)
            // What salvage gave up is logged as warnings as well as reported.
            #expect(log.contains("salvage skipped damaged WAL bytes"), "\(log.messages)")
            #expect(log.messages.contains { $0.hasPrefix("warning") && $0.contains("opened a damaged store") }, "\(log.messages)")
            let salvage = try #require(report.salvage)
            #expect(salvage.missingSequences == [11...11])
            #expect(salvage.manifestRebuilt == nil && salvage.lostSegments.isEmpty)
            #expect(salvage.droppedLogBytes.map(\.file) == ["wal-0000000003.log"])
            #expect(salvage.droppedLogBytes.first?.offset == 32)
            #expect(report.movedAside.map(\.name) == ["wal-0000000003.log"])
        }
    }

    @Test(arguments: ["flipped-data-block", "flipped-index-block", "flipped-filter-block", "flipped-footer", "truncated-segment"])
    func aDamagedSegmentFileIsLeftOutWithItsKeyRange(fixture: String) async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy(fixture, to: directory)
            Self.expectCorruption(path)
            // The level 1 file held apple to fig at sequences 1 to 6: what later commits did
            // not overwrite or delete is gone.
            var expected = Self.clean
            for key in ["date", "elderberry", "fig"] { expected[key] = nil }
            let report = try Self.salvage(path, expecting: expected)
            let salvage = try #require(report.salvage)
            #expect(salvage.lostSegments.count == 1)
            let lost = try #require(salvage.lostSegments.first)
            #expect(lost.file == "seg-0000000002.sst")
            #expect(lost.movedTo == "aside/seg-0000000002.sst")
            #expect(lost.smallestKey == Array("apple".utf8) && lost.largestKey == Array("fig".utf8))
            #expect(lost.entryCount == 6)
            #expect(salvage.manifestRebuilt == nil && salvage.droppedLogBytes.isEmpty && salvage.missingSequences.isEmpty)
        }
    }

    @Test func aMissingSegmentFileIsReported() async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy("missing-segment", to: directory)
            Self.expectCorruption(path)
            // The level 0 file held banana, cherry's tombstone, grape and kiwi (7 to 10).
            var expected = Self.clean
            expected["grape"] = nil
            expected["cherry"] = "dark red"
            let report = try Self.salvage(path, expecting: expected)
            let lost = try #require(report.salvage?.lostSegments.first)
            #expect(lost.file == "seg-0000000004.sst" && lost.movedTo == nil && lost.entryCount == 4)
        }
    }

    @Test func salvageIsRefusedReadOnly() async throws {
        try await withTemporaryDirectory(label: "salvage") { directory in
            let path = try Self.copy("clean", to: directory)
            var options = Self.salvageOptions()
            options.readOnly = true
            let error = #expect(throws: StoreError.self) { _ = try Store(path: path, options: options) }
            #expect(error?.code == .invalidArgument)
        }
    }
}

/// Salvage of stores generated here, deterministically: damage in the middle of an early WAL
/// segment, and a manifest lost from a store whose files sit at several levels.
@Suite struct SalvageGeneratedTests {
    static func options(_ fs: SimulatedFileSystem, salvage: Bool = false) -> StoreOptions {
        var options = APITestSimulated.options(fs, walSegmentBytes: 64 * 1024)
        options.salvage = salvage
        return options
    }

    static func open(_ fs: SimulatedFileSystem, salvage: Bool = false) throws -> Store {
        try Store(path: APITestSimulated.path, options: options(fs, salvage: salvage))
    }

    /// Transactions with sequences 1 to 60, each putting key i and a 4 KB padding key.
    static func commit(_ store: Store, _ range: Range<Int>) throws {
        for index in range {
            try store.write { tx in
                try tx.put(apiKey(index), apiValue(index))
                try tx.put(apiKey(index) + apiBytes("-pad"), [UInt8](repeating: 0x70, count: 4_000))
            }
        }
    }

    static func expected(_ indices: [Int]) -> [Entry] {
        indices.flatMap {
            [Entry(key: apiKey($0), value: apiValue($0)), Entry(key: apiKey($0) + apiBytes("-pad"), value: [UInt8](repeating: 0x70, count: 4_000))]
        }
        .sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    /// Salvage interrupted by power loss after any of its file-system operations, then run
    /// again on what the disk kept: the second run ends with the same contents, and the store
    /// verifies clean. Salvage must never lose more than the damage did.
    @Test(arguments: ["a damaged WAL record", "a lost manifest"])
    func salvageInterruptedByACrashCanBeRunAgain(damage: String) throws {
        let damaged = SimulatedFileSystem()
        let expected: [Entry]
        if damage == "a lost manifest" {
            let store = try Self.open(damaged)
            try Self.commit(store, 0..<20)
            try store.compact()
            try Self.commit(store, 20..<30)
            try store.compact()
            try Self.commit(store, 30..<40)
            try store.close()
            for name in try damaged.listDirectory(APITestSimulated.path) where name.hasPrefix("manifest-") {
                try damaged.removeFile(APITestSimulated.path + "/" + name)
            }
            expected = Self.expected(Array(0..<40))
        } else {
            expected = Self.expected(try Self.damageAnEarlyWALRecord(damaged).kept)
        }
        // A dry run counts the operations of a salvaging open and close.
        let dry = damaged.crashImage(.keepAll)
        let before = dry.operationCount
        try Self.open(dry, salvage: true).close()
        let operations = dry.operationCount - before
        #expect(operations > 10)
        for crashAt in 0...operations {
            for mode in [SimulatedFileSystem.CrashMode.loseAllUnsynced, .random(seed: UInt64(crashAt))] {
                let fs = damaged.crashImage(.keepAll)
                fs.failAfter(operations: fs.operationCount + crashAt)
                let interrupted = try? Self.open(fs, salvage: true)
                #expect(crashAt > 0 || interrupted == nil, "the crash comes before the salvage's first write")
                try? interrupted?.close()
                let image = fs.crashImage(mode)
                let store = try Self.open(image, salvage: true)
                #expect(try apiAllEntries(store) == expected, "crash at operation \(crashAt), \(mode)")
                try store.close()
                try assertStoreIsClean(path: APITestSimulated.path, fileSystem: image, context: "crash at operation \(crashAt), \(mode)")
            }
        }
    }

    /// A closed store of 60 transactions over several WAL segments, with one record in the
    /// middle of the first segment damaged. Returns the segments, the first segment's records,
    /// the damaged one's index and the transactions that survive it.
    @discardableResult
    static func damageAnEarlyWALRecord(_ fs: SimulatedFileSystem) throws -> (
        segments: [String], records: [(offset: Int, sequence: UInt64)], damaged: Int, kept: [Int]
    ) {
        let store = try Self.open(fs)
        try Self.commit(store, 0..<60)
        try store.close()
        let segments = try fs.listDirectory(APITestSimulated.path).filter { $0.hasPrefix("wal-") }.sorted()
        let first = APITestSimulated.path + "/" + segments[0]
        var bytes = try fs.readWholeFile(first)
        var records: [(offset: Int, sequence: UInt64)] = []
        var scanner = WALScanner(bytes: bytes)
        while case .record(let payload, let offset, _) = scanner.next() {
            let header = try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
            if header.kind == .batch { records.append((offset, header.sequence)) }
        }
        bytes[records[2].offset + 12] ^= 0x40
        let handle = try fs.openFile(first, create: false)
        try handle.write(bytes, at: 0)
        try handle.sync()
        try handle.close()
        return (segments, records, 2, (0..<60).filter { UInt64($0 + 1) != records[2].sequence })
    }

    @Test func aDamagedWALHeaderKeepsTheRecordsBehindIt() throws {
        let fs = SimulatedFileSystem()
        let store = try Self.open(fs)
        try Self.commit(store, 0..<3)
        try store.close()
        try fs.corrupt(path: APITestSimulated.segment(1), offset: 20, xor: 0x04)
        let error = #expect(throws: StoreError.self) { _ = try Self.open(fs) }
        #expect(error?.code == .corruption)
        let salvaged = try Self.open(fs, salvage: true)
        #expect(try apiAllEntries(salvaged) == Self.expected(Array(0..<3)))
        let report = try #require(salvaged.recovery.salvage)
        #expect(report.droppedLogBytes.map { [$0.file, "\($0.offset)", "\($0.byteCount)"] } == [["wal-0000000001.log", "0", "32"]])
        #expect(report.missingSequences.isEmpty)
        try salvaged.close()
        try assertStoreIsClean(path: APITestSimulated.path, fileSystem: fs, context: "after salvage")
        let again = try Self.open(fs)
        #expect(try apiAllEntries(again) == Self.expected(Array(0..<3)))
        try again.close()
    }

    /// In the last segment, damage that a later record (here the close's sync mark) proves
    /// synced is corruption, not a torn tail: salvage keeps the records after it too.
    @Test func provenDamageInTheLastSegmentKeepsTheRecordsAfterIt() throws {
        let fs = SimulatedFileSystem()
        let store = try Self.open(fs)
        try Self.commit(store, 0..<5)
        try store.close()
        let segment = APITestSimulated.segment(1)
        var records: [Int] = []
        var scanner = WALScanner(bytes: try fs.readWholeFile(segment))
        while case .record(_, let offset, _) = scanner.next() { records.append(offset) }
        try fs.corrupt(path: segment, offset: records[1] + 12, xor: 0x01)
        let error = #expect(throws: StoreError.self) { _ = try Self.open(fs) }
        #expect(error?.code == .corruption)
        let salvaged = try Self.open(fs, salvage: true)
        #expect(try apiAllEntries(salvaged) == Self.expected([0, 2, 3, 4]))
        let report = try #require(salvaged.recovery.salvage)
        #expect(report.missingSequences == [2...2])
        #expect(report.droppedLogBytes.map(\.offset) == [Int64(records[1])])
        #expect(salvaged.recovery.truncatedTail == nil)
        try salvaged.close()
        try assertStoreIsClean(path: APITestSimulated.path, fileSystem: fs, context: "after salvage")
    }

    @Test func aDamagedRecordInAnEarlyWALSegmentKeepsTheRecordsAroundIt() throws {
        let fs = SimulatedFileSystem()
        let store = try Self.open(fs)
        try Self.commit(store, 0..<60)
        try store.close()
        let segments = try fs.listDirectory(APITestSimulated.path).filter { $0.hasPrefix("wal-") }.sorted()
        #expect(segments.count >= 3)
        let first = APITestSimulated.path + "/" + segments[0]
        var bytes = try fs.readWholeFile(first)
        // The records of the first segment; damage the third, a transaction with records on
        // both sides of it in the same segment.
        var records: [(offset: Int, sequence: UInt64)] = []
        var scanner = WALScanner(bytes: bytes)
        while case .record(let payload, let offset, _) = scanner.next() {
            let header = try payload.withUnsafeBytes { try BatchFormat.decodeHeader($0) }
            if header.kind == .batch { records.append((offset, header.sequence)) }
        }
        #expect(records.count >= 5)
        let damaged = records[2]
        bytes[damaged.offset + 12] ^= 0x40
        let handle = try fs.openFile(first, create: false)
        try handle.write(bytes, at: 0)
        try handle.sync()
        try handle.close()

        let error = #expect(throws: StoreError.self) { _ = try Self.open(fs) }
        #expect(error?.code == .corruption)

        let salvaged = try Self.open(fs, salvage: true)
        let kept = (0..<60).filter { UInt64($0 + 1) != damaged.sequence }
        #expect(try apiAllEntries(salvaged) == Self.expected(kept))
        let report = try #require(salvaged.recovery.salvage)
        #expect(
            report.droppedLogBytes.map { [$0.file, "\($0.offset)", "\($0.byteCount)"] } == [
                [segments[0], "\(damaged.offset)", "\(records[3].offset - damaged.offset)"]
            ])
        #expect(report.missingSequences == [damaged.sequence...damaged.sequence])
        #expect(report.manifestRebuilt == nil && report.lostSegments.isEmpty)
        #expect(salvaged.recovery.movedAside.map(\.name) == [segments[0]])
        // The store goes on: new commits, then an ordinary open.
        try salvaged.write { tx in try tx.put(apiBytes("after"), apiBytes("salvage")) }
        try salvaged.close()
        try assertStoreIsClean(path: APITestSimulated.path, fileSystem: fs, context: "after salvage")
        let again = try Self.open(fs)
        #expect(again.recovery.salvage == nil)
        #expect(
            try apiAllEntries(again)
                == (Self.expected(kept) + [Entry(key: apiBytes("after"), value: apiBytes("salvage"))]).sorted { $0.key.lexicographicallyPrecedes($1.key) })
        try again.close()
    }

    @Test func aLostManifestOfAStoreAtSeveralLevelsKeepsTheNewestOfEveryKey() throws {
        let fs = SimulatedFileSystem()
        var options = APITestSimulated.options(fs)
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.level0CompactionTrigger = 2
        let store = try Store(path: APITestSimulated.path, options: options)
        let seed = TestSeeds.seed(7, test: "salvageLostManifest")
        var random = SeededRandom(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        for round in 0..<8 {
            for _ in 0..<300 {
                let key = apiKey(Int.random(in: 0..<400, using: &random))
                if Int.random(in: 0..<5, using: &random) == 0 {
                    try store.write { tx in try tx.delete(key) }
                    model[key] = nil
                } else {
                    let value = apiBytes("r\(round)-") + [UInt8](repeating: UInt8(round), count: Int.random(in: 10..<400, using: &random))
                    try store.write { tx in try tx.put(key, value) }
                    model[key] = value
                }
            }
            if round % 3 == 2 { try store.compact() }
        }
        try store.close()
        let names = try fs.listDirectory(APITestSimulated.path)
        #expect(names.filter { $0.hasPrefix("seg-") }.count >= 2)
        for name in names where name.hasPrefix("manifest-") { try fs.removeFile(APITestSimulated.path + "/" + name) }

        #expect(throws: StoreError.self) { _ = try Store(path: APITestSimulated.path, options: options) }
        options.salvage = true
        let salvaged = try Store(path: APITestSimulated.path, options: options)
        let expected = model.map { Entry(key: $0.key, value: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        #expect(try apiAllEntries(salvaged) == expected, "replay with STRATA_SEED=\(seed)")
        let report = try #require(salvaged.recovery.salvage)
        #expect(report.manifestRebuilt != nil && report.lostSegments.isEmpty && report.droppedLogBytes.isEmpty && report.missingSequences.isEmpty)
        try salvaged.compact()
        #expect(try apiAllEntries(salvaged) == expected)
        try salvaged.close()
        try assertStoreIsClean(path: APITestSimulated.path, fileSystem: fs, context: "after salvage")
        options.salvage = false
        let again = try Store(path: APITestSimulated.path, options: options)
        #expect(try apiAllEntries(again) == expected)
        try again.close()
    }
}
