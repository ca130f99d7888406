import Foundation
import Strata
import StrataIO
import StrataRecords
import StrataTestSupport
import Testing

// The collections API as an app uses it: each operation in a transaction and as StoreIO,
// the typed errors that write nothing, index queries in order, defaults for older records,
// migrations, and observation of a query.

private struct Note: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var folder: String
    var title: String
    var edited: Date
    var slug: String
}

private let byFolder = RecordIndex<Note>("folder") { [$0.folder, $0.edited.descending] }
private let bySlug = RecordIndex<Note>("slug", unique: true) { [$0.slug] }
private let notes = RecordCollection<Note>("notes", indexes: [byFolder, bySlug])

private func note(_ id: Int, _ folder: String, minute: Int, slug: String? = nil) -> Note {
    Note(
        id: id, folder: folder, title: "note \(id)", edited: Date(timeIntervalSinceReferenceDate: Double(minute * 60)),
        slug: slug ?? "n\(id)")
}

private func withStore<T>(_ body: (Store) throws -> T) throws -> T {
    let directory = try TemporaryDirectory(label: "records")
    defer { directory.remove() }
    let store = try Store(path: directory.path("store"))
    defer { try? store.close() }
    return try body(store)
}

private func expectRecordError(_ code: RecordError.Code, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected RecordError \(code)")
    } catch let error as RecordError {
        #expect(error.code == code, "\(error)")
    } catch {
        Issue.record("expected RecordError \(code), got \(error)")
    }
}

@Suite struct RecordCollectionTests {
    @Test func putGetScanCountDelete() throws {
        try withStore { store in
            try store.write { tx in
                for id in [3, 1, 2] { try notes.put(note(id, "inbox", minute: id), in: tx) }
            }
            try store.read { (tx: ReadTransaction) throws in
                #expect(try notes.get(2, in: tx) == note(2, "inbox", minute: 2))
                #expect(try notes.get(9, in: tx) == nil)
                #expect(try notes.contains(1, in: tx))
                #expect(try notes.scan(in: tx).map(\.id) == [1, 2, 3])
                #expect(try notes.scan(in: tx, reverse: true, limit: 2).map(\.id) == [3, 2])
                #expect(try notes.scan(in: tx, from: 2, to: 3).map(\.id) == [2])
                #expect(try notes.count(in: tx) == 3)
            }
            let deleted = try store.write { tx in try notes.delete(2, in: tx) }
            let again = try store.write { tx in try notes.delete(2, in: tx) }
            #expect(deleted && !again)
            #expect(try store.read { tx in try notes.count(in: tx) } == 2)
        }
    }

    @Test func insertAndUpdateRefuseAndWriteNothing() throws {
        try withStore { store in
            try store.write { tx in try notes.insert(note(1, "inbox", minute: 1), in: tx) }
            let before = store.version
            expectRecordError(.duplicateID) {
                try store.write { tx in
                    try notes.put(note(5, "inbox", minute: 5), in: tx)
                    try notes.insert(note(1, "archive", minute: 9), in: tx)
                }
            }
            expectRecordError(.notFound) {
                try store.write { tx in try notes.update(note(2, "inbox", minute: 2), in: tx) }
            }
            #expect(store.version == before)
            try store.write { tx in try notes.update(note(1, "archive", minute: 3), in: tx) }
            #expect(try store.read { tx in try notes.find(byFolder, equalTo: ["archive"], in: tx) }.map(\.id) == [1])
            #expect(try store.read { tx in try notes.find(byFolder, equalTo: ["inbox"], in: tx) }.isEmpty)
        }
    }

    @Test func uniqueIndexViolationWritesNothingEvenWhenCaught() throws {
        try withStore { store in
            try store.write { tx in
                try notes.put(note(1, "inbox", minute: 1, slug: "hello"), in: tx)
                try notes.put(note(2, "inbox", minute: 2, slug: "world"), in: tx)
            }
            // Caught inside the transaction: the failed put itself must have written nothing.
            try store.write { tx in
                #expect(throws: RecordError.self) { try notes.put(note(2, "archive", minute: 7, slug: "hello"), in: tx) }
                #expect(throws: RecordError.self) { try notes.insert(note(3, "inbox", minute: 3, slug: "world"), in: tx) }
            }
            try store.read { (tx: ReadTransaction) throws in
                #expect(try notes.get(2, in: tx) == note(2, "inbox", minute: 2, slug: "world"))
                #expect(try notes.get(3, in: tx) == nil)
                #expect(try notes.find(bySlug, equalTo: ["hello"], in: tx).map(\.id) == [1])
                #expect(try notes.find(byFolder, equalTo: ["archive"], in: tx).isEmpty)
            }
            // A record may keep its own unique key, and take one another record gave up.
            try store.write { tx in
                try notes.put(note(1, "archive", minute: 4, slug: "hello"), in: tx)
                try notes.put(note(2, "inbox", minute: 2, slug: "moved"), in: tx)
                try notes.put(note(3, "inbox", minute: 3, slug: "world"), in: tx)
            }
            #expect(try store.read { tx in try notes.find(bySlug, equalTo: ["world"], in: tx) }.map(\.id) == [3])
        }
    }

    @Test func indexQueriesComeInIndexOrder() throws {
        try withStore { store in
            try store.write { tx in
                for (id, folder, minute) in [(1, "inbox", 10), (2, "inbox", 30), (3, "archive", 20), (4, "inbox", 20)] {
                    try notes.put(note(id, folder, minute: minute), in: tx)
                }
            }
            try store.read { (tx: ReadTransaction) throws in
                // Newest first: the date element is descending.
                #expect(try notes.find(byFolder, equalTo: ["inbox"], in: tx).map(\.id) == [2, 4, 1])
                #expect(try notes.find(byFolder, equalTo: ["inbox"], in: tx, reverse: true).map(\.id) == [1, 4, 2])
                #expect(try notes.find(byFolder, equalTo: ["inbox"], in: tx, limit: 1).map(\.id) == [2])
                let t25 = Date(timeIntervalSinceReferenceDate: 25 * 60)
                let t15 = Date(timeIntervalSinceReferenceDate: 15 * 60)
                let range = try notes.find(byFolder, from: ["inbox", t25.descending], to: ["inbox", t15.descending], in: tx)
                #expect(range.map(\.id) == [4])
                #expect(try notes.find(byFolder, from: ["b"], to: nil, in: tx).map(\.id) == [2, 4, 1])
            }
        }
    }

    @Test func storeIOFormsComposeIntoOneTransaction() throws {
        try withStore { store in
            try store.run(notes.insert(note(1, "inbox", minute: 1)).flatMap { notes.insert(note(2, "inbox", minute: 2)) })
            let move: StoreIO<ReadWrite, Void> = notes.get(1).flatMap { found in
                guard var found else { return .just(()) }
                found.folder = "archive"
                return notes.update(found)
            }
            try store.run(move)
            #expect(try store.run(notes.find(byFolder, equalTo: ["archive"])).map(\.id) == [1])
            #expect(try store.run(notes.count()) == 2)
            #expect(try store.run(notes.scan(from: 2)).map(\.id) == [2])
            // A failing step applies nothing of the composition.
            let failing = notes.put(note(3, "inbox", minute: 3)).flatMap { notes.insert(note(1, "x", minute: 0)) }
            #expect(throws: RecordError.self) { try store.run(failing) }
            #expect(try store.run(notes.get(3)) == nil)
            #expect(try store.run(notes.delete(2)))
        }
    }

    @Test func aReferenceIndexIsRefused() throws {
        try withStore { store in
            let stranger = RecordIndex<Note>("title") { [$0.title] }
            #expect(throws: StoreError.self) { try store.read { tx in try notes.find(stranger, equalTo: ["x"], in: tx) } }
        }
    }

    @Test func rebuildIndexesAfterAddingAnIndex() throws {
        try withStore { store in
            let plain = RecordCollection<Note>("notes")
            try store.write { tx in
                for id in 1...3 { try plain.put(note(id, id == 2 ? "archive" : "inbox", minute: id), in: tx) }
            }
            #expect(try store.read { tx in try notes.find(byFolder, equalTo: ["inbox"], in: tx) }.isEmpty)
            try store.write { tx in try notes.rebuildIndexes(in: tx) }
            #expect(try store.read { tx in try notes.find(byFolder, equalTo: ["inbox"], in: tx) }.map(\.id) == [3, 1])
        }
    }
}

// MARK: Evolution and migrations

private struct NoteV1: Codable, Sendable, Identifiable {
    var id: Int
    var title: String
}

private struct NoteV2: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var title: String
    var pinned: Bool  // added, with a default supplied by the collection
    var color: String?  // added, optional
}

@Suite struct RecordEvolutionTests {
    @Test func olderRecordsDecodeWithDefaultsAndOptionals() throws {
        try withStore { store in
            try store.write { tx in try RecordCollection<NoteV1>("n").put(NoteV1(id: 1, title: "old"), in: tx) }
            let strict = RecordCollection<NoteV2>("n")
            do {
                _ = try store.read { tx in try strict.get(1, in: tx) }
                Issue.record("a missing field without defaults must not decode")
            } catch let error as RecordError {
                #expect(error.code == .decoding)
                #expect(error.message.contains("pinned"), "\(error)")
            }
            let lenient = RecordCollection<NoteV2>("n", defaults: NoteV2(id: 0, title: "", pinned: true, color: nil))
            #expect(try store.read { tx in try lenient.get(1, in: tx) } == NoteV2(id: 1, title: "old", pinned: true, color: nil))
        }
    }

    @Test func migrationsRunOnceInOrderAndAreRecorded() async throws {
        let directory = try TemporaryDirectory(label: "migrations")
        defer { directory.remove() }
        let store = try Store(path: directory.path("store"))
        let log = Locked<[String]>([])
        var migrations = Migrations()
        migrations.register("first") { tx in
            log.withLock { $0.append("first") }
            try tx.put(Array("a".utf8), Array("1".utf8))
        }
        migrations.register("second", .put(Array("b".utf8), Array("2".utf8)))
        #expect(try await migrations.run(on: store) == ["first", "second"])
        #expect(try await migrations.run(on: store) == [])
        var more = migrations
        more.register("third") { tx in log.withLock { $0.append("third") } }
        #expect(try runSync(more, store) == ["third"])
        #expect(log.withLock { $0 } == ["first", "third"])
        #expect(try await store.read { tx in try Migrations.applied(in: tx) } == ["first", "second", "third"])

        // An app that knows fewer, or other, migrations is refused.
        for stale in [migrations, renamed()] {
            do {
                _ = try await stale.run(on: store)
                Issue.record("expected a migration error")
            } catch let error as RecordError {
                #expect(error.code == .migration)
            }
        }
        // A migration that throws is not recorded and applies nothing.
        var failing = more
        failing.register("fourth") { tx in
            try tx.put(Array("c".utf8), Array("3".utf8))
            throw CancellationError()
        }
        await #expect(throws: CancellationError.self) { try await failing.run(on: store) }
        #expect(try await store.read { tx in try tx.get(Array("c".utf8)) } == nil)
        #expect(try await store.read { tx in try Migrations.applied(in: tx) }.count == 3)
        try store.close()
    }

    private func renamed() -> Migrations {
        var migrations = Migrations()
        migrations.register("first") { _ in }
        migrations.register("other") { _ in }
        migrations.register("third") { _ in }
        return migrations
    }

    private func runSync(_ migrations: Migrations, _ store: Store) throws -> [String] {
        try migrations.run(on: store)
    }
}

// MARK: Observation

@Suite struct RecordObservationTests {
    @Test func anIndexQueryIsObservedAcrossWrites() async throws {
        let directory = try TemporaryDirectory(label: "records-observe")
        defer { directory.remove() }
        let store = try Store(path: directory.path("store"))
        var updates = store.observe(notes.find(byFolder, equalTo: ["inbox"])).makeAsyncIterator()
        #expect(await ids(updates.next()) == [])
        try await store.run(notes.put(note(1, "inbox", minute: 1)))
        #expect(await ids(updates.next()) == [1])
        // A record elsewhere is not a change to the query: the next value is the move.
        try await store.run(notes.put(note(2, "archive", minute: 2)))
        try await store.run(notes.put(note(1, "archive", minute: 3)))
        #expect(await ids(updates.next()) == [])
        try store.close()
    }

    @Test func aRecordThatDoesNotDecodeIsReportedAsADecodingFailureNotAsIO() async throws {
        let directory = try TemporaryDirectory(label: "records-observe-decoding")
        defer { directory.remove() }
        let store = try Store(path: directory.path("store"))
        try await store.run(notes.put(note(1, "inbox", minute: 1)))
        // Bytes that are no record, under record 2's key: another writer's raw bytes.
        let recordKey = KeyTuple([.string("notes"), .int(0), .int(2)]).bytes
        try await store.write { tx in try tx.put(recordKey, [0xFF, 0x00, 0x01]) }
        var updates = store.observe(notes.scan()).makeAsyncIterator()
        guard case .failed(let error)? = await updates.next() else {
            Issue.record("expected .failed")
            return
        }
        #expect((error as? RecordError)?.code == .decoding, "\(error)")
        try await store.write { tx in try tx.delete(recordKey) }
        #expect(await ids(updates.next()) == [1])
        try store.close()
    }

    private func ids(_ update: Observed<[Note]>?) -> [Int]? {
        guard case .value(let notes, _)? = update else { return nil }
        return notes.map(\.id)
    }
}
