// The lifecycle contract (DocC, "Suspension-safe apps"): the states, what a suspended
// store refuses, what suspend() guarantees when it returns (queued writes failed, commits
// durable, merges abandoned, no lock held) and what resume() finds.
import Dispatch
import Foundation
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

@_spi(Testing) @testable import Strata

/// Whether `body` threw a `StoreError` with `code`.
private func fails(with code: StoreError.Code, _ body: () throws -> Void) -> Bool {
    do {
        try body()
        return false
    } catch let error as StoreError {
        return error.code == code
    } catch {
        return false
    }
}

private func failsAsync(with code: StoreError.Code, _ body: () async throws -> Void) async -> Bool {
    do {
        try await body()
        return false
    } catch let error as StoreError {
        return error.code == code
    } catch {
        return false
    }
}

/// A failpoint handler that runs `action` at one point, once armed.
private final class PointAction: Sendable {
    private let state = Locked<[Failpoints.Point: @Sendable () -> Void]>([:])

    func on(_ point: Failpoints.Point, _ action: @escaping @Sendable () -> Void) {
        state.withLock { $0[point] = action }
    }

    var failpoints: Failpoints {
        Failpoints { point in
            let action = self.state.withLock { $0.removeValue(forKey: point) }
            action?()
        }
    }
}

@Suite("Lifecycle and suspension")
struct LifecycleTests {
    @Test("the states and the moves between them")
    func states() throws {
        let store = try APITestSimulated.open()
        #expect(store.lifecycle == .active)
        store.enterBackground()
        #expect(store.lifecycle == .background)
        try store.write { tx in try tx.put(apiKey(1), apiBytes("v")) }  // served in the background
        #expect(try store.resume() == .unchanged)
        #expect(store.lifecycle == .active)
        store.enterBackground()
        try store.suspend()
        #expect(store.lifecycle == .suspended)
        try store.suspend()  // again: nothing happens
        store.enterBackground()  // suspended stays suspended
        #expect(store.lifecycle == .suspended)
        #expect(try store.resume() == .unchanged)
        #expect(store.engine.writing?.maintenance.isInBackground == false, "resumed from a suspension entered in the background, compactions stay held back")
        #expect(try store.resume() == .unchanged)  // resuming an active store does nothing
        #expect(try store.read { try $0.get(apiKey(1)) } == apiBytes("v"))
        try store.close()
        #expect(store.lifecycle == .closed)
        try store.suspend()
        store.enterBackground()
        #expect(store.lifecycle == .closed)
        #expect(fails(with: .closed) { try store.resume() })
        try store.close()
    }

    @Test("a suspended store refuses every call at once with a retryable .suspended")
    func suspendedRefusesEveryCall() async throws {
        let store = try APITestSimulated.open()
        try await store.write { tx in try tx.put(apiKey(1), apiBytes("v")) }
        let snapshot = store.snapshot()
        try await store.suspend()
        #expect(fails(with: .suspended) { _ = try store.read { try $0.get(apiKey(1)) } })
        #expect(await failsAsync(with: .suspended) { _ = try await store.read { try $0.get(apiKey(1)) } })
        #expect(fails(with: .suspended) { try store.write { tx in try tx.put(apiKey(2), apiBytes("w")) } })
        #expect(await failsAsync(with: .suspended) { try await store.write { tx in try tx.put(apiKey(2), apiBytes("w")) } })
        #expect(fails(with: .suspended) { _ = try snapshot.read { try $0.get(apiKey(1)) } })
        #expect(fails(with: .suspended) { _ = try store.snapshot().read { try $0.get(apiKey(1)) } })
        #expect(fails(with: .suspended) { try store.sync() })
        #expect(await failsAsync(with: .suspended) { try await store.sync() })
        #expect(fails(with: .suspended) { try store.compact() })
        #expect(fails(with: .suspended) { _ = try store.stats() })
        let callback = DispatchSemaphore(value: 0)
        let callbackError = Locked<StoreError?>(nil)
        store.asyncWrite({ tx in try tx.put(apiKey(3), apiBytes("x")) }) { result in
            if case .failure(let error as StoreError) = result { callbackError.withLock { $0 = error } }
            callback.signal()
        }
        callback.wait()
        let error = try #require(callbackError.withLock { $0 })
        #expect(error.code == .suspended && error.isRetryable)

        // After resume the same calls work, and the snapshot reads what it saw.
        #expect(try store.resume() == .unchanged)
        try await store.write { tx in try tx.put(apiKey(2), apiBytes("w")) }
        #expect(try snapshot.read { try $0.get(apiKey(2)) } == nil)
        #expect(try await store.read { try $0.get(apiKey(2)) } == apiBytes("w"))
        try store.close()
    }

    @Test("suspend fails the queued writes through their callers' paths and lets the group in flight commit")
    func suspendFailsQueuedWrites() throws {
        let fileSystem = SimulatedFileSystem()
        let actions = PointAction()
        var options = APITestSimulated.options(fileSystem)
        options.failpoints = actions.failpoints
        let store = try Store(path: APITestSimulated.path, options: options)

        // A gate transaction holds the writer; writes of every API queue behind it.
        let gateStarted = DispatchSemaphore(value: 0)
        let releaseGate = DispatchSemaphore(value: 0)
        let gateOutcome = Locked<Bool?>(nil)
        store.asyncWrite({ tx in
            try tx.put(apiBytes("gate"), apiBytes("in flight"))
            gateStarted.signal()
            releaseGate.wait()
        }) { result in
            gateOutcome.withLock { if case .success = result { $0 = true } else { $0 = false } }
        }
        gateStarted.wait()

        let outcomes = Locked<[String: StoreError.Code?]>([:])
        let finished = DispatchSemaphore(value: 0)
        @Sendable func record(_ name: String, _ error: (any Error)?) {
            outcomes.withLock { $0[name] = (error as? StoreError)?.code ?? (error == nil ? nil : .io) }
            finished.signal()
        }
        store.asyncWrite({ tx in try tx.put(apiBytes("callback"), apiBytes("x")) }) { result in
            if case .failure(let error) = result { record("callback", error) } else { record("callback", nil) }
        }
        Thread.detachNewThread {
            do { try store.write { tx in try tx.put(apiBytes("sync"), apiBytes("x")) } } catch { return record("sync", error) }
            record("sync", nil)
        }
        Task.detached {
            do { try await store.write { tx in try tx.put(apiBytes("async"), apiBytes("x")) } } catch { return record("async", error) }
            record("async", nil)
        }
        // The sync and async writes reach the queue (their callers block or suspend there).
        while (store.engine.writing?.writer.queuedRequestCount ?? 0) < 3 { usleep(1000) }

        // When suspend() has closed the writer's intake, the gate is released: the group in
        // flight commits, what was queued behind it fails.
        actions.on(.suspending) { releaseGate.signal() }
        try store.suspend()
        for _ in 0..<3 { finished.wait() }
        #expect(gateOutcome.withLock { $0 } == true)
        #expect(outcomes.withLock { $0 } == ["callback": .suspended, "sync": .suspended, "async": .suspended])

        // Nothing failed is there; the gate is, durably (it was .synced by default).
        try store.close()
        let image = fileSystem.crashImage(.loseAllUnsynced)
        let reopened = try APITestSimulated.open(image)
        #expect(try reopened.read { try $0.get(apiBytes("gate")) } == apiBytes("in flight"))
        for name in ["callback", "sync", "async"] {
            #expect(try reopened.read { try $0.get(apiBytes(name)) } == nil, "\(name) was failed but applied")
        }
        try reopened.close()
    }

    @Test("every acknowledged .buffered commit is durable once suspend returns")
    func suspendMakesBufferedCommitsDurable() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        for i in 0..<50 {
            try store.write(durability: .buffered) { tx in try tx.put(apiKey(i), apiBytes("v\(i)")) }
        }
        try store.suspend()
        // Power fails while suspended: only what was synced survives.
        let image = fileSystem.crashImage(.loseAllUnsynced)
        let reopened = try APITestSimulated.open(image)
        #expect(reopened.version == 50)
        for i in 0..<50 { #expect(try reopened.read { try $0.get(apiKey(i)) } == apiBytes("v\(i)")) }
        try reopened.close()
        try assertStoreIsClean(path: APITestSimulated.path, fileSystem: image, context: "after a crash while suspended")
    }

    /// A synchronous write that found the writer idle takes its turn before it enters the
    /// writer's queue; a suspension in that moment cannot see it. The write must then be
    /// refused, not run after the suspension made the log durable and let go of the files (it
    /// was acknowledged, and another Store that opened the path meanwhile then lost it).
    @Test("a write that took its turn just before suspend() is refused, not committed behind it")
    func aWriteAdmittedBeforeSuspendIsRefused() throws {
        try APITestDirectory.with { path in
            let admitted = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            let actions = PointAction()
            var options = APITestDirectory.options()
            options.failpoints = actions.failpoints
            let store = try Store(path: path, options: options)
            try store.write { tx in try tx.put(apiKey(1), apiBytes("before")) }
            actions.on(.inlineRoundAdmitted) {
                admitted.signal()
                proceed.wait()
            }
            let outcome = Locked<Result<Void, StoreError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                do {
                    try store.write(durability: .buffered) { tx in try tx.put(apiKey(2), apiBytes("late")) }
                    outcome.withLock { $0 = .success(()) }
                } catch let error as StoreError {
                    outcome.withLock { $0 = .failure(error) }
                } catch {
                    outcome.withLock { $0 = .failure(StoreError(.invalidArgument, "\(error)")) }
                }
                done.signal()
            }
            admitted.wait()
            try store.suspend()
            // Another process opens the store while this one is suspended, as apps' extensions do.
            let other = try Store(path: path, options: APITestDirectory.options())
            try other.close()
            proceed.signal()
            done.wait()
            let result = outcome.withLock { $0 }
            switch result {
            case .failure(let error): #expect(error.code == .suspended, "the late write failed with \(error)")
            default: Issue.record("a write was acknowledged after suspend() returned: \(String(describing: result))")
            }
            _ = try store.resume()
            try store.close()
            let reopened = try Store(path: path, options: APITestDirectory.options())
            #expect(try reopened.read { tx in try tx.scan(from: []).map(\.key) } == [apiKey(1)])
            try reopened.close()
        }
    }

    @Test("suspended, the store holds no lock: another Store opens and writes it, and resume reloads")
    func anotherStoreWritesWhileSuspended() throws {
        try APITestDirectory.with { path in
            let store = try Store(path: path, options: APITestDirectory.options())
            try store.write { tx in try tx.put(apiKey(1), apiBytes("mine")) }
            let before = store.snapshot()
            #expect(fails(with: .locked) { _ = try Store(path: path, options: APITestDirectory.options()) })

            try store.suspend()
            let other = try Store(path: path, options: APITestDirectory.options())
            try other.write { tx in
                try tx.put(apiKey(1), apiBytes("theirs"))
                try tx.put(apiKey(2), apiBytes("new"))
            }
            // The other process holds the lock: resume fails, the store stays suspended.
            let locked = fails(with: .locked) { try store.resume() }
            #expect(locked)
            #expect(store.lifecycle == .suspended)
            try other.close()

            let outcome = try store.resume()
            #expect(outcome == .reloaded(from: 1, to: 2))
            #expect(store.version == 2)
            #expect(try store.read { try $0.get(apiKey(1)) } == apiBytes("theirs"))
            #expect(try store.read { try $0.get(apiKey(2)) } == apiBytes("new"))
            // A snapshot from before reads what it saw.
            #expect(try before.read { try $0.get(apiKey(1)) } == apiBytes("mine"))
            #expect(try before.read { try $0.get(apiKey(2)) } == nil)
            // And the store carries on from the reloaded state.
            try store.write { tx in try tx.put(apiKey(3), apiBytes("after")) }
            #expect(store.version == 3)
            try store.close()
            let reopened = try Store(path: path, options: APITestDirectory.options())
            #expect(try reopened.read { tx in try tx.scan(from: []).map(\.key) } == [apiKey(1), apiKey(2), apiKey(3)])
            try reopened.close()
            try assertStoreIsClean(path: path, fileSystem: POSIXFileSystem(), context: "after a reload")
        }
    }

    @Test("another Store that only opens and closes still makes resume reload; nobody else means unchanged")
    func resumeDetectsAnyOpen() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try store.write { tx in try tx.put(apiKey(1), apiBytes("v")) }
        try store.suspend()
        #expect(try store.resume() == .unchanged)
        try store.suspend()
        try APITestSimulated.open(fileSystem).close()
        #expect(try store.resume() == .reloaded(from: 1, to: 1))
        try store.write { tx in try tx.put(apiKey(2), apiBytes("w")) }
        try store.close()
        try assertStoreIsClean(path: APITestSimulated.path, fileSystem: fileSystem, context: "after open-close while suspended")
    }

    @Test("a store deleted and created again while suspended is reloaded, not taken for the old one")
    func storeReplacedWhileSuspended() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try store.write { tx in try tx.put(apiKey(1), apiBytes("old")) }
        try store.suspend()
        for name in try fileSystem.listDirectory(APITestSimulated.path) {
            try fileSystem.removeFile(APITestSimulated.path + "/" + name)
        }
        let replacement = try APITestSimulated.open(fileSystem)
        try replacement.write { tx in try tx.put(apiKey(2), apiBytes("new")) }
        try replacement.close()
        #expect(try store.resume() == .reloaded(from: 1, to: 1))
        #expect(try store.read { try $0.get(apiKey(1)) } == nil)
        #expect(try store.read { try $0.get(apiKey(2)) } == apiBytes("new"))
        try store.close()
    }

    @Test("a store closed while suspended writes nothing and releases everything")
    func closeWhileSuspended() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try store.write { tx in try tx.put(apiKey(1), apiBytes("v")) }
        try store.suspend()
        let other = try APITestSimulated.open(fileSystem)
        let before = fileSystem.snapshot()
        try store.close()
        #expect(fileSystem.snapshot() == before, "closing a suspended store changed the files another Store owns")
        try other.write { tx in try tx.put(apiKey(2), apiBytes("w")) }
        try other.close()
        let reopened = try APITestSimulated.open(fileSystem)
        #expect(reopened.version == 2)
        try reopened.close()
    }

    @Test("suspend abandons a merge in progress instead of waiting for it, and installs nothing of it")
    func suspendAbandonsCompaction() throws {
        let fileSystem = SimulatedFileSystem()
        let actions = PointAction()
        var options = APITestSimulated.options(fileSystem)
        options.failpoints = actions.failpoints
        options.memtableBytes = 64 << 10
        // Flushes and compactions run inline, so none is under way when the figures are taken.
        options.runsBackgroundWorkInline = true
        let store = try Store(path: APITestSimulated.path, options: options)
        // Enough entries that the merge checks for a pause many times.
        for batch in 0..<20 {
            try store.write(durability: .buffered) { tx in
                for i in 0..<1000 { try tx.put(apiBytes("key-\(batch)-\(i)"), apiBytes("value-\(i)")) }
            }
        }
        let namesAtMergeStart = Locked<[String]>([])
        // The merge starts; at that moment a suspension begins, and the merge goes on until it
        // notices.
        let suspended = DispatchSemaphore(value: 0)
        let pauseRequested = DispatchSemaphore(value: 0)
        actions.on(.suspending) { pauseRequested.signal() }
        actions.on(.beforeCompaction) {
            let names = (try? fileSystem.listDirectory(APITestSimulated.path)) ?? []
            namesAtMergeStart.withLock { $0 = names.sorted() }
            Thread.detachNewThread {
                try? store.suspend()
                suspended.signal()
            }
            pauseRequested.wait()
        }
        let compactError = fails(with: .suspended) { try store.compact() }
        suspended.wait()
        #expect(compactError, "compact() should fail with .suspended when a suspension abandons its merge")
        #expect(store.lifecycle == .suspended)
        // Nothing of the merge is left: no output file, no manifest edit (the manifest and
        // the segment files are those of when it started; only the WAL may have a sync mark).
        let namesSuspended = try fileSystem.listDirectory(APITestSimulated.path).sorted()
        #expect(namesSuspended == namesAtMergeStart.withLock { $0 }, "the abandoned merge left files or edits behind")
        #expect(try store.resume() == .unchanged)
        // The store is whole.
        #expect(try store.read { tx in try tx.scan(from: []).count } == 20_000)
        try store.compact()
        try store.close()
        try assertStoreIsClean(path: APITestSimulated.path, fileSystem: fileSystem, context: "after an abandoned merge")
    }

    @Test("lifecycle calls from inside a write transaction are refused instead of deadlocking")
    func lifecycleCallsInsideTransaction() throws {
        let store = try APITestSimulated.open()
        try store.write { _ in
            #expect(fails(with: .invalidArgument) { try store.suspend() })
            #expect(fails(with: .invalidArgument) { try store.resume() })
            #expect(fails(with: .invalidArgument) { try store.close() })
        }
        try store.close()
    }

    @Test("a failed sync during suspend: the store still ends suspended and unlocked, then refuses writes")
    func suspendWithFailedSync() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try store.write(durability: .buffered) { tx in try tx.put(apiKey(1), apiBytes("v")) }
        fileSystem.failNext(.sync)
        #expect(fails(with: .io) { try store.suspend() })
        #expect(store.lifecycle == .suspended)
        // No lock held.
        try fileSystem.lockFile(APITestSimulated.path + "/LOCK").unlock()
        #expect(try store.resume() == .unchanged)
        #expect(store.lifecycle == .active)
        #expect(fails(with: .readOnly) { try store.write { tx in try tx.put(apiKey(2), apiBytes("w")) } })
        #expect(try store.read { try $0.get(apiKey(1)) } == apiBytes("v"))
        try store.close()
    }
}
