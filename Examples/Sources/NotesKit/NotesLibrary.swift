// A notes app's model on StrataRecords: typed records instead of hand-made keys. The
// collection (Note.swift) keeps two indexes in the same transaction as each note: one that
// lists a folder newest first, one that keeps slugs unique. The library adds what an app
// needs around them: a migration run at open, the folder query and its observation, a few
// edits made as read-modify-write in one transaction, and a backup by checkpoint.
import Foundation
import Strata
import StrataRecords

/// A library of notes in a Strata store. Share one instance across the app's tasks, as you
/// would the store.
public final class NotesLibrary: Sendable {
    public let store: Store
    /// The migrations this open ran: `["welcome note"]` the first time a store is opened,
    /// none after, since the store records each one in the transaction that ran it.
    public let migrationsRun: [String]

    /// Opens (or creates) the library at `path` and runs the migrations it has not run yet,
    /// before anything reads it.
    public init(path: String) throws {
        store = try Store(path: path)
        migrationsRun = try Self.migrations.run(on: store)
    }

    /// The library's migrations, in the order they shipped. New ones go at the end.
    static let migrations: Migrations = {
        var migrations = Migrations()
        // Run once per store: a user who deletes the welcome note never sees it again.
        migrations.register("welcome note") { tx in
            let welcome = Note(
                slug: "welcome", folder: "inbox", title: "Welcome to Notes", body: "Notes you add appear here, newest first.",
                pinned: true, tags: ["help"])
            try notes.insert(welcome, in: tx)
        }
        return migrations
    }()

    public func close() throws {
        try store.close()
    }

    // MARK: Queries

    /// The query behind a folder's list: its notes, newest first. A value, so the UI can
    /// run it once or observe it.
    public static func folder(_ name: String) -> StoreIO<ReadOnly, [Note]> {
        notes.find(byFolder, equalTo: [name])
    }

    /// The notes in `folder`, newest first.
    public func list(_ folder: String) async throws -> [Note] {
        try await store.run(Self.folder(folder))
    }

    /// The note with `slug`, found through the unique index.
    public func note(slug: String) async throws -> Note? {
        try await store.run(notes.find(bySlug, equalTo: [slug]).map { $0.first })
    }

    /// Every note in every folder, in identifier order.
    public func all() async throws -> [Note] {
        try await store.run(notes.scan())
    }

    /// The inbox (or any folder) as it changes: its notes now, then again after each commit
    /// that touched what the query read (a note added to, edited in or moved out of the
    /// folder), coalesced when the reader is slower than the writes. A note written to
    /// another folder does not wake it. It ends when the consuming task is cancelled or the
    /// store closes.
    public func observeFolder(_ name: String) -> Observation<[Note]> {
        store.observe(Self.folder(name))
    }

    // MARK: Writes

    /// Adds a note.
    ///
    /// - Throws: `RecordError` `.uniqueViolation` when another note has `slug`; nothing is
    ///   written then.
    @discardableResult
    public func add(_ title: String, slug: String, folder: String = "inbox", body: String = "", tags: [String] = []) async throws -> Note {
        let note = Note(slug: slug, folder: folder, title: title, body: body, tags: tags)
        try await store.run(notes.insert(note))
        return note
    }

    /// Changes a note's title or body and marks it edited now, which moves it to the top of
    /// its folder.
    @discardableResult
    public func edit(_ id: UUID, title: String? = nil, body: String? = nil) async throws -> Note {
        try await store.run(
            change(id) { note in
                if let title { note.title = title }
                if let body { note.body = body }
                note.edited = Date()
            })
    }

    /// Moves a note to another folder; its edit date stays, so it sorts among that folder's
    /// notes by when it was last edited.
    @discardableResult
    public func move(_ id: UUID, to folder: String) async throws -> Note {
        try await store.run(change(id) { $0.folder = folder })
    }

    /// Deletes a note; false if there was none.
    @discardableResult
    public func delete(_ id: UUID) async throws -> Bool {
        try await store.run(notes.delete(id))
    }

    /// Reads a note and writes it back changed, as one operation: run in one transaction, so
    /// no other write can land between the read and the write and be lost. Updating the note
    /// also moves its index entries, so it leaves its old folder's list in the same commit.
    private func change(_ id: UUID, _ modify: @escaping @Sendable (inout Note) -> Void) -> StoreIO<ReadWrite, Note> {
        notes.get(id).flatMap { found in
            guard var note = found else { throw RecordError(.notFound, "there is no note \(id)", collection: notes.name) }
            modify(&note)
            let changed = note
            return notes.update(changed).map { changed }
        }
    }

    // MARK: Backup

    /// Writes a copy of the library as of the latest commit to `path` (which must not exist),
    /// while the app goes on reading and writing. The copy opens as a library of its own.
    @discardableResult
    public func backup(to path: String) throws -> CheckpointReport {
        try store.checkpoint(to: path)
    }
}
