// Point reads without a lock or a retain: a read announces the Version it reads in its
// thread's guard, and a replaced Version is released only once no guard holds it
// (ReadGuards, PublishedState invariant 4).
import Dispatch
import Foundation
import StrataTestSupport
import Synchronization
import Testing

@testable import Strata

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ReadGuardTests {
    static func value(_ i: Int, length: Int = 40) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0) }
    }

    static func key(_ i: Int) -> [UInt8] { Array(String(format: "key%07d", i).utf8) }

    /// Small memtables and files, so the writer replaces the Version every few commits.
    static func churningOptions() -> StoreOptions {
        var options = StoreOptions()
        options.durability = .buffered
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.level1Bytes = 256 << 10
        options.level0CompactionTrigger = 2
        return options
    }

    /// Readers on four threads get keys the writer committed while the writer seals,
    /// flushes and compacts under them: every value read must be the one committed.
    @Test func guardedReadsSeeEveryCommitWhileVersionsChange() async throws {
        let seed = TestEnvironment.seed(0x6A4D, test: "ReadGuardTests.churn")
        try await TestEnvironment.withTemporaryDirectory("read-guards") { path in
            let store = try Store(path: path, options: Self.churningOptions())
            defer { try? store.close() }
            let committed = Atomic<Int>(0)
            let done = Atomic<Bool>(false)
            let failures = TestEnvironment.FailureLog()
            let reads = Atomic<Int>(0)
            let batches = TestEnvironment.scaled(300)
            let readers = (0..<4).map { t in
                Thread {
                    var random = SeededRandom(seed: seed &+ UInt64(t))
                    while !done.load(ordering: .acquiring) {
                        let limit = committed.load(ordering: .acquiring)
                        guard limit > 0 else { continue }
                        let i = Int(random.next() % UInt64(limit))
                        do {
                            let matches = try store.withUnsafeValue(Self.key(i)) { $0.map { $0.elementsEqual(Self.value(i)) } }
                            if matches != true { failures.record("seed \(seed): key \(i) read \(String(describing: matches))") }
                            if i % 5 == 0, try store.get(Self.key(i)) != Self.value(i) {
                                failures.record("seed \(seed): get of key \(i) differs")
                            }
                        } catch {
                            failures.record("seed \(seed): key \(i): \(error)")
                        }
                        reads.add(1, ordering: .relaxed)
                    }
                }
            }
            for reader in readers { reader.start() }
            for batch in 0..<batches {
                try store.write { tx in
                    for i in (batch * 50)..<((batch + 1) * 50) { try tx.put(Self.key(i), Self.value(i)) }
                }
                committed.store((batch + 1) * 50, ordering: .releasing)
                if batch % 100 == 99 { try store.compact() }
            }
            // Let the readers see the last state too.
            let target = reads.load(ordering: .relaxed) + 2_000
            while reads.load(ordering: .relaxed) < target { usleep(1_000) }
            done.store(true, ordering: .releasing)
            while readers.contains(where: { !$0.isFinished }) { usleep(1_000) }
            let found = failures.drain()
            #expect(found.isEmpty, "\(found.prefix(5))")
            let readCount = reads.load(ordering: .relaxed)
            #expect(readCount > 0)
            // Nothing is left waiting once the reads are over.
            #expect(store.published.retiredVersions == 0)
        }
    }

    /// A read inside `withUnsafeValue` keeps the Version it started on, and the memtable
    /// whose bytes it borrows, while the writer flushes that memtable and compacts the store;
    /// the Version goes once the read ends.
    @Test func aReadKeepsItsVersionUntilItEnds() async throws {
        try await TestEnvironment.withTemporaryDirectory("read-guard-hold") { path in
            let store = try Store(path: path, options: Self.churningOptions())
            defer { try? store.close() }
            try store.write { tx in try tx.put(Self.key(1), Self.value(1, length: 300)) }
            let inside = DispatchSemaphore(value: 0)
            let carryOn = DispatchSemaphore(value: 0)
            let sawValue = Atomic<Bool>(false)
            let reader = Thread {
                _ = try? store.withUnsafeValue(Self.key(1)) { bytes -> Void in
                    inside.signal()
                    carryOn.wait()
                    // Borrowed from the memtable the flush below has written out and dropped
                    // from the current Version: still readable.
                    sawValue.store(bytes.map { $0.elementsEqual(Self.value(1, length: 300)) } ?? false, ordering: .relaxed)
                }
                inside.signal()
            }
            reader.start()
            inside.wait()
            for batch in 0..<20 {
                try store.write { tx in
                    for i in 0..<100 { try tx.put(Self.key(1_000 + batch * 100 + i), Self.value(i, length: 300)) }
                }
            }
            try store.compact()
            #expect(store.published.retiredVersions >= 1, "the reader's version was released under it")
            carryOn.signal()
            inside.wait()
            let intact = sawValue.load(ordering: .relaxed)
            #expect(intact)
            #expect(store.published.retiredVersions == 0)
            #expect(try store.get(Self.key(1)) == Self.value(1, length: 300))
        }
    }

    /// A read nested in another's closure (same thread, guard in use) reads through the lock;
    /// a closed store refuses guarded reads as it refused the others.
    @Test func nestedReadsAndAClosedStore() async throws {
        try await TestEnvironment.withTemporaryDirectory("read-guard-nested") { path in
            let store = try Store(path: path, options: Self.churningOptions())
            try store.write { tx in
                try tx.put(Self.key(1), Self.value(1))
                try tx.put(Self.key(2), Self.value(2))
            }
            let inner = try store.withUnsafeValue(Self.key(1)) { outer -> [UInt8]? in
                #expect(outer.map(Array.init) == Self.value(1))
                return try store.withUnsafeValue(Self.key(2)) { $0.map(Array.init) }
            }
            #expect(inner == Self.value(2))
            try store.close()
            #expect(throws: StoreError.self) { try store.get(Self.key(1)) }
            #expect(throws: StoreError.self) { try store.withUnsafeValue(Self.key(1)) { _ in 0 } }
        }
    }

    /// Threads that end give their guards back: more threads than the table has guards, one
    /// after another, each reading once, leave guards for the next.
    @Test func endingThreadsGiveTheirGuardsBack() async throws {
        try await TestEnvironment.withTemporaryDirectory("read-guard-threads") { path in
            let store = try Store(path: path, options: Self.churningOptions())
            defer { try? store.close() }
            try store.write { tx in try tx.put(Self.key(1), Self.value(1)) }
            let guarded = Atomic<Int>(0)
            for _ in 0..<(ReadGuards.shared.capacity + 44) {
                // Joined, so the thread's end (and its guard's return) is over before the next.
                runJoinedThread {
                    if ReadScratch.readGuard() != nil { guarded.add(1, ordering: .relaxed) }
                    _ = try? store.get(Self.key(1))
                }
            }
            let guardedReads = guarded.load(ordering: .relaxed)
            #expect(guardedReads == ReadGuards.shared.capacity + 44)
        }
    }

    /// Scans see a guard only while it is set, and given-back guards are handed out again.
    @Test func aScanFindsOnlyGuardsThatAreSet() {
        let guards = ReadGuards(capacity: 4)
        let a = guards.claim()!
        let b = guards.claim()!
        #expect(a == 0 && b == 1)
        guards.slot(b).pointee.store(0xABC0, ordering: .sequentiallyConsistent)
        #expect(guards.isGuarding(0xABC0))
        #expect(!guards.isGuarding(0xDEF0))
        guards.slot(b).pointee.store(0, ordering: .sequentiallyConsistent)
        #expect(!guards.isGuarding(0xABC0))
        guards.giveBack(a)
        #expect(guards.claim() == 0)
        _ = guards.claim()
        _ = guards.claim()
        #expect(guards.claim() == nil)
        #expect(guards.freeSlots == 0)
    }
}

/// Runs `body` on a new thread and returns once that thread has ended, its thread-local
/// destructors included (pthread_join waits for them).
private func runJoinedThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
        &thread, nil,
        { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
    precondition(created == 0, "pthread_create failed")
    pthread_join(thread, nil)
}
