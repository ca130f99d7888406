// A simulated app session: writers keep saving metadata in every style an app uses (blocking,
// async and callback) while the "app" goes to the background, is suspended, lets its share
// extension use the store, and comes back, several times over. At the end the store is
// opened afresh and every record anyone was told about is looked up.
import Dispatch
import Foundation
import Strata
import Synchronization

/// SwiftUI's `ScenePhase`, declared here so that the example runs anywhere.
public enum ScenePhase: Sendable {
    case active
    case inactive
    case background
}

/// The three ways app code calls the store.
public enum WriterStyle: String, Sendable, CaseIterable {
    /// A blocking call on a thread of its own, as code written for a serial queue does.
    case blocking
    /// `try await`, from a task.
    case async
    /// A completion handler, fire and forget, as UIKit-era code does.
    case callback
}

/// Why ``runLifecycleScenario(directory:rounds:log:)`` could not run.
public struct ScenarioError: Error, CustomStringConvertible {
    public var description: String
}

/// What ``runLifecycleScenario(directory:rounds:log:)`` saw. ``failures`` is empty when every
/// check passed.
public struct ScenarioReport: Sendable {
    /// Saves acknowledged as committed, by style.
    public var committed: [WriterStyle: Int] = [:]
    /// Saves refused because the store was suspended, kept, and written after a resume.
    public var retried = 0
    public var suspensions = 0
    /// Turns the extension took while the app was suspended.
    public var extensionTurns = 0
    /// Resumes that threw `.locked` because the extension still had the store open.
    public var lockedResumes = 0
    /// Resumes that returned `.reloaded` because the extension had written.
    public var reloads = 0
    /// Records looked up in the reopened store at the end.
    public var recordsChecked = 0
    /// What went wrong; empty when the scenario passed.
    public var failures: [String] = []

    public var passed: Bool { failures.isEmpty }

    mutating func check(_ condition: Bool, _ failure: @autoclosure () -> String) {
        if !condition { failures.append(failure()) }
    }

    /// A few lines for a person.
    public var summary: String {
        let styles = WriterStyle.allCases.map { "\($0.rawValue) \(committed[$0, default: 0])" }.joined(separator: ", ")
        var lines = [
            "saves committed: \(committed.values.reduce(0, +)) (\(styles))",
            "saves refused while suspended, kept and retried after resume: \(retried)",
            "suspensions: \(suspensions); extension turns: \(extensionTurns) (resume threw .locked \(lockedResumes)x, returned .reloaded \(reloads)x)",
            "records checked after reopening: \(recordsChecked)"
        ]
        lines += failures.map { "FAILED: \($0)" }
        lines.append(passed ? "PASS" : "FAIL")
        return lines.joined(separator: "\n")
    }
}

/// Runs the session against a store in `directory` and checks what it promised.
///
/// Each round: the app is active while the writers run; its scene goes to the background
/// (`enterBackground()`, every call still served); its background time runs out
/// (`suspend()`); writes made while suspended are refused with a retryable error and kept;
/// every second round the share extension opens the same store, checks it sees every write
/// the app was told had committed, adds a record and closes, while the app's first attempt
/// to resume throws `.locked`; then the scene becomes active again (`resume()`), which
/// writes the kept records and, after an extension turn, reloads.
///
/// Throws only for what a check cannot recover from (the store cannot be opened, say), and
/// when `directory` holds a store from an earlier run: the checks count every record.
public func runLifecycleScenario(directory: String, rounds: Int = 4, log: @Sendable (String) -> Void = { _ in }) async throws -> ScenarioReport {
    let path = URL(fileURLWithPath: directory).appendingPathComponent("metadata.strata").path
    guard !FileManager.default.fileExists(atPath: path) else {
        throw ScenarioError(description: "\(path) exists already; give an empty directory")
    }
    var report = ScenarioReport()
    var extensionRecords: [FileMetadata] = []
    let cache = try MetadataCache(path: path)
    let ledger = Ledger()
    let writers = Writers.start(cache: cache, ledger: ledger)

    do {
        for round in 1...rounds {
            try await Task.sleep(for: .milliseconds(30))  // active: the writers run

            // The scene leaves the foreground, through .inactive as on iOS. Nothing is refused
            // yet: the app may still be finishing work in a background task.
            try scenePhaseChanged(to: .inactive, cache: cache)
            try scenePhaseChanged(to: .background, cache: cache)
            report.check(cache.store.lifecycle == .background, "round \(round): lifecycle \(cache.store.lifecycle) after enterBackground()")
            try await Task.sleep(for: .milliseconds(15))

            // The background task's expiration handler: from here on the app may be frozen.
            try await cache.suspend()
            report.suspensions += 1
            report.check(cache.store.lifecycle == .suspended, "round \(round): lifecycle \(cache.store.lifecycle) after suspend()")
            checkRefusals(round: round, cache: cache, report: &report)
            try await saveOnceInEveryStyle(round: round, cache: cache, ledger: ledger, report: &report)

            if round.isMultiple(of: 2) {
                let record = try extensionTurn(round: round, path: path, cache: cache, ledger: ledger, report: &report)
                extensionRecords.append(record)
            }

            // The scene is active again.
            let outcome = try scenePhaseChanged(to: .active, cache: cache)
            log("round \(round): resumed, \(outcome.map { "\($0)" } ?? "-"), \(ledger.keptCount) saves kept so far")
            if round.isMultiple(of: 2), let record = extensionRecords.last {
                if case .reloaded(let from, let to) = outcome, to > from {
                    report.reloads += 1
                } else {
                    report.failures.append("round \(round): resume() after the extension wrote returned \(String(describing: outcome))")
                }
                report.check(try cache.metadata(forPath: record.path) == record, "round \(round): the extension's record is not visible after resume")
            } else {
                report.check(outcome == .unchanged, "round \(round): resume() with no other writer returned \(String(describing: outcome))")
            }
            try checkEverythingAcknowledgedIsReadable(round: round, cache: cache, ledger: ledger, report: &report)
        }
    } catch {
        await writers.stop()
        throw error
    }

    await writers.stop()
    // Writes the records still waiting (a refusal can be reported after the last resume),
    // then closes.
    try cache.close()
    report.check(cache.waitingCount == 0, "\(cache.waitingCount) kept records were never written")
    try checkReopened(path: path, ledger: ledger, extensionRecords: extensionRecords, report: &report)

    let outcome = ledger.outcome
    report.committed = outcome.committedByStyle
    report.retried = outcome.kept.count
    report.failures += outcome.errors
    report.check(report.retried > 0, "no save was ever refused: the scenario did not exercise suspension")
    return report
}

// MARK: The app's side

/// What an app's `.onChange(of: scenePhase)` does:
///
///     .onChange(of: scenePhase) { _, phase in try? scenePhaseChanged(to: phase, cache: cache) }
///
/// Only `resume()` can fail (`.locked`: an extension has the store open), and only it has
/// something to report.
@discardableResult
private func scenePhaseChanged(to phase: ScenePhase, cache: MetadataCache) throws -> ResumeOutcome? {
    switch phase {
    case .active:
        return try cache.resume()
    case .inactive, .background:
        cache.enterBackground()
        return nil
    }
}

/// While suspended, a read is refused at once with an error that says "try again later",
/// rather than blocking or returning nothing.
private func checkRefusals(round: Int, cache: MetadataCache, report: inout ScenarioReport) {
    do {
        _ = try cache.metadata(forPath: "/Documents/anything")
        report.failures.append("round \(round): a read succeeded on a suspended store")
    } catch let error as StoreError where error.code == .suspended && error.isRetryable {
        // As promised.
    } catch {
        report.failures.append("round \(round): a read on a suspended store threw \(error)")
    }
}

/// Code that runs while the app is suspended (a timer that fired late, a completion handler)
/// saves once in each style: every save is refused and kept, none is dropped.
private func saveOnceInEveryStyle(round: Int, cache: MetadataCache, ledger: Ledger, report: inout ScenarioReport) async throws {
    for style in WriterStyle.allCases {
        let record = FileMetadata.sample(writer: "late-\(style.rawValue)", index: round)
        let result: Result<SaveResult, any Error>
        switch style {
        case .blocking:
            // A synchronous closure, so the blocking overload (an async function would pick
            // the async one).
            result = Result { try cache.save(record, sync: true) }
        case .async:
            result = await asyncResult { try await cache.save(record, sync: false) }
        case .callback:
            result = await withCheckedContinuation { continuation in
                cache.save(record, sync: true) { continuation.resume(returning: $0) }
            }
        }
        ledger.note(style, record, result)
        report.check(
            (try? result.get()) == .retryAfterResume, "round \(round): a \(style.rawValue) save on a suspended store gave \(result), not .retryAfterResume")
    }
}

// MARK: The extension's side

/// The share extension runs while the app is suspended. In a real app it is another process
/// opening the store in the shared app-group container; here a second `MetadataCache` on the
/// same path stands in for it. It can open the store only because the suspended app released
/// its lock.
private func extensionTurn(round: Int, path: String, cache: MetadataCache, ledger: Ledger, report: inout ScenarioReport) throws -> FileMetadata {
    report.extensionTurns += 1
    let acknowledged = ledger.outcome.committed
    let shareExtension = try MetadataCache(path: path)

    // suspend() finished every write and made each acknowledged one durable, .buffered ones
    // included, so the extension reads all of them.
    let seen = Dictionary(try shareExtension.allMetadata().map { ($0.path, $0) }) { first, _ in first }
    let missing = acknowledged.values.filter { seen[$0.path] != $0 }
    report.check(missing.isEmpty, "round \(round): the extension did not see \(missing.count) acknowledged writes")

    let record = FileMetadata.sample(writer: "share-extension", index: round)
    report.check(try shareExtension.save(record, sync: true) == .committed, "round \(round): the extension's save was not committed")

    // The user switches back to the app before the extension is done: resume() does not wait
    // for the lock, it throws .locked, and the app stays suspended until it tries again.
    do {
        try cache.resume()
        report.failures.append("round \(round): resume() succeeded while the extension had the store open")
    } catch let error as StoreError where error.code == .locked {
        report.lockedResumes += 1
    }
    report.check(cache.store.lifecycle == .suspended, "round \(round): lifecycle \(cache.store.lifecycle) after a refused resume()")

    try shareExtension.close()
    return record
}

// MARK: Checks

/// After a resume, even one that reloaded, every save the app was told had committed is there.
private func checkEverythingAcknowledgedIsReadable(round: Int, cache: MetadataCache, ledger: Ledger, report: inout ScenarioReport) throws {
    let acknowledged = ledger.outcome.committed  // before reading: all of these are committed
    let stored = Dictionary(try cache.allMetadata().map { ($0.path, $0) }) { first, _ in first }
    let missing = acknowledged.values.filter { stored[$0.path] != $0 }
    report.check(missing.isEmpty, "round \(round): \(missing.count) acknowledged writes unreadable after resume")
}

/// Opens the closed store afresh, as the next launch would, and looks up every record: the
/// ones whose save committed, the ones that were refused and kept, and the extension's.
private func checkReopened(path: String, ledger: Ledger, extensionRecords: [FileMetadata], report: inout ScenarioReport) throws {
    let outcome = ledger.outcome
    var expected = outcome.committed.merging(outcome.kept) { committed, _ in committed }
    for record in extensionRecords { expected[record.path] = record }

    let reopened = try MetadataCache(path: path)
    defer { try? reopened.close() }
    let stored = Dictionary(try reopened.allMetadata().map { ($0.path, $0) }) { first, _ in first }
    report.recordsChecked = expected.count

    let lostCommitted = outcome.committed.values.filter { stored[$0.path] != $0 }
    let lostKept = outcome.kept.values.filter { stored[$0.path] != $0 }
    let lostExtension = extensionRecords.filter { stored[$0.path] != $0 }
    let unexpected = stored.keys.filter { expected[$0] == nil }
    report.check(lostCommitted.isEmpty, "\(lostCommitted.count) committed records missing or wrong after reopening")
    report.check(lostKept.isEmpty, "\(lostKept.count) refused-and-kept records missing or wrong after reopening")
    report.check(lostExtension.isEmpty, "\(lostExtension.count) extension records missing after reopening")
    report.check(unexpected.isEmpty, "\(unexpected.count) records nobody wrote")
}

// MARK: The writers

extension FileMetadata {
    /// A record unique to `writer` and `index`.
    static func sample(writer: String, index: Int) -> FileMetadata {
        FileMetadata(
            path: "/Documents/\(writer)/file-\(index).txt",
            size: Int64(index) * 4096 + Int64(writer.utf8.count),
            modified: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
            contentType: "public.plain-text")
    }
}

/// What every save was told, for the checks.
private final class Ledger: Sendable {
    struct Outcome {
        var committed: [String: FileMetadata] = [:]
        var committedByStyle: [WriterStyle: Int] = [:]
        var kept: [String: FileMetadata] = [:]
        var errors: [String] = []
    }

    private let state = Mutex(Outcome())

    func note(_ style: WriterStyle, _ record: FileMetadata, _ result: Result<SaveResult, any Error>) {
        state.withLock { outcome in
            switch result {
            case .success(.committed):
                outcome.committed[record.path] = record
                outcome.committedByStyle[style, default: 0] += 1
            case .success(.retryAfterResume):
                outcome.kept[record.path] = record
            case .failure(let error):
                outcome.errors.append("\(style.rawValue) save of \(record.path) failed: \(error)")
            }
        }
    }

    var outcome: Outcome { state.withLock { $0 } }
    var keptCount: Int { state.withLock { $0.kept.count } }
}

/// Three writers saving a record every couple of milliseconds until stopped, one per style.
private final class Writers: Sendable {
    private let stopped = Atomic(false)
    /// The blocking writer's thread, and every callback save not yet completed.
    private let threads = DispatchGroup()
    private let asyncWriter = Mutex<Task<Void, Never>?>(nil)

    static func start(cache: MetadataCache, ledger: Ledger) -> Writers {
        let writers = Writers()
        writers.threads.enter()
        Thread.detachNewThread {
            writers.runBlocking(cache: cache, ledger: ledger)
            writers.threads.leave()
        }
        writers.threads.enter()
        Thread.detachNewThread {
            writers.runCallbacks(cache: cache, ledger: ledger)
            writers.threads.leave()
        }
        let task = Task { await writers.runAsync(cache: cache, ledger: ledger) }
        writers.asyncWriter.withLock { $0 = task }
        return writers
    }

    /// Stops the writers and waits until every save they started has been answered.
    func stop() async {
        stopped.store(true, ordering: .relaxed)
        await asyncWriter.withLock { $0 }?.value
        await withCheckedContinuation { continuation in
            threads.notify(queue: .global()) { continuation.resume() }
        }
    }

    private var isStopped: Bool { stopped.load(ordering: .relaxed) }

    private func runBlocking(cache: MetadataCache, ledger: Ledger) {
        var index = 0
        while !isStopped {
            let record = FileMetadata.sample(writer: WriterStyle.blocking.rawValue, index: index)
            ledger.note(.blocking, record, Result { try cache.save(record, sync: index.isMultiple(of: 2)) })
            index += 1
            Thread.sleep(forTimeInterval: 0.002)
        }
    }

    private func runAsync(cache: MetadataCache, ledger: Ledger) async {
        var index = 0
        while !isStopped {
            let record = FileMetadata.sample(writer: WriterStyle.async.rawValue, index: index)
            ledger.note(.async, record, await asyncResult { try await cache.save(record, sync: index.isMultiple(of: 2)) })
            index += 1
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Fires saves without waiting for their completions, as callback code does.
    private func runCallbacks(cache: MetadataCache, ledger: Ledger) {
        var index = 0
        while !isStopped {
            let record = FileMetadata.sample(writer: WriterStyle.callback.rawValue, index: index)
            threads.enter()
            cache.save(record, sync: index.isMultiple(of: 2)) { result in
                ledger.note(.callback, record, result)
                self.threads.leave()
            }
            index += 1
            Thread.sleep(forTimeInterval: 0.002)
        }
    }
}

/// `Result { try ... }` for async work.
private func asyncResult<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
