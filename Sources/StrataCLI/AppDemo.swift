import Dispatch
import Foundation
import Strata
import StrataRecords
import Synchronization

/// `strata demo --app`: what an app developer coming from Realm or Core Data is looking for,
/// on typed records, in one short run: a collection with an index, a query, an observation
/// that updates while another task writes, a suspension that refuses a write with the
/// retryable `.suspended` and loses nothing, and a checkpoint opened as a store of its own.
enum AppDemo {
    struct Note: Codable, Sendable, Identifiable {
        var id: Int
        var folder: String
        var title: String
        var edited: Date
    }

    static let byFolder = RecordIndex<Note>("folder-edited") { [$0.folder, $0.edited.descending] }
    static let notes = RecordCollection<Note>("demo-notes", indexes: [byFolder])

    /// How long the observation may take to see the other task's writes before the demo
    /// gives up: far more than it needs, so only a broken store reaches it.
    static let observationTimeout: Duration = .seconds(20)

    static func run(_ store: Store, path: String, opening: StoreOpeningOptions) throws {
        try blocking { try await tour(store) }
        try checkpoint(store, path: path, opening: opening)
    }

    private static func tour(_ store: Store) async throws {
        let say = Console.printOut
        // Run again on the same store, the demo goes on after the notes already there.
        let first = try await store.read { tx in try notes.scan(in: tx, reverse: true, limit: 1).first?.id ?? 0 } + 1
        let start = Date()
        // A millisecond apart: newest first is the order written, and a run started soon after
        // this one still dates its notes after all of these.
        @Sendable func note(_ offset: Int, _ folder: String, _ title: String) -> Note {
            Note(id: first + offset, folder: folder, title: title, edited: start.addingTimeInterval(Double(offset) / 1000))
        }

        // 1. Records and an index.
        let written = try await store.commit { tx in
            try notes.insert(note(0, "inbox", "Buy milk"), in: tx)
            try notes.insert(note(1, "archive", "Tax return"), in: tx)
            try notes.insert(note(2, "inbox", "Call Ada"), in: tx)
            try notes.insert(note(3, "inbox", "Book flights"), in: tx)
            try notes.insert(note(4, "archive", "Old recipe"), in: tx)
        }
        say("1. Records: inserted 5 notes into \"\(notes.name)\", indexed by folder, newest first; committed at version \(written.version).")

        // 2. A query through the index.
        let inbox = try await store.read { tx in try notes.find(byFolder, equalTo: ["inbox"], in: tx, limit: 3) }
        say("2. Query: the inbox, newest first: \(inbox.map(\.title).joined(separator: ", ")).")

        // 3. An observation, updating while another task writes.
        let inboxBefore = try await store.read { tx in try notes.find(byFolder, equalTo: ["inbox"], in: tx).count }
        let expected = inboxBefore + 3
        let observer = Task { () -> [Int] in
            var seen: [Int] = []
            for await update in store.observe(notes.find(byFolder, equalTo: ["inbox"])) {
                guard case .value(let found, let version) = update else { continue }
                seen.append(found.count)
                say("   observed: \(found.count) notes in the inbox at version \(version)")
                if found.count == expected { break }
            }
            return seen
        }
        let writer = Task {
            for offset in 5..<8 {
                try await store.write { tx in try notes.insert(note(offset, "inbox", "Reply #\(offset - 4)"), in: tx) }
            }
        }
        try await writer.value
        // Cancelling the observer's task ends its loop, so a store that never delivers ends the
        // demo with an error instead of hanging it.
        let watchdog = Task {
            try await Task.sleep(for: observationTimeout)
            observer.cancel()
        }
        let seen = await observer.value
        watchdog.cancel()
        guard seen.last == expected else {
            throw CLIError("the observation did not see the other task's writes within \(observationTimeout)")
        }
        say("3. Observation: another task wrote 3 notes into the inbox; the observer saw \(seen.map(String.init).joined(separator: " → ")).")

        // 4. A suspension: a write while suspended is refused, retryable; after resume it lands.
        let countBefore = try await store.read { tx in try notes.count(in: tx) }
        try await store.suspend()
        let late = note(8, "inbox", "Written across a suspension")
        do {
            try await store.write { tx in try notes.insert(late, in: tx) }
            throw CLIError("a write while suspended was not refused")
        } catch let error as StoreError where error.code == .suspended {
            say("4. Suspension: suspended; a write was refused with .\(error.code) (retryable: \(error.isRetryable)), nothing applied.")
        }
        let outcome = try store.resume()
        try await store.write { tx in try notes.insert(late, in: tx) }
        let countAfter = try await store.read { tx in try notes.count(in: tx) }
        guard countAfter == countBefore + 1 else {
            throw CLIError("after the retried write the collection holds \(countAfter) notes, not \(countBefore + 1)")
        }
        say("   resumed (\(outcome)); the retried write committed: \(countAfter) notes, nothing lost.")
    }

    /// 5. A checkpoint, opened as a store of its own with the options the demo's store was
    /// opened with.
    private static func checkpoint(_ store: Store, path: String, opening: StoreOpeningOptions) throws {
        let version = store.version
        let destination = checkpointPath(beside: path, version: version)
        let report = try store.checkpoint(to: destination)
        let copied = try withStore(destination, opening, create: false) { copy in try copy.read { tx in try notes.count(in: tx) } }
        let held = try store.read { tx in try notes.count(in: tx) }
        guard copied == held else {
            throw CLIError("the checkpoint at \(destination) holds \(copied) notes, the store \(held)")
        }
        Console.printOut("5. Checkpoint: \(destination) at version \(report.version) opens as a store of its own holding \(copied) notes.")
    }

    /// `STORE-checkpoint-vN` beside the store, or with `-2`, `-3`, ... when that name is
    /// taken: a store deleted and made again counts its versions from 0, and a checkpoint of
    /// the old one may still be there. The trailing `/` of `STORE/` is dropped, so the copy
    /// never lands inside the store's directory (a directory the store does not use, which
    /// strata-fsck reports).
    private static func checkpointPath(beside path: String, version: UInt64) -> String {
        var base = path
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        let name = base + "-checkpoint-v\(version)"
        var candidate = name
        var suffix = 1
        while FileManager.default.fileExists(atPath: candidate) {
            suffix += 1
            candidate = name + "-\(suffix)"
        }
        return candidate
    }

    /// Runs async work from the synchronous command and waits for it: the command runs on
    /// the main thread, outside Swift's cooperative pool, so waiting blocks no task.
    private static func blocking(_ body: @escaping @Sendable () async throws -> Void) throws {
        let result = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await body()
                result.withLock { $0 = .success(()) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        try result.withLock { $0 }?.get()
    }
}
