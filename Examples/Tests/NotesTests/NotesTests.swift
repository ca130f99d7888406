import Foundation
import NotesKit
import StrataRecords
import Testing

@Suite("A notes app's model on StrataRecords")
struct NotesTests {
    @Test("an observed folder follows another task's writes to their final state, in version order")
    func observationFollowsConcurrentWrites() async throws {
        try await withDirectory { directory in
            let library = try NotesLibrary(path: directory + "/notes.strata")
            defer { try? library.close() }
            // n0...n19 added, the even ones moved out, n5 deleted, n3 edited last: on top.
            let expected = ["n3"] + stride(from: 19, through: 1, by: -2).filter { $0 != 3 && $0 != 5 }.map { "n\($0)" } + ["welcome"]

            let ui = Task {
                var shown: [(slugs: [String], version: UInt64)] = []
                for await update in library.observeFolder("inbox") {
                    guard case .value(let inbox, let version) = update else { continue }
                    shown.append((inbox.map(\.slug), version))
                    if shown.last?.slugs == expected { break }
                }
                return shown
            }
            let timeout = Task {
                try await Task.sleep(for: .seconds(20))
                ui.cancel()
            }
            let writer = Task {
                var added: [Note] = []
                for n in 0..<20 { added.append(try await library.add("Note \(n)", slug: "n\(n)")) }
                for (n, note) in added.enumerated() where n % 2 == 0 {
                    try await library.move(note.id, to: "archive")
                }
                try await library.delete(added[5].id)
                try await library.edit(added[3].id, title: "Note 3, edited")
            }
            try await writer.value
            let shown = await ui.value
            timeout.cancel()

            #expect(shown.last?.slugs == expected, "the last inbox shown was \(shown.last?.slugs ?? [])")
            #expect(try await library.list("inbox").map(\.slug) == expected)
            // Coalesced, never out of order, never the same version twice.
            #expect(zip(shown, shown.dropFirst()).allSatisfy { $0.version < $1.version }, "\(shown.map(\.version))")
        }
    }

    @Test("a second note with a taken slug is refused with uniqueViolation, and nothing is written")
    func uniqueSlug() async throws {
        try await withDirectory { directory in
            let library = try NotesLibrary(path: directory + "/notes.strata")
            defer { try? library.close() }
            let groceries = try await library.add("Groceries", slug: "groceries")
            let version = library.store.version
            do {
                try await library.add("Groceries (copy)", slug: "groceries", folder: "archive")
                Issue.record("a second note with slug groceries was written")
            } catch let error as RecordError {
                #expect(error.code == .uniqueViolation, "\(error)")
            }
            #expect(library.store.version == version)
            #expect(try await library.note(slug: "groceries") == groceries)
            #expect(try await library.list("archive") == [])
            #expect(try await library.all().map(\.slug).sorted() == ["groceries", "welcome"])
            // A note keeps its own slug when it changes: moving it is not a duplicate.
            #expect(try await library.move(groceries.id, to: "archive").slug == "groceries")
        }
    }

    @Test("the welcome note's migration runs on the first open only, even after the note is deleted")
    func migrationRunsOnce() async throws {
        try await withDirectory { directory in
            let path = directory + "/notes.strata"
            let first = try NotesLibrary(path: path)
            #expect(first.migrationsRun == ["welcome note"])
            let welcome = try #require(try await first.note(slug: "welcome"))
            #expect(try await first.list("inbox") == [welcome])
            #expect(try await first.delete(welcome.id))
            try first.close()

            let second = try NotesLibrary(path: path)
            defer { try? second.close() }
            #expect(second.migrationsRun == [])
            #expect(try await second.all() == [])
        }
    }

    @Test("a checkpoint opens as a library holding the notes as of the backup, and nothing after")
    func checkpointHoldsTheNotes() async throws {
        try await withDirectory { directory in
            let library = try NotesLibrary(path: directory + "/notes.strata")
            defer { try? library.close() }
            try await library.add("Groceries", slug: "groceries", body: "milk, eggs", tags: ["shopping"])
            let trip = try await library.add("Trip plan", slug: "trip")
            try await library.move(trip.id, to: "archive")
            let backedUp = try await library.all()

            let report = try library.backup(to: directory + "/backup.strata")
            #expect(report.version == library.store.version)
            try await library.add("After the backup", slug: "after")

            let copy = try NotesLibrary(path: directory + "/backup.strata")
            defer { try? copy.close() }
            #expect(copy.migrationsRun == [])
            #expect(try await copy.all() == backedUp)
            #expect(try await copy.list("archive").map(\.slug) == ["trip"])
            #expect(try await copy.note(slug: "after") == nil)
            // The copy is a store of its own: its writes stay there.
            try await copy.add("Only in the copy", slug: "copy-only")
            #expect(try await library.note(slug: "copy-only") == nil)
        }
    }

    private func withDirectory(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notes-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await body(directory)
    }
}
