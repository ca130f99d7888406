import Dispatch
import StrataIO

// Lifecycle and suspension: docs/architecture.md, "Lifecycle". Every change of phase but the
// cheap ones (entering and leaving the background) holds `transitions`, so they happen one
// at a time; calls read the phase under `core` and never wait for a change in progress.
extension Store {
    /// The store's current state. See ``Lifecycle``.
    public var lifecycle: Lifecycle { core.withLock { $0.phase } }

    /// Tells the store the app left the foreground: every call is still served, but no new
    /// compaction starts (unless writes would stop for one), so a `suspend()` soon after
    /// has less to stop. ``resume()`` returns to `.active`. Does nothing unless active.
    public func enterBackground() {
        core.withLock { core in
            guard core.phase == .active else { return }
            // With the phase, under the same lock, so a concurrent resume() never leaves the
            // phase and the flag disagreeing.
            core.phase = .background
            core.engine.writing?.maintenance.holdBackCompactions(true)
        }
    }

    /// Suspends the store, blocking until it is done: call it before the app may be frozen
    /// (for example when a background task's time runs out).
    ///
    /// From the moment it is called, every call fails at once with the retryable
    /// ``StoreError/Code/suspended`` error. When it returns:
    /// - the group commit that was in flight has finished, and every write that was queued
    ///   behind it has failed with `.suspended` through its caller's own path (a throw, an
    ///   async throw or a completion): nothing is dropped silently. Every `asyncWrite`
    ///   completion for them has run, unless `suspend()` is itself called from such a
    ///   completion (later completions then run after it returns);
    /// - every commit acknowledged before, `.buffered` ones included, is durable;
    /// - flushes and compactions have stopped at a safe point (a merge in progress is
    ///   abandoned, not awaited);
    /// - the store holds no file lock, so the system will not terminate a frozen app for
    ///   it, and another process may open the store.
    ///
    /// Suspending a suspended or closed store does nothing.
    ///
    /// - Throws: only when making earlier commits durable failed. The store is suspended
    ///   and unlocked even then, and refuses writes after ``resume()`` (`.readOnly`) until
    ///   it is reopened. `.invalidArgument` when called from inside a write transaction.
    ///   `.readOnly` for a store opened read-only (``StoreOptions/readOnly``), which holds
    ///   no lock and writes nothing, and so may stay open, unsuspended, while the app is frozen.
    public func suspend() throws {
        let engine = self.engine
        if engine.writing == nil {
            guard lifecycle == .closed else {
                throw StoreError(
                    .readOnly,
                    "the store at \(path) was opened read-only (StoreOptions.readOnly), so suspend() is refused: it holds no lock and writes nothing, so it needs no suspension and may stay open while the app is frozen"
                )
            }
            return
        }
        if engine.isCurrentThreadWriter {
            throw StoreError(
                .invalidArgument, "suspend() was called from inside a write transaction and would wait for itself; call it after the write returns")
        }
        try transitions.withLock { _ in try suspendLocked() }
        // Callback writes learn their outcome on the completion queue: wait until every
        // completion posted so far has run, so that when suspend() returns each caller has
        // been told (outside `transitions`, so a completion that calls a lifecycle method
        // cannot deadlock with it). From a completion itself the later ones cannot be waited
        // for.
        if DispatchQueue.getSpecific(key: Store.completionQueueKey) == nil {
            completionQueue.sync {}
        }
    }

    /// Suspends the store as `suspend()` does, suspending the calling task instead of
    /// blocking its thread.
    public func suspend() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            // A thread outside the cooperative pool waits for the writer and the maintenance
            // threads.
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try self.suspend() })
            }
        }
    }

    /// Makes the store serve calls again after `suspend()` (or after
    /// ``enterBackground()``).
    ///
    /// Takes the store's lock without waiting. If another process changed the store while
    /// it was suspended, reads its state from disk again before serving any call and
    /// returns ``ResumeOutcome/reloaded(from:to:)``; snapshots taken before read what they
    /// saw again (while suspended their reads throw `.suspended`). Change feeds deliver the
    /// other process's commits first, or end with `.historyUnavailable` (see
    /// ``changes(from:to:bufferSize:)-([UInt8],_,_)``); observations read again. Resuming an
    /// active store does nothing.
    ///
    /// A store opened read-only is never suspended: `resume()` only returns it from the
    /// background, and never reads newer commits (open the store again for those).
    ///
    /// - Throws: `.locked` when another process holds the store (the store stays suspended;
    ///   try again later); `.closed` after ``close()``; what opening would throw when the
    ///   other process left the store damaged (the store stays suspended).
    @discardableResult
    public func resume() throws -> ResumeOutcome {
        if engine.isCurrentThreadWriter {
            throw StoreError(.invalidArgument, "resume() was called from inside a write transaction; a store running a transaction is not suspended")
        }
        return try transitions.withLock { _ in try resumeLocked() }
    }

    /// Closes the store: waits for queued writes, makes `.buffered` commits durable, lets a
    /// flush or compaction already running finish (it starts no new one), closes the files
    /// and releases the lock. Idempotent. Later calls on the store throw `.closed`.
    ///
    /// A suspended store closes without touching its files: they are durable already, and
    /// another process may be using them.
    ///
    /// A compaction can take a few seconds on a large store. Closing is not needed for
    /// safety: a process killed without closing loses no commit (a `.buffered` one is lost
    /// only if the machine also loses power before the system writes it out).
    public func close() throws {
        if engine.isCurrentThreadWriter {
            throw StoreError(.invalidArgument, "close() was called from inside a write transaction; close the store after the write returns")
        }
        try transitions.withLock { _ in try closeLocked() }
    }

    // MARK: Transitions (holding `transitions`)

    private func suspendLocked() throws {
        let engine = core.withLock { core -> Engine? in
            guard core.phase == .active || core.phase == .background else { return nil }
            core.phase = .suspended
            return core.engine
        }
        guard let engine else { return }
        // Only a store that writes gets here: `suspend()` refuses a read-only one.
        guard let writing = engine.writing else { preconditionFailure("Store: suspending a store opened read-only") }
        // Invariant 1: reads refused before anything stops.
        published.setAdmission(.suspended)
        // Both stop requests first, so the writer's round in flight and a merge in progress
        // stop at once, without waiting for each other.
        writing.maintenance.requestPause()
        let dropped = writing.writer.closeIntake()
        try? options.failpoints?.handler(.suspending)
        var failure = dropped.flatMap { writing.writer.finishSuspending(dropped: $0) }
        writing.maintenance.waitUntilIdle()
        // A suspended app should hold as little memory as it can.
        writing.writer.chunkPool.trim()
        engine.versions.markManifest()
        do {
            let fingerprint = try DirectoryFingerprint.capture(
                directory: path, fileSystem: options.fileSystem, liveSegments: engine.versions.liveSegmentNumbers)
            core.withLock { $0.fingerprint = fingerprint }
        } catch {
            // Without a fingerprint, resume() reloads: always correct, only slower.
            failure = failure ?? StoreError.wrapping(error, while: "recording the store's files before suspending")
        }
        lock.release()
        checkLifecycleInvariants()
        // Observers report the interruption now rather than at the next commit.
        listeners.lifecycleChanged()
        if let failure { throw failure }
    }

    private func resumeLocked() throws -> ResumeOutcome {
        let (phase, engine, fingerprint) = core.withLock { core in
            if core.phase == .background {
                core.phase = .active
                core.engine.writing?.maintenance.holdBackCompactions(false)
            }
            return (core.phase, core.engine, core.fingerprint)
        }
        switch phase {
        case .active, .background:
            // What the background skipped is due now.
            engine.writing?.maintenance.schedule()
            return .unchanged
        case .closed:
            throw StoreError.closed()
        case .suspended:
            break
        }
        // Only a store that writes is ever suspended.
        guard let writing = engine.writing else { preconditionFailure("Store: a store opened read-only was suspended") }
        try lock.acquire()
        do {
            // The same engine, stopped since the suspension, so the same live segments.
            let now = try DirectoryFingerprint.capture(
                directory: path, fileSystem: options.fileSystem, liveSegments: engine.versions.liveSegmentNumbers)
            if let fingerprint, fingerprint == now, try writing.writer.walIsUntouched() {
                writing.writer.resume()
                // Back to `.active`, so compactions start again, the ones skipped in the
                // background first (`unpause` schedules them).
                writing.maintenance.holdBackCompactions(false)
                writing.maintenance.unpause()
                finishResuming(with: engine)
                return .unchanged
            }
            let before = published.latest()
            let from = before.sequence
            // The feeds open now get the other process's commits, gathered by the replay.
            let historyRequest = listeners.historyRequest(after: before)
            // Load first: if the other process left something this store cannot read, the
            // old engine stays, suspended, and a later resume tries again.
            let opened = try Recovery.reload(path: path, options: options, into: published, history: historyRequest)
            engine.retire(with: StoreError(.suspended, "the store reloaded its state after another process wrote to it; retry the call"))
            // Before the new writer exists, so they come before any commit of its.
            if let historyRequest, let history = opened.history { history.deliver(to: historyRequest) }
            finishResuming(with: Engine(opened: opened, directory: path, options: options, snapshots: snapshots, listeners: listeners))
            return .reloaded(from: from, to: opened.lastSequence)
        } catch {
            lock.release()
            throw StoreError.wrapping(error, while: "resuming the store")
        }
    }

    private func finishResuming(with engine: Engine) {
        core.withLock { core in
            core.engine = engine
            core.fingerprint = nil
            core.phase = .active
        }
        published.setAdmission(.open)
        checkLifecycleInvariants()
        // Observers read again: after a reload their values may have changed without a
        // commit of this store's writer.
        listeners.lifecycleChanged()
    }

    private func closeLocked() throws {
        let (phase, engine) = core.withLock { core in
            defer {
                core.phase = .closed
                core.fingerprint = nil
            }
            return (core.phase, core.engine)
        }
        published.setAdmission(.closed)
        listeners.storeClosed()
        switch phase {
        case .closed:
            return
        case .suspended:
            engine.retire(with: StoreError.closed())
            lock.releaseForGood()
        case .active, .background:
            guard let writing = engine.writing else {
                // Read-only: no lock was taken, and nothing is written; the files close as
                // the last version holding them goes.
                lock.releaseForGood()
                break
            }
            let done = DispatchSemaphore(value: 0)
            let outcome = Locked<(any Error)?>(nil)
            let refused = writing.writer.submit(
                .close({ error in
                    outcome.withLock { $0 = error }
                    done.signal()
                }))
            if refused == nil { done.wait() }
            writing.maintenance.shutdown()
            lock.releaseForGood()
            if let error = outcome.withLock({ $0 }) { throw error }
        }
        checkLifecycleInvariants()
    }

    /// Invariants 2 and 3 of `Core`; compiled into debug builds only. Holding `transitions`.
    private func checkLifecycleInvariants() {
        #if STRATA_INTERNAL_CHECKS
            let (phase, fingerprint, engine) = core.withLock { ($0.phase, $0.fingerprint, $0.engine) }
            let held = lock.isHeld
            switch phase {
            case .active, .background:
                // A store opened read-only never takes the lock.
                precondition(held == (engine.writing != nil), "Store: serving calls without holding the lock, or read-only and holding it")
                precondition(fingerprint == nil, "Store invariant 3: a fingerprint outside suspension")
            case .suspended, .closed:
                precondition(!held, "Store invariant 2: suspended or closed, yet holding the lock")
            }
            lock.checkInvariants()
        #endif
    }
}
