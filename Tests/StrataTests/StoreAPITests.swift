import Dispatch
import Foundation
import Strata
import StrataFormat
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

// MARK: Helpers shared by StoreAPITests, StoreErrorTests and RecoveryTests

/// Fresh directories under the system temporary directory, for tests on the real file system.
enum APITestDirectory {
    /// Creates an empty directory and returns its path.
    static func make() throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/strata-api-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs `body` with a new empty directory, removed afterwards.
    static func with<T>(_ body: (String) throws -> T) throws -> T {
        let path = try make()
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try body(path)
    }

    /// Options for a store on the real file system, with small WAL segments so preallocation
    /// stays cheap.
    static func options() -> StoreOptions {
        var options = StoreOptions()
        options.walSegmentBytes = 1 << 20
        return options
    }
}

/// Stores on a `SimulatedFileSystem`.
enum APITestSimulated {
    static let path = "/db"

    static func options(_ fileSystem: SimulatedFileSystem, walSegmentBytes: Int = 256 << 10) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.walSegmentBytes = walSegmentBytes
        return options
    }

    static func open(_ fileSystem: SimulatedFileSystem = SimulatedFileSystem(), walSegmentBytes: Int = 256 << 10) throws -> Store {
        try Store(path: path, options: options(fileSystem, walSegmentBytes: walSegmentBytes))
    }

    /// Path of WAL segment `number` in the simulated store.
    static func segment(_ number: Int) -> String {
        let digits = String(number)
        return path + "/wal-" + String(repeating: "0", count: 10 - digits.count) + digits + ".log"
    }
}

/// UTF-8 bytes of a string.
func apiBytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Key "k00", "k01", ... and value "v00", ...
func apiKey(_ index: Int) -> [UInt8] { apiBytes(index < 10 ? "k0\(index)" : "k\(index)") }
func apiValue(_ index: Int) -> [UInt8] { apiBytes(index < 10 ? "v0\(index)" : "v\(index)") }

/// Everything the store holds, in key order.
func apiAllEntries(_ store: Store) throws -> [Entry] {
    try store.read { Array(try $0.scan(from: [])) }
}

/// A value-typed result collector usable from `@Sendable` completions.
final class APITestCollector<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var values: [Element] { items.withLock { $0 } }
}

private struct APITestError: Error, Equatable {
    let id: Int
}

// MARK: Tests

@Suite struct StoreAPITests {
    @Test func putGetDelete() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put(apiBytes("a"), apiBytes("1"))
            try tx.put(apiBytes("b"), apiBytes("2"))
        }
        #expect(try store.read { try $0.get(apiBytes("a")) } == apiBytes("1"))
        #expect(try store.read { try $0.contains(apiBytes("b")) })
        #expect(try store.read { try $0.get(apiBytes("missing")) } == nil)

        try store.write { tx in try tx.put(apiBytes("a"), apiBytes("one")) }
        #expect(try store.read { try $0.get(apiBytes("a")) } == apiBytes("one"))

        try store.write { tx in
            try tx.delete(apiBytes("a"))
            try tx.delete(apiBytes("never-existed"))
        }
        #expect(try store.read { try $0.get(apiBytes("a")) } == nil)
        #expect(try store.read { try $0.contains(apiBytes("a")) } == false)
        #expect(try apiAllEntries(store) == [Entry(key: apiBytes("b"), value: apiBytes("2"))])

        // An empty value is a value, not a delete.
        try store.write { tx in try tx.put(apiBytes("empty"), []) }
        #expect(try store.read { try $0.get(apiBytes("empty")) } == [])
        #expect(try store.read { try $0.contains(apiBytes("empty")) })
    }

    @Test func binaryKeysAndValues() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let keys: [[UInt8]] = [[0x00], [0x00, 0x00], [0xFF], [0x7F, 0x80], [0x01, 0x00, 0x02]]
        try store.write { tx in
            for (index, key) in keys.enumerated() { try tx.put(key, [UInt8(index), 0x00, 0xFF]) }
        }
        for (index, key) in keys.enumerated() {
            #expect(try store.read { try $0.get(key) } == [UInt8(index), 0x00, 0xFF])
        }
        // Unsigned byte order; a prefix sorts before its extensions.
        #expect(try apiAllEntries(store).map(\.key) == [[0x00], [0x00, 0x00], [0x01, 0x00, 0x02], [0x7F, 0x80], [0xFF]])
    }

    private struct OwnWrites {
        var a, b, c, d, e: [UInt8]?
        var forward: [Entry] = []
        var reverse: [Entry] = []
        var bounded: [Entry] = []
        var boundedReverse: [Entry] = []
        var prefix: [Entry] = []
        var count = 0
    }

    @Test func writeTransactionReadsItsOwnWrites() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put(apiBytes("a"), apiBytes("1"))
            try tx.put(apiBytes("b"), apiBytes("2"))
            try tx.put(apiBytes("c"), apiBytes("3"))
        }
        let seen = try store.write { tx -> OwnWrites in
            try tx.put(apiBytes("b"), apiBytes("20"))  // shadows a committed value
            try tx.delete(apiBytes("c"))  // hides a committed value
            try tx.put(apiBytes("d"), apiBytes("4"))  // new key
            try tx.put(apiBytes("e"), apiBytes("5"))
            try tx.delete(apiBytes("e"))  // put then delete: gone
            try tx.delete(apiBytes("a"))
            try tx.put(apiBytes("a"), apiBytes("10"))  // delete then put: back
            var seen = OwnWrites()
            seen.a = try tx.get(apiBytes("a"))
            seen.b = try tx.get(apiBytes("b"))
            seen.c = try tx.get(apiBytes("c"))
            seen.d = try tx.get(apiBytes("d"))
            seen.e = try tx.get(apiBytes("e"))
            seen.forward = Array(try tx.scan(from: []))
            seen.reverse = Array(try tx.scan(from: [], to: nil, reverse: true))
            seen.bounded = Array(try tx.scan(from: apiBytes("b"), to: apiBytes("d")))
            seen.boundedReverse = Array(try tx.scan(from: apiBytes("b"), to: apiBytes("e"), reverse: true))
            seen.prefix = Array(try tx.scan(prefix: apiBytes("d")))
            seen.count = try tx.scan(from: []).count
            return seen
        }
        let expected = [
            Entry(key: apiBytes("a"), value: apiBytes("10")),
            Entry(key: apiBytes("b"), value: apiBytes("20")),
            Entry(key: apiBytes("d"), value: apiBytes("4"))
        ]
        #expect(seen.a == apiBytes("10"))
        #expect(seen.b == apiBytes("20"))
        #expect(seen.c == nil)
        #expect(seen.d == apiBytes("4"))
        #expect(seen.e == nil)
        #expect(seen.forward == expected)
        #expect(seen.reverse == expected.reversed())
        #expect(seen.bounded == [Entry(key: apiBytes("b"), value: apiBytes("20"))])
        #expect(seen.boundedReverse == [Entry(key: apiBytes("d"), value: apiBytes("4")), Entry(key: apiBytes("b"), value: apiBytes("20"))])
        #expect(seen.prefix == [Entry(key: apiBytes("d"), value: apiBytes("4"))])
        #expect(seen.count == 3)
        // Committed as seen.
        #expect(try apiAllEntries(store) == expected)
    }

    @Test func readersDoNotSeeAWriteUntilItCommits() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let seenDuring = try store.write { tx -> [UInt8]? in
            try tx.put(apiBytes("pending"), apiBytes("x"))
            // A reader on another thread while this transaction is open.
            return try store.read { try $0.get(apiBytes("pending")) }
        }
        #expect(seenDuring == nil)
        #expect(try store.read { try $0.get(apiBytes("pending")) } == apiBytes("x"))
    }

    private func fillNumbered(_ store: Store, count: Int = 20) throws {
        try store.write { tx in
            for index in 0..<count { try tx.put(apiKey(index), apiValue(index)) }
        }
    }

    @Test func forwardAndReverseScanWithBounds() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try fillNumbered(store)
        let keys = (0..<20).map(apiKey)
        try store.read { tx throws in
            // from inclusive, to exclusive.
            #expect(Array(try tx.scan(from: apiKey(5), to: apiKey(10))).map(\.key) == Array(keys[5..<10]))
            #expect(Array(try tx.scan(from: apiKey(5), to: apiKey(10), reverse: true)).map(\.key) == Array(keys[5..<10].reversed()))
            // Values come with their keys.
            #expect(Array(try tx.scan(from: apiKey(3), to: apiKey(4))) == [Entry(key: apiKey(3), value: apiValue(3))])
            // No upper bound.
            #expect(Array(try tx.scan(from: apiKey(15))).map(\.key) == Array(keys[15...]))
            #expect(Array(try tx.scan(from: apiKey(15), to: nil, reverse: true)).map(\.key) == Array(keys[15...].reversed()))
            // Everything.
            #expect(Array(try tx.scan(from: [])).map(\.key) == keys)
            #expect(Array(try tx.scan(from: [], to: nil, reverse: true)).map(\.key) == keys.reversed())
            // Bounds between keys.
            #expect(Array(try tx.scan(from: apiBytes("k05x"), to: apiBytes("k08x"))).map(\.key) == Array(keys[6...8]))
            #expect(Array(try tx.scan(from: apiBytes("k05x"), to: apiBytes("k08x"), reverse: true)).map(\.key) == Array(keys[6...8].reversed()))
            // Empty and inverted ranges.
            #expect(Array(try tx.scan(from: apiKey(7), to: apiKey(7))).isEmpty)
            #expect(Array(try tx.scan(from: apiKey(7), to: apiKey(7), reverse: true)).isEmpty)
            #expect(Array(try tx.scan(from: apiKey(9), to: apiKey(2))).isEmpty)
            #expect(Array(try tx.scan(from: apiKey(9), to: apiKey(2), reverse: true)).isEmpty)
            #expect(Array(try tx.scan(from: apiBytes("z"))).isEmpty)
            #expect(Array(try tx.scan(from: [], to: apiBytes("a"), reverse: true)).isEmpty)
        }
    }

    @Test func scanCanStopEarly() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try fillNumbered(store)
        let firstThree = try store.read { Array(try $0.scan(from: []).prefix(3)).map(\.key) }
        #expect(firstThree == (0..<3).map(apiKey))
        let lastTwo = try store.read { Array(try $0.scan(from: [], to: nil, reverse: true).prefix(2)).map(\.key) }
        #expect(lastTwo == [apiKey(19), apiKey(18)])
    }

    @Test func scanSkipsDeletedKeysAndSeesLatestValues() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try fillNumbered(store, count: 10)
        try store.write { tx in
            for index in stride(from: 0, to: 10, by: 2) { try tx.delete(apiKey(index)) }
            try tx.put(apiKey(3), apiBytes("new"))
        }
        let forward = try apiAllEntries(store)
        #expect(forward.map(\.key) == [1, 3, 5, 7, 9].map(apiKey))
        #expect(forward[1].value == apiBytes("new"))
        let reverse = try store.read { Array(try $0.scan(from: [], to: nil, reverse: true)) }
        #expect(reverse == forward.reversed())
    }

    @Test func prefixScan() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let keys: [[UInt8]] = [
            [0x01], [0x01, 0x00], [0x01, 0x41], [0x01, 0xFF], [0x01, 0xFF, 0x00], [0x01, 0xFF, 0xFF],
            [0x02], [0x02, 0x00], [0xFE, 0xFF], [0xFF], [0xFF, 0x00], [0xFF, 0xFF], [0xFF, 0xFF, 0xFF]
        ]
        try store.write { tx in for key in keys { try tx.put(key, key) } }
        try store.read { tx throws in
            #expect(Array(try tx.scan(prefix: [0x01])).map(\.key) == Array(keys[0...5]))
            #expect(Array(try tx.scan(prefix: [0x01], reverse: true)).map(\.key) == Array(keys[0...5].reversed()))
            // A prefix ending in 0xFF: the bound is the next shorter key, [0x02].
            #expect(Array(try tx.scan(prefix: [0x01, 0xFF])).map(\.key) == Array(keys[3...5]))
            #expect(Array(try tx.scan(prefix: [0x01, 0xFF], reverse: true)).map(\.key) == Array(keys[3...5].reversed()))
            // All 0xFF: no upper bound at all.
            #expect(Array(try tx.scan(prefix: [0xFF])).map(\.key) == Array(keys[9...]))
            #expect(Array(try tx.scan(prefix: [0xFF, 0xFF])).map(\.key) == Array(keys[11...]))
            #expect(Array(try tx.scan(prefix: [0xFF, 0xFF], reverse: true)).map(\.key) == Array(keys[11...].reversed()))
            #expect(Array(try tx.scan(prefix: [0xFE])).map(\.key) == [[0xFE, 0xFF]])
            // The empty prefix is everything.
            #expect(Array(try tx.scan(prefix: [])).map(\.key) == keys)
            #expect(Array(try tx.scan(prefix: [], reverse: true)).map(\.key) == keys.reversed())
            // No match.
            #expect(Array(try tx.scan(prefix: [0x03])).isEmpty)
            #expect(Array(try tx.scan(prefix: [0x01, 0x42])).isEmpty)
        }
    }

    @Test func scanCount() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        #expect(try store.read { try $0.scan(from: []).count } == 0)
        try fillNumbered(store)
        try store.read { tx throws in
            #expect(try tx.scan(from: []).count == 20)
            #expect(try tx.scan(from: apiKey(5), to: apiKey(10)).count == 5)
            #expect(try tx.scan(from: apiKey(5), to: apiKey(10), reverse: true).count == 5)
            #expect(try tx.scan(prefix: apiBytes("k1")).count == 10)
            // Counting does not consume the scan.
            let scan = try tx.scan(from: [])
            #expect(scan.count == 20)
            #expect(Array(scan).count == 20)
        }
    }

    @Test func deleteRange() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try fillNumbered(store)
        let deleted = try store.write { tx in try tx.deleteRange(from: apiKey(5), to: apiKey(10)) }
        #expect(deleted == 5)
        #expect(try apiAllEntries(store).map(\.key) == (Array(0..<5) + Array(10..<20)).map(apiKey))

        // Counts only keys that had a value, including the transaction's own puts.
        let second = try store.write { tx -> Int in
            try tx.delete(apiKey(12))
            try tx.put(apiBytes("k15a"), apiBytes("own"))
            return try tx.deleteRange(from: apiKey(10), to: nil)
        }
        #expect(second == 10)  // k10...k19 minus k12, plus k15a
        #expect(try apiAllEntries(store).map(\.key) == (0..<5).map(apiKey))

        // An empty range deletes nothing and does not consume a version.
        let version = store.version
        #expect(try store.write { tx in try tx.deleteRange(from: apiBytes("x"), to: apiBytes("y")) } == 0)
        #expect(store.version == version)

        // Keys after the range are kept; the lower bound is inclusive.
        #expect(try store.write { tx in try tx.deleteRange(from: apiKey(1), to: apiKey(3)) } == 2)
        #expect(try apiAllEntries(store).map(\.key) == [0, 3, 4].map(apiKey))
        #expect(try store.write { tx in try tx.deleteRange(from: [], to: nil) } == 3)
        #expect(try apiAllEntries(store).isEmpty)
    }

    @Test func closureErrorIsRethrownUnchangedAndNothingApplies() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in try tx.put(apiBytes("kept"), apiBytes("1")) }
        let version = store.version
        #expect(throws: APITestError(id: 42)) {
            try store.write { tx in
                try tx.put(apiBytes("kept"), apiBytes("changed"))
                try tx.put(apiBytes("new"), apiBytes("2"))
                try tx.delete(apiBytes("kept"))
                throw APITestError(id: 42)
            }
        }
        #expect(store.version == version)
        #expect(try store.read { try $0.get(apiBytes("kept")) } == apiBytes("1"))
        #expect(try store.read { try $0.get(apiBytes("new")) } == nil)
        // The store goes on working, and the next commit takes the next version.
        try store.write { tx in try tx.put(apiBytes("after"), apiBytes("3")) }
        #expect(store.version == version + 1)
    }

    @Test func closureErrorReachesAsyncCallersUnchanged() async throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        await #expect(throws: APITestError(id: 7)) {
            try await store.write { tx in
                try tx.put(apiBytes("x"), apiBytes("1"))
                throw APITestError(id: 7)
            }
        }
        let collector = APITestCollector<Bool>()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            store.asyncWrite(
                { _ in throw APITestError(id: 8) },
                completion: { (result: Result<Int, any Error>) in
                    if case .failure(let error) = result, let own = error as? APITestError, own.id == 8 {
                        collector.append(true)
                    } else {
                        collector.append(false)
                    }
                    done.resume()
                })
        }
        #expect(collector.values == [true])
        #expect(try await store.read { try $0.get(apiBytes("x")) } == nil)
        #expect(store.version == 0)
    }

    @Test func writeReturnsTheClosureValue() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let text = try store.write { tx -> String in
            try tx.put(apiBytes("k"), apiBytes("v"))
            return "done"
        }
        #expect(text == "done")
        let previous = try store.write { tx -> [UInt8]? in
            let old = try tx.get(apiBytes("k"))
            try tx.put(apiBytes("k"), apiBytes("v2"))
            return old
        }
        #expect(previous == apiBytes("v"))
        // A read-only write transaction returns its value too.
        #expect(try store.write { tx in try tx.get(apiBytes("k")) } == apiBytes("v2"))
    }

    @Test func asyncWriteAndRead() async throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let value = try await store.write { tx -> Int in
            try tx.put(apiBytes("a"), apiBytes("1"))
            return 41 + 1
        }
        #expect(value == 42)
        #expect(try await store.read { try $0.get(apiBytes("a")) } == apiBytes("1"))
        let buffered = try await store.write(durability: .buffered) { tx -> UInt64 in
            try tx.put(apiBytes("b"), apiBytes("2"))
            return tx.version
        }
        #expect(buffered == 1)
        try await store.sync()
        #expect(try await store.read { tx in try tx.scan(from: []).count } == 2)
    }

    @Test func concurrentAsyncWritersAllCommit() async throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    try await store.write { tx in try tx.put(apiKey(index), apiValue(index)) }
                }
            }
            try await group.waitForAll()
        }
        #expect(store.version == 40)
        #expect(try await store.read { tx in Array(try tx.scan(from: [])) } == (0..<40).map { Entry(key: apiKey($0), value: apiValue($0)) })
    }

    @Test func asyncWriteCompletesInSubmissionOrder() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let collector = APITestCollector<Int>()
        let group = DispatchGroup()
        for index in 0..<200 {
            group.enter()
            store.asyncWrite(
                durability: index % 3 == 0 ? .synced : .buffered,
                { tx -> Int in
                    try tx.put(apiKey(index), apiValue(index))
                    return index
                },
                completion: { result in
                    collector.append((try? result.get()) ?? -1)
                    group.leave()
                })
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(collector.values == Array(0..<200))
        #expect(store.version == 200)
        #expect(try store.read { try $0.scan(from: []).count } == 200)
    }

    @Test func asyncWriteCompletionsKeepSubmissionOrderWhenABodyThrows() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let collector = APITestCollector<String>()
        let group = DispatchGroup()
        let release = DispatchSemaphore(value: 0)
        // Hold the writer so the next three requests queue up behind the first.
        group.enter()
        store.asyncWrite(
            { tx in
                release.wait()
                try tx.put(apiBytes("0"), apiBytes("blocker"))
            },
            completion: { _ in
                collector.append("blocker")
                group.leave()
            })
        for name in ["A", "B", "C"] {
            group.enter()
            store.asyncWrite(
                { tx in
                    if name == "B" { throw APITestError(id: 2) }
                    try tx.put(apiBytes(name), apiBytes(name))
                },
                completion: { result in
                    switch result {
                    case .success: collector.append(name)
                    case .failure: collector.append(name + "!")
                    }
                    group.leave()
                })
        }
        release.signal()
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(collector.values == ["blocker", "A", "B!", "C"])
        #expect(try store.read { try $0.get(apiBytes("A")) } == apiBytes("A"))
        #expect(try store.read { try $0.get(apiBytes("B")) } == nil)
        #expect(try store.read { try $0.get(apiBytes("C")) } == apiBytes("C"))
    }

    /// A synchronous write on an idle writer runs its body on the caller's thread; what is
    /// queued meanwhile goes to the writer's own thread once it ends, and sees its commit.
    @Test func requestsQueuedDuringACallersOwnRoundRunAfterIt() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let caller = pthread_self()
        let sawInline = APITestCollector<Bool>()
        let done = DispatchSemaphore(value: 0)
        let ranHere = try store.write { tx -> Bool in
            store.asyncWrite(
                { tx in
                    sawInline.append(try tx.get(apiBytes("inline")) != nil)
                    try tx.put(apiBytes("queued"), apiBytes("q"))
                },
                completion: { _ in done.signal() })
            try tx.put(apiBytes("inline"), apiBytes("i"))
            return pthread_equal(pthread_self(), caller) != 0
        }
        #expect(ranHere)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(sawInline.values == [true])
        #expect(store.version == 2)
    }

    /// While the writer is busy, a synchronous write queues behind it and commits after it.
    @Test func aSynchronousWriteBehindABusyWriterWaitsItsTurn() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        store.asyncWrite({ tx in
            started.signal()
            release.wait()
            try tx.put(apiBytes("first"), apiBytes("1"))
        })
        #expect(started.wait(timeout: .now() + 30) == .success)
        let sawFirst = APITestCollector<Bool>()
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? store.write { tx in sawFirst.append(try tx.get(apiBytes("first")) != nil) }
            finished.signal()
        }
        // The second write cannot run until the first has: it is queued, not run beside it.
        #expect(finished.wait(timeout: .now() + 0.2) == .timedOut)
        release.signal()
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(sawFirst.values == [true])
    }

    @Test func bufferedWritesAreVisibleAndSyncMakesThemDurable() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        defer { try? store.close() }
        try store.write { tx in try tx.put(apiBytes("synced"), apiBytes("1")) }
        for index in 0..<5 {
            try store.write(durability: .buffered) { tx in try tx.put(apiKey(index), apiValue(index)) }
        }
        // Visible at once.
        #expect(store.version == 6)
        #expect(try store.read { try $0.scan(prefix: apiBytes("k")).count } == 5)
        try store.sync()
        // After sync() the buffered commits survive losing everything unsynced.
        let image = fs.crashImage(.loseAllUnsynced)
        let reopened = try Store(path: APITestSimulated.path, options: APITestSimulated.options(image))
        defer { try? reopened.close() }
        #expect(reopened.version == 6)
        #expect(try reopened.read { try $0.get(apiBytes("synced")) } == apiBytes("1"))
        #expect(try reopened.read { try $0.scan(prefix: apiBytes("k")).count } == 5)
    }

    @Test func syncedWritesSurviveLosingEverythingUnsynced() throws {
        let fs = SimulatedFileSystem()
        let store = try APITestSimulated.open(fs)
        defer { try? store.close() }
        for index in 0..<5 {
            try store.write { tx in try tx.put(apiKey(index), apiValue(index)) }
        }
        let reopened = try Store(path: APITestSimulated.path, options: APITestSimulated.options(fs.crashImage(.loseAllUnsynced)))
        defer { try? reopened.close() }
        #expect(reopened.version == 5)
        #expect(try apiAllEntries(reopened) == (0..<5).map { Entry(key: apiKey($0), value: apiValue($0)) })
    }

    @Test func bufferedStoreOptionAndAsyncSync() async throws {
        let fs = SimulatedFileSystem()
        var options = APITestSimulated.options(fs)
        options.durability = .buffered
        let store = try Store(path: APITestSimulated.path, options: options)
        defer { try? store.close() }
        try await store.write { tx in try tx.put(apiBytes("a"), apiBytes("1")) }
        try await store.sync()
        let reopened = try Store(path: APITestSimulated.path, options: APITestSimulated.options(fs.crashImage(.loseAllUnsynced)))
        defer { try? reopened.close() }
        #expect(try await reopened.read { try $0.get(apiBytes("a")) } == apiBytes("1"))
    }

    @Test func transactionVersions() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        #expect(store.version == 0)
        #expect(try store.read { $0.version } == 0)
        // A write transaction reads at the head: the commits before it.
        #expect(
            try store.write { tx -> UInt64 in
                try tx.put(apiBytes("a"), apiBytes("1"))
                return tx.version
            } == 0)
        for index in 2...4 {
            try store.write { tx in try tx.put(apiKey(index), apiValue(index)) }
        }
        #expect(store.version == 4)
        #expect(try store.read { $0.version } == 4)

        // An empty write transaction (reads only) does not consume a version.
        #expect(
            try store.write { tx -> UInt64 in
                _ = try tx.get(apiBytes("a"))
                return tx.version
            } == 4)
        try store.write { _ in }
        #expect(store.version == 4)
        // Neither does one that throws.
        _ = try? store.write { tx in
            try tx.put(apiBytes("z"), apiBytes("z"))
            throw APITestError(id: 0)
        }
        #expect(store.version == 4)
        // The next commit is 5.
        #expect(
            try store.write { tx -> UInt64 in
                try tx.put(apiBytes("b"), apiBytes("2"))
                return tx.version
            } == 4)
        #expect(store.version == 5)
        #expect(try store.read { $0.version } == 5)
        #expect(try store.stats().version == 5)
    }

    @Test func snapshotSeesOldStateAfterLaterWrites() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put(apiBytes("a"), apiBytes("1"))
            try tx.put(apiBytes("c"), apiBytes("3"))
        }
        let snapshot = store.snapshot()
        #expect(snapshot.version == 1)
        try store.write { tx in
            try tx.put(apiBytes("a"), apiBytes("2"))
            try tx.put(apiBytes("b"), apiBytes("new"))
            try tx.delete(apiBytes("c"))
        }
        try store.write { tx in try tx.put(apiBytes("d"), apiBytes("4")) }

        try snapshot.read { tx throws in
            #expect(tx.version == 1)
            #expect(try tx.get(apiBytes("a")) == apiBytes("1"))
            #expect(try tx.get(apiBytes("b")) == nil)
            #expect(try tx.get(apiBytes("c")) == apiBytes("3"))
            #expect(Array(try tx.scan(from: [])) == [Entry(key: apiBytes("a"), value: apiBytes("1")), Entry(key: apiBytes("c"), value: apiBytes("3"))])
            #expect(Array(try tx.scan(from: [], to: nil, reverse: true)).map(\.key) == [apiBytes("c"), apiBytes("a")])
        }
        #expect(try store.read { try $0.get(apiBytes("a")) } == apiBytes("2"))
        #expect(try store.read { try $0.get(apiBytes("c")) } == nil)

        // Readable from another thread.
        let fromOtherThread = DispatchQueue(label: "api-test").sync { try? snapshot.read { try $0.get(apiBytes("a")) } }
        #expect(fromOtherThread == apiBytes("1"))

        var stats = try store.stats()
        #expect(stats.liveSnapshots == 1)
        #expect(stats.oldestSnapshotVersion == 1)
        let second = store.snapshot()
        #expect(second.version == 3)
        stats = try store.stats()
        #expect(stats.liveSnapshots == 2)
        #expect(stats.oldestSnapshotVersion == 1)

        snapshot.close()
        let error = #expect(throws: StoreError.self) { try snapshot.read { _ in } }
        #expect(error?.code == .closed)
        #expect(error?.message.isEmpty == false)
        snapshot.close()  // idempotent
        stats = try store.stats()
        #expect(stats.liveSnapshots == 1)
        #expect(stats.oldestSnapshotVersion == 3)
        second.close()
        stats = try store.stats()
        #expect(stats.liveSnapshots == 0)
        #expect(stats.oldestSnapshotVersion == nil)
    }

    @Test func statsArePlausible() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let fresh = try store.stats()
        #expect(fresh.version == 0)
        #expect(fresh.memtableEntries == 0)
        #expect(fresh.memtableBytes == 0)
        #expect(fresh.walSegments == 1)
        #expect(fresh.walBytes == WALFormat.headerSize)
        #expect(fresh.liveSnapshots == 0)
        #expect(fresh.oldestSnapshotVersion == nil)

        try store.write { tx in
            try tx.put(apiBytes("a"), [UInt8](repeating: 1, count: 1_000))
            try tx.put(apiBytes("b"), apiBytes("2"))
        }
        try store.write { tx in try tx.delete(apiBytes("a")) }
        let stats = try store.stats()
        #expect(stats.version == 2)
        #expect(stats.memtableEntries == 3)  // two puts and a tombstone
        #expect(stats.memtableBytes >= 1_002)
        #expect(stats.walSegments == 1)
        #expect(stats.walBytes > WALFormat.headerSize + 1_000)
        #expect(stats.walBytes < WALFormat.headerSize + 1_200)
        #expect(stats.liveSnapshots == 0)
    }

    @Test func reopenKeepsData() throws {
        try APITestDirectory.with { directory in
            let path = directory + "/store"
            do {
                let store = try Store(path: path, options: APITestDirectory.options())
                #expect(store.recovery.transactionsReplayed == 0)
                for batch in 0..<10 {
                    try store.write { tx in
                        for index in (batch * 10)..<(batch * 10 + 10) {
                            try tx.put(apiBytes("key-\(index)"), apiBytes("value-\(index)"))
                        }
                    }
                }
                try store.write { tx in
                    try tx.delete(apiBytes("key-5"))
                    try tx.put(apiBytes("key-6"), apiBytes("changed"))
                }
                try store.close()
            }
            let store = try Store(path: path, options: APITestDirectory.options())
            defer { try? store.close() }
            #expect(store.version == 11)
            #expect(store.recovery.transactionsReplayed == 11)
            #expect(store.recovery.lastSequence == 11)
            #expect(store.recovery.truncatedTail == nil)
            #expect(try store.read { try $0.scan(from: []).count } == 99)
            #expect(try store.read { try $0.get(apiBytes("key-5")) } == nil)
            #expect(try store.read { try $0.get(apiBytes("key-6")) } == apiBytes("changed"))
            #expect(try store.read { try $0.get(apiBytes("key-99")) } == apiBytes("value-99"))
            // And it takes new writes after reopening.
            try store.write { tx in try tx.put(apiBytes("key-100"), apiBytes("value-100")) }
            #expect(store.version == 12)
        }
    }

    @Test func stringConveniences() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put("name", "value")
            try tx.put("ключ", "значение ✓")
            try tx.put("gone", "soon")
            try tx.delete("gone")
        }
        #expect(try store.read { try $0.get("name") } == apiBytes("value"))
        #expect(try store.read { try $0.get(apiBytes("name")) } == apiBytes("value"))
        #expect(try store.read { try $0.get("ключ") } == apiBytes("значение ✓"))
        #expect(try store.read { try $0.get("gone") } == nil)
        #expect(try store.read { try $0.get("missing") } == nil)
        try store.write { tx in try tx.delete("name") }
        #expect(try store.read { try $0.get("name") } == nil)
    }
}
