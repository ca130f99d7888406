// Closing a snapshot: while other threads read it, and what it lets go of.
// Replay with STRATA_SEED=<seed>; run longer with STRATA_LONG_TESTS=1. Thread timing is not
// deterministic, but every random choice is, and every failure names the seed.
import Dispatch
import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

@Suite struct SnapshotCloseTests {
    /// Readers copy the snapshot's view while another thread closes it: each read sees the
    /// value or `.closed`, the view is let go exactly once (twice would crash, never would
    /// keep `liveSnapshots` or the files), and reads after the close all throw `.closed`.
    @Test func readsRacingACloseSeeTheValueOrClosed() async throws {
        let seed = TestEnvironment.seed(0x5EED_C105, test: "readsRacingACloseSeeTheValueOrClosed")
        var random = SeededRandom(seed: seed)
        let rounds = TestEnvironment.scaled(150)
        try await TestEnvironment.withTemporaryDirectory("snapshot-close") { directory in
            let store = try Store(path: directory + "/store")
            defer { try? store.close() }
            let key = Array("k".utf8)
            try store.write { tx in try tx.put(key, Array("v".utf8)) }
            for round in 0..<rounds {
                let snapshot = store.snapshot()
                let readsBeforeClose = Int.random(in: 0..<40, using: &random)
                let reads = Atomic<Int>(0)
                let wrong = Mutex<[String]>([])
                let threads = DispatchGroup()
                for reader in 0..<3 {
                    DispatchQueue.global().async(group: threads) {
                        while true {
                            do {
                                let value = try snapshot.read { tx in try tx.get(key) }
                                if value != Array("v".utf8) {
                                    wrong.withLock { $0.append("reader \(reader) read \(String(describing: value))") }
                                }
                                reads.add(1, ordering: .relaxed)
                            } catch let error as StoreError where error.code == .closed {
                                return
                            } catch {
                                wrong.withLock { $0.append("reader \(reader) failed with \(error)") }
                                return
                            }
                        }
                    }
                }
                while reads.load(ordering: .relaxed) < readsBeforeClose {}
                snapshot.close()
                threads.wait()
                #expect(
                    wrong.withLock { $0 }.isEmpty,
                    "seed \(seed) round \(round): \(wrong.withLock { $0 }.joined(separator: "; "))")
                #expect(throws: StoreError.self, "seed \(seed) round \(round): a read after close() must throw") {
                    try snapshot.read { tx in try tx.get(key) }
                }
                snapshot.close()
                let live = try store.stats().liveSnapshots
                #expect(live == 0, "seed \(seed) round \(round): \(live) live snapshots after close()")
            }
        }
    }

    /// The files a snapshot pins go when it is closed, even while the snapshot object lives
    /// on; a read running in it when it closes keeps them until the read returns.
    @Test func closeLetsGoOfThePinnedFiles() async throws {
        try await TestEnvironment.withTemporaryDirectory("snapshot-close-files") { directory in
            let path = directory + "/store"
            let store = try Store(path: path)
            defer { try? store.close() }
            func segments() throws -> Set<String> {
                Set(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("seg-") })
            }
            func fill(_ value: String) throws {
                try store.write { tx in
                    for i in 0..<200 { try tx.put(Array("key-\(i)".utf8), Array(value.utf8)) }
                }
                try store.compact()
            }
            try fill("old")
            let pinned = try segments()
            try #require(!pinned.isEmpty, "compact() should leave a segment file")

            // Closed outside any read.
            let snapshot = store.snapshot()
            try fill("new")
            #expect(try segments().isSuperset(of: pinned), "an open snapshot's files must stay")
            snapshot.close()
            #expect(try segments().isDisjoint(with: pinned), "close() should let the pinned files go")
            withExtendedLifetime(snapshot) {}

            // Closed from inside one of its own reads.
            let pinnedAgain = try segments()
            let reading = store.snapshot()
            try fill("newer")
            let value = try reading.read { tx -> [UInt8]? in
                reading.close()
                #expect(try segments().isSuperset(of: pinnedAgain), "a running read keeps its files")
                return try tx.get(Array("key-7".utf8))
            }
            #expect(value == Array("new".utf8))
            #expect(try segments().isDisjoint(with: pinnedAgain), "the files should go once the read returns")
            withExtendedLifetime(reading) {}
        }
    }
}
