import Foundation
import StrataRecords

/// A note as the app keeps it: a record of the `notes` collection, stored by the records
/// layer under its `id`.
public struct Note: Codable, Sendable, Identifiable, Equatable, CustomStringConvertible {
    public var id: UUID
    /// A short name, unique in the library, that links between notes use (`notes://groceries`);
    /// the `bySlug` index keeps it unique.
    public var slug: String
    public var folder: String
    public var title: String
    public var body: String
    public var edited: Date
    public var pinned: Bool
    public var tags: [String]

    public init(
        id: UUID = UUID(), slug: String, folder: String, title: String, body: String = "", edited: Date = Date(),
        pinned: Bool = false, tags: [String] = []
    ) {
        self.id = id
        self.slug = slug
        self.folder = folder
        self.title = title
        self.body = body
        self.edited = edited
        self.pinned = pinned
        self.tags = tags
    }

    public var description: String { "\"\(title)\" (\(slug), in \(folder))" }
}

/// The folder list: notes of one folder, newest first. A query gives only the first
/// element, the folder, and gets the folder's notes in the order the second one sorts.
let byFolder = RecordIndex<Note>("folder-edited") { [$0.folder, $0.edited.descending] }

/// At most one note per slug: a write that would give a second note the same slug throws
/// `RecordError` `.uniqueViolation` and writes nothing.
let bySlug = RecordIndex<Note>("slug", unique: true) { [$0.slug] }

/// The collection: a description of where notes and their index entries live, used in any
/// transaction of any store.
let notes = RecordCollection<Note>("notes", indexes: [byFolder, bySlug])
