// notes-app: a notes app's model on StrataRecords (NotesKit/NotesLibrary.swift). One task
// shows the inbox each time it changes while another writes to it; a duplicate slug is
// refused with nothing written; then a checkpoint of the library opens as a library of its
// own. Exits 1 if a check failed.
//
//   swift run --package-path Examples notes-app [directory]
import Foundation
import NotesKit
import StrataRecords

let arguments = CommandLine.arguments.dropFirst()
let directory = arguments.first ?? FileManager.default.temporaryDirectory.appendingPathComponent("notes-app-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
var failures: [String] = []

let library = try NotesLibrary(path: directory + "/notes.strata")
print("opened the library; migrations run: \(library.migrationsRun)")

// What the inbox shows once the writer is done: newest first, the edited note on top.
let expectedInbox = ["Groceries", "Book club", "Welcome to Notes"]

// The UI: redraws the inbox on each observed value, until it shows the final state.
let ui = Task {
    var shown: [[String]] = []
    for await update in library.observeFolder("inbox") {
        // An interruption (the store suspended, say) leaves the last list on screen.
        guard case .value(let inbox, let version) = update else { continue }
        shown.append(inbox.map(\.title))
        print("  ui: inbox at version \(version): \(inbox.map(\.title).joined(separator: ", "))")
        if shown.last == expectedInbox { break }
    }
    return shown
}
// Never hang: a cancelled observation ends.
let timeout = Task {
    try await Task.sleep(for: .seconds(10))
    ui.cancel()
}

// A background task, a sync from another device say, writing while the UI watches.
let writer = Task {
    let groceries = try await library.add("Groceries", slug: "groceries", body: "milk")
    print("writer: added \(groceries)")
    let trip = try await library.add("Trip plan", slug: "trip")
    print("writer: added \(trip)")
    print("writer: added \(try await library.add("Book club", slug: "book-club"))")
    try await library.edit(groceries.id, body: "milk, eggs")
    print("writer: edited \"Groceries\"")
    try await library.move(trip.id, to: "archive")
    print("writer: moved \"Trip plan\" to the archive")

    let version = library.store.version
    do {
        try await library.add("Groceries (copy)", slug: "groceries")
        return ["a second note with slug \"groceries\" was written"]
    } catch let error as RecordError where error.code == .uniqueViolation {
        print("writer: adding a second \"groceries\" note throws RecordError .\(error.code):\n  \(error.message)")
        print("writer: store version still \(library.store.version): nothing was written")
        return library.store.version == version ? [] : ["the refused write changed the store's version"]
    }
}

failures += try await writer.value
let shown = await ui.value
timeout.cancel()
if shown.last != expectedInbox { failures.append("the inbox never showed \(expectedInbox) (last shown: \(shown.last ?? []))") }

let backupPath = directory + "/backup.strata"
let checkpoint = try library.backup(to: backupPath)
print("checkpoint at version \(checkpoint.version): \(checkpoint.sharedFiles) segment files shared, \(checkpoint.memtableFiles) written from memory")
let copy = try NotesLibrary(path: backupPath)
print("the copy opens as a library; migrations run: \(copy.migrationsRun) (the store records the welcome note's)")
for folder in ["inbox", "archive"] {
    print("  copy's \(folder): \(try await copy.list(folder).map(\.title).joined(separator: ", "))")
}
if try await copy.all() != library.all() { failures.append("the copy does not hold the library's notes") }
if !copy.migrationsRun.isEmpty { failures.append("opening the copy ran migrations \(copy.migrationsRun) again") }
try copy.close()
try library.close()
if arguments.isEmpty { try? FileManager.default.removeItem(atPath: directory) }

for failure in failures { print("FAILED: \(failure)") }
print(failures.isEmpty ? "PASS" : "FAIL")
exit(failures.isEmpty ? 0 : 1)
