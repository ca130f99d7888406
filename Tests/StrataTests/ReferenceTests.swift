// References (DocC, "Handing over between threads"): taking, resolving and checking them,
// in every kind of transaction, across flushes, compactions and reopens, and as StoreIO
// primitives.
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Testing

@Suite("References: handover between threads")
struct ReferenceTests {
    /// A store whose flushes and compactions run inline, so tests choose when they happen.
    private static func open(_ fileSystem: SimulatedFileSystem = SimulatedFileSystem()) throws -> Store {
        var options = APITestSimulated.options(fileSystem)
        options.runsBackgroundWorkInline = true
        return try Store(path: APITestSimulated.path, options: options)
    }

    private static func put(_ store: Store, _ key: String, _ value: String) throws {
        try store.write { tx in try tx.put(apiBytes(key), apiBytes(value)) }
    }

    private static func delete(_ store: Store, _ key: String) throws {
        try store.write { tx in try tx.delete(apiBytes(key)) }
    }

    @Test("the contract's example compiles as written")
    func contractExample() throws {
        let store = try Self.open()
        let key = apiBytes("mail/1")
        let p = apiBytes("mail/")
        try Self.put(store, "mail/1", "hello")
        let snapshot = store.snapshot()
        let ref: KeyReference = try snapshot.read { tx in try tx.reference(key) }
        let readMail: QueryReference = try store.read { tx in try tx.reference(prefix: p) }
        try Self.put(store, "mail/2", "more")
        let finished = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<Void, any Error>?>(nil)
        store.asyncWrite({ (tx: WriteTransaction) throws in
            let current: [UInt8]? = try tx.resolve(ref)
            let entries: [Entry] = try tx.resolve(readMail)
            #expect(current == apiBytes("hello"))
            #expect(entries.map(\.key) == [apiBytes("mail/1"), apiBytes("mail/2")])
            #expect(try tx.changedSince(ref) == false)
            try tx.require(unchanged: readMail)
        }) { result in
            outcome.withLock { $0 = result }
            finished.signal()
        }
        finished.wait()
        let error = try #require(throws: StoreError.self) { try outcome.withLock { $0 }!.get() }
        #expect(error.code == .conflict, "mail/2 was added to the range after the reference")
        snapshot.close()
        try store.close()
    }

    @Test("a key reference: resolved to the value now, changed by any later put or delete, and only by those")
    func keyReference() throws {
        let store = try Self.open()
        try Self.put(store, "a", "1")
        let ref = try store.read { tx in try tx.reference(apiBytes("a")) }
        #expect(ref.key == apiBytes("a") && ref.version == store.version)
        try Self.put(store, "b", "other key")
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.resolve(ref) == apiBytes("1"))
            #expect(try tx.changedSince(ref) == false)
            try tx.require(unchanged: ref)
        }
        try Self.put(store, "a", "1")  // the same value again is still a commit that touched it
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.changedSince(ref))
            let error = try #require(throws: StoreError.self) { try tx.require(unchanged: ref) }
            #expect(error.code == .conflict && !error.isRetryable)
        }
        let fresh = try store.read { tx in try tx.reference(apiBytes("a")) }
        try Self.delete(store, "a")
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.resolve(fresh) == nil)
            #expect(try tx.changedSince(fresh))
        }
        try store.close()
    }

    @Test("an absent key: unchanged until a put, and a delete of an absent key counts as a touch")
    func absentKey() throws {
        let store = try Self.open()
        let ref = try store.read { tx in try tx.reference(apiBytes("missing")) }
        try Self.put(store, "other", "x")
        #expect(try store.read { try $0.changedSince(ref) } == false)
        #expect(try store.read { try $0.resolve(ref) } == nil)
        try Self.delete(store, "missing")
        #expect(try store.read { try $0.changedSince(ref) })
        try store.close()
    }

    @Test("a query reference: re-evaluated now, and changed by an entry changed, added or removed in its range")
    func queryReference() throws {
        let store = try Self.open()
        for name in ["q/1", "q/2", "q/3", "r/1"] { try Self.put(store, name, "v") }
        let prefix = try store.read { tx in try tx.reference(prefix: apiBytes("q/")) }
        let bounded = try store.read { tx in try tx.reference(from: apiBytes("q/2"), to: apiBytes("q/3")) }
        #expect(prefix.lower == apiBytes("q/") && prefix.upper == apiBytes("q0"))
        try Self.put(store, "r/2", "outside")
        try Self.put(store, "q/3", "v")  // inside the prefix, outside `bounded`
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.resolve(prefix).map(\.key) == ["q/1", "q/2", "q/3"].map(apiBytes))
            #expect(try tx.changedSince(prefix))
            #expect(try tx.changedSince(bounded) == false)
            #expect(try tx.resolve(bounded).map(\.key) == [apiBytes("q/2")])
        }
        let added = try store.read { tx in try tx.reference(prefix: apiBytes("q/")) }
        try Self.put(store, "q/4", "new")
        #expect(try store.read { try $0.changedSince(added) })
        let removed = try store.read { tx in try tx.reference(prefix: apiBytes("q/")) }
        try Self.delete(store, "q/1")
        #expect(try store.read { try $0.changedSince(removed) })
        try store.close()
    }

    @Test("a removal is found after compaction dropped its tombstone, and an untouched key stays unchanged")
    func compactionKeepsWhatReferencesNeed() throws {
        let store = try Self.open()
        for i in 0..<20 { try Self.put(store, "k\(i)", "v\(i)") }
        try store.compact()
        let present = try store.read { tx in try tx.reference(apiBytes("k3")) }
        let untouched = try store.read { tx in try tx.reference(apiBytes("k4")) }
        let absent = try store.read { tx in try tx.reference(apiBytes("never")) }
        let range = try store.read { tx in try tx.reference(prefix: apiBytes("k1")) }
        try store.compact()
        try store.read { (tx: ReadTransaction) throws in
            for ref in [present, untouched, absent] { #expect(try tx.changedSince(ref) == false, "\(ref)") }
            #expect(try tx.changedSince(range) == false)
        }
        try Self.delete(store, "k3")
        try Self.delete(store, "k12")
        try store.compact()  // both tombstones reach the bottom level and are dropped
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.changedSince(present), "k3 existed at the reference and has no entry now: deleted since")
            #expect(try tx.changedSince(untouched) == false, "k4 kept its entry, with the sequence of its last write")
            #expect(try tx.changedSince(range), "k12 left the range")
            // The documented conservative case: an absent key, absent now, after a dropped
            // deletion newer than the reference.
            #expect(try tx.changedSince(absent))
        }
        // References taken after the drop are exact again.
        let later = try store.read { tx in try tx.reference(apiBytes("never")) }
        try Self.put(store, "k5", "again")
        try store.compact()
        #expect(try store.read { try $0.changedSince(later) } == false)
        try store.close()
    }

    @Test("references survive a reopen, and the store's identity is kept in its manifest")
    func acrossReopen() throws {
        let fileSystem = SimulatedFileSystem()
        var store = try Self.open(fileSystem)
        try Self.put(store, "a", "1")
        let ref = try store.read { tx in try tx.reference(apiBytes("a")) }
        try store.close()
        store = try Self.open(fileSystem)
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.resolve(ref) == apiBytes("1"))
            #expect(try tx.changedSince(ref) == false)
        }
        try Self.put(store, "a", "2")
        #expect(try store.read { try $0.changedSince(ref) })
        try store.close()
    }

    @Test("a reference from another store is refused with .invalidArgument")
    func otherStore() throws {
        let first = try Self.open()
        let second = try Self.open()
        let ref = try first.read { tx in try tx.reference(apiBytes("a")) }
        let query = try first.read { tx in try tx.reference(prefix: apiBytes("a")) }
        try second.read { (tx: ReadTransaction) throws in
            for attempt in [{ _ = try tx.resolve(ref) }, { _ = try tx.changedSince(ref) }, { _ = try tx.resolve(query) }, { try tx.require(unchanged: query) }]
            {
                let error = try #require(throws: StoreError.self) { try attempt() }
                #expect(error.code == .invalidArgument)
            }
        }
        #expect(ref.storeID != (try second.read { tx in try tx.reference(apiBytes("a")) }).storeID)
        try first.close()
        try second.close()
    }

    @Test("references are Codable, Hashable and Sendable values")
    func values() throws {
        let store = try Self.open()
        try Self.put(store, "a", "1")
        let ref = try store.read { tx in try tx.reference(apiBytes("a")) }
        let query = try store.read { tx in try tx.reference(from: apiBytes("a"), to: nil) }
        let decoded = try JSONDecoder().decode(KeyReference.self, from: try JSONEncoder().encode(ref))
        let decodedQuery = try JSONDecoder().decode(QueryReference.self, from: try JSONEncoder().encode(query))
        #expect(decoded == ref && decodedQuery == query)
        #expect(Set([ref, decoded]).count == 1)
        let handedOver = Task.detached { ref }
        _ = handedOver
        try Self.put(store, "a", "2")
        #expect(try store.read { try $0.changedSince(decoded) })
        #expect(try store.read { try $0.changedSince(decodedQuery) })
        try store.close()
    }

    @Test("in a write transaction: references see the committed data, resolve sees the transaction's own writes")
    func inWriteTransaction() throws {
        let store = try Self.open()
        try Self.put(store, "a", "1")
        let ref = try store.read { tx in try tx.reference(apiBytes("a")) }
        try store.write { (tx: WriteTransaction) throws in
            try tx.put(apiBytes("a"), apiBytes("mine"))
            #expect(try tx.resolve(ref) == apiBytes("mine"))
            #expect(try tx.changedSince(ref) == false, "a transaction's own writes are not commits")
            let inside = try tx.reference(apiBytes("a"))
            #expect(inside.version == tx.version)
        }
        #expect(try store.read { try $0.changedSince(ref) })
        try store.close()
    }

    @Test("a snapshot older than the reference sees no change after it")
    func olderSnapshot() throws {
        let store = try Self.open()
        try Self.put(store, "a", "1")
        let old = store.snapshot()
        try Self.put(store, "a", "2")
        let ref = try store.read { tx in try tx.reference(apiBytes("a")) }
        try Self.put(store, "a", "3")
        #expect(try old.read { try $0.changedSince(ref) } == false)
        #expect(try store.read { try $0.changedSince(ref) })
        old.close()
        try store.close()
    }

    @Test("as StoreIO primitives: a failed require(unchanged:) applies nothing of the composition")
    func storeIOPrimitives() throws {
        let store = try Self.open()
        try Self.put(store, "a", "1")
        let ref = try store.run(StoreIO<ReadOnly, KeyReference>.reference(apiBytes("a")))
        let query = try store.run(StoreIO<ReadOnly, QueryReference>.reference(prefix: apiBytes("a")))
        let edit: StoreIO<ReadWrite, Void> = StoreIO<ReadWrite, Void>.put(apiBytes("log"), apiBytes("edited"))
            .flatMap { .require(unchanged: ref) }
            .flatMap { StoreIO<ReadOnly, [UInt8]?>.resolve(ref) }
            .flatMap { old in .put(apiBytes("a"), (old ?? []) + apiBytes("+")) }
        try store.run(edit)
        #expect(try store.run(.get(apiBytes("a"))) == apiBytes("1+"))
        #expect(try store.run(StoreIO<ReadOnly, Bool>.changedSince(query)))
        let error = try #require(throws: StoreError.self) { try store.run(edit) }
        #expect(error.code == .conflict)
        #expect(try store.run(.get(apiBytes("a"))) == apiBytes("1+"))
        #expect(try store.run(StoreIO<ReadOnly, [Entry]>.resolve(query)).count == 1)
        try store.close()
    }

    @Test("a store from before identities were recorded gets one at its first open, and keeps it")
    func storeWithoutIdentity() async throws {
        try await TestEnvironment.withTemporaryDirectory("reference-fixture") { directory in
            let copy = directory + "/store"
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures/stores/clean")
            try FileManager.default.copyItem(atPath: fixture.path, toPath: copy)
            var store = try Store(path: copy)
            let ref = try Self.referenceSync(store)
            try store.close()
            store = try Store(path: copy)
            #expect(try Self.changedSync(store, ref) == false)
            try store.close()
        }
    }

    private static func referenceSync(_ store: Store) throws -> KeyReference {
        try store.read { tx in try tx.reference(apiBytes("k")) }
    }

    private static func changedSync(_ store: Store, _ ref: KeyReference) throws -> Bool {
        try store.read { tx in try tx.changedSince(ref) }
    }
}
