import Foundation
import Strata
import StrataRecords
import StrataTestSupport
import Testing

// Record references: taken in one transaction, handed to another task, resolved in a later
// write, which learns whether the record is unchanged, changed or deleted, whatever
// flushes and compactions ran in between; refused by another collection and another store.

private struct Note: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var folder: String
    var title: String
}

private let byFolder = RecordIndex<Note>("folder") { [$0.folder] }
private let notes = RecordCollection<Note>("notes", indexes: [byFolder])
private let others = RecordCollection<Note>("others")

private func withStore<T>(_ label: String = "record-references", _ body: (Store) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory(label: label)
    defer { directory.remove() }
    let store = try Store(path: directory.path("store"))
    defer { try? store.close() }
    return try await body(store)
}

private func seed(_ store: Store) throws {
    try store.write { tx in
        try notes.insert(Note(id: 1, folder: "inbox", title: "first"), in: tx)
        try notes.insert(Note(id: 2, folder: "inbox", title: "second"), in: tx)
    }
}

@Suite struct RecordReferenceTests {
    @Test("a record nobody touched resolves as unchanged, in a write on another task")
    func unchanged() async throws {
        try await withStore { store in
            try seed(store)
            let ref = try store.snapshot().read { tx in try notes.reference(to: 1, in: tx) }
            // Unrelated commits, to this collection and elsewhere, are not changes.
            try await store.write { tx in
                try notes.update(Note(id: 2, folder: "inbox", title: "second, edited"), in: tx)
                try tx.put("elsewhere", "x")
            }
            let archived = try await Task.detached {
                try await store.write { tx in
                    guard case .unchanged(var note) = try notes.resolve(ref, in: tx) else { return false }
                    note.folder = "archive"
                    try notes.update(note, in: tx)
                    return true
                }
            }.value
            #expect(archived)
            #expect(try await store.read { tx in try notes.find(byFolder, equalTo: ["archive"], in: tx).map(\.id) } == [1])
        }
    }

    @Test("a record another commit changed resolves as changed, with its new value; require(unchanged:) is a conflict")
    func changed() async throws {
        try await withStore { store in
            try seed(store)
            let ref = try await store.read { tx in try notes.reference(to: 1, in: tx) }
            try await store.write { tx in try notes.update(Note(id: 1, folder: "inbox", title: "edited"), in: tx) }
            let resolution = try await store.read { tx in try notes.resolve(ref, in: tx) }
            #expect(resolution == .changed(Note(id: 1, folder: "inbox", title: "edited")))
            #expect(resolution.changedSinceReference)
            let error = try await #require(throws: StoreError.self) {
                try await store.write { tx in _ = try notes.require(unchanged: ref, in: tx) }
            }
            #expect(error.code == .conflict)
        }
    }

    @Test("a deleted record resolves as deleted; deleted and inserted again, as changed")
    func deletedAndReinserted() async throws {
        try await withStore { store in
            try seed(store)
            let ref = try await store.read { tx in try notes.reference(to: 1, in: tx) }
            try await store.write { tx in _ = try notes.delete(1, in: tx) }
            #expect(try await store.read { tx in try notes.resolve(ref, in: tx) } == .deleted)
            #expect(try await store.read { tx in try notes.resolve(ref, in: tx) }.record == nil)
            try await store.write { tx in try notes.insert(Note(id: 1, folder: "inbox", title: "first"), in: tx) }
            #expect(try await store.read { tx in try notes.resolve(ref, in: tx) } == .changed(Note(id: 1, folder: "inbox", title: "first")))
        }
    }

    @Test("the answer holds across flushes and compactions")
    func acrossCompaction() async throws {
        try await withStore { store in
            try seed(store)
            let untouched = try await store.read { tx in try notes.reference(to: 2, in: tx) }
            let touched = try await store.read { tx in try notes.reference(to: 1, in: tx) }
            try await store.write { tx in try notes.update(Note(id: 1, folder: "inbox", title: "edited"), in: tx) }
            for round in 0..<3 {
                try await store.write { tx in
                    for index in 0..<200 { try tx.put("filler/\(round)/\(index)", String(repeating: "f", count: 100)) }
                }
                try await store.compact()
            }
            try await store.read { (tx: ReadTransaction) throws in
                #expect(try notes.resolve(untouched, in: tx) == .unchanged(Note(id: 2, folder: "inbox", title: "second")))
                #expect(try notes.resolve(touched, in: tx) == .changed(Note(id: 1, folder: "inbox", title: "edited")))
            }
        }
    }

    @Test("inside a write, a reference is to the committed record, and the transaction's own writes are not commits")
    func insideAWrite() async throws {
        try await withStore { store in
            try seed(store)
            try await store.write { tx in
                try notes.update(Note(id: 1, folder: "inbox", title: "mine"), in: tx)
                let ref = try notes.reference(to: 1, in: tx)
                // The resolving transaction sees its own write; no commit changed the record.
                #expect(try notes.resolve(ref, in: tx) == .unchanged(Note(id: 1, folder: "inbox", title: "mine")))
            }
        }
    }

    @Test("refused: a missing record, another collection's reference, another store's")
    func refusals() async throws {
        try await withStore { store in
            try seed(store)
            let missing = try #require(throws: RecordError.self) { try store.read { tx in try notes.reference(to: 9, in: tx) } }
            #expect(missing.code == .notFound)
            let ref = try await store.read { tx in try notes.reference(to: 1, in: tx) }
            let wrongCollection = try #require(throws: StoreError.self) { try store.read { tx in try others.resolve(ref, in: tx) } }
            #expect(wrongCollection.code == .invalidArgument)
            #expect(wrongCollection.message.contains("\"notes\""))
            try await withStore("record-references-other") { other in
                try seed(other)
                let wrongStore = try #require(throws: StoreError.self) { try other.read { tx in try notes.resolve(ref, in: tx) } }
                #expect(wrongStore.code == .invalidArgument)
            }
        }
    }

    @Test("a reference survives Codable, and a decoded reference whose key is not a record key is refused")
    func codable() async throws {
        try await withStore { store in
            try seed(store)
            let ref = try store.read { tx in try notes.reference(to: 2, in: tx) }
            let data = try JSONEncoder().encode(ref)
            let back = try JSONDecoder().decode(RecordReference<Note>.self, from: data)
            #expect(back == ref)
            #expect(back.primaryKey == .int(2))
            #expect(try store.read { tx in try notes.resolve(back, in: tx) }.record?.title == "second")
            // The same bytes claimed for another collection do not decode.
            let forged = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"notes\"", with: "\"others\"")
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(RecordReference<Note>.self, from: Data(forged.utf8)) }
        }
    }

    @Test("the StoreIO forms take and resolve a reference")
    func storeIO() async throws {
        try await withStore { store in
            try seed(store)
            let ref = try await store.run(notes.reference(to: 1))
            try await store.write { tx in _ = try notes.delete(1, in: tx) }
            #expect(try await store.run(notes.resolve(ref)) == .deleted)
        }
    }
}
