import Foundation
import Strata
import StrataRecords
import StrataTestSupport
import Testing

// A record write that throws changes nothing: not the record, not one of its index entries,
// whether the caller catches the error and commits the rest of the transaction or lets it
// abort the transaction. One test per way a record write can fail, each comparing every key
// of the collection (records and index entries) before and after.

private struct Message: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var thread: String
    var body: String
    var tag: String
    /// When set, `encode(to:)` throws: an app's own `Codable` conformance failing.
    var failEncoding = false

    struct EncodingRefused: Error {}

    enum CodingKeys: String, CodingKey { case id, thread, body, tag }

    init(id: Int, thread: String, body: String = "hello", tag: String, failEncoding: Bool = false) {
        self.id = id
        self.thread = thread
        self.body = body
        self.tag = tag
        self.failEncoding = failEncoding
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        thread = try container.decode(String.self, forKey: .thread)
        body = try container.decode(String.self, forKey: .body)
        tag = try container.decode(String.self, forKey: .tag)
    }

    func encode(to encoder: any Encoder) throws {
        if failEncoding { throw EncodingRefused() }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(thread, forKey: .thread)
        try container.encode(body, forKey: .body)
        try container.encode(tag, forKey: .tag)
    }
}

/// An index key function may refuse a record.
private struct TagRefused: Error {}

private let byThread = RecordIndex<Message>("thread") { [$0.thread] }
private let byTag = RecordIndex<Message>("tag", unique: true) { message in
    if message.tag == "refused" { throw TagRefused() }
    return [message.tag]
}
private let messages = RecordCollection<Message>("messages", indexes: [byThread, byTag])

private let oversizedBody = String(repeating: "b", count: StoreLimits.maxValueBytes + 1)
private let oversizedThread = String(repeating: "t", count: StoreLimits.maxKeyBytes + 1)

/// Every key and value the collection owns: its records and its index entries.
private func collectionKeys(_ store: Store) throws -> [Entry] {
    let prefix = KeyTuple([.string(messages.name)]).bytes
    return try store.read { tx in Array(try tx.scan(prefix: prefix)) }
}

/// A store holding messages 1 (thread a, tag x) and 2 (thread b, tag y).
private func withMessages(_ body: (Store) throws -> Void) throws {
    let directory = try TemporaryDirectory(label: "refused-record-writes")
    defer { directory.remove() }
    let store = try Store(path: directory.path("store"))
    defer { try? store.close() }
    try store.write { tx in
        try messages.insert(Message(id: 1, thread: "a", tag: "x"), in: tx)
        try messages.insert(Message(id: 2, thread: "b", tag: "y"), in: tx)
    }
    try body(store)
}

/// Each failing write, by name, and what it throws.
private let failingWrites: [(name: String, write: @Sendable (WriteTransaction) throws -> Void)] = [
    ("put over the value limit", { tx in try messages.put(Message(id: 3, thread: "a", body: oversizedBody, tag: "z"), in: tx) }),
    ("insert over the value limit", { tx in try messages.insert(Message(id: 3, thread: "a", body: oversizedBody, tag: "z"), in: tx) }),
    ("update over the value limit", { tx in try messages.update(Message(id: 1, thread: "c", body: oversizedBody, tag: "w"), in: tx) }),
    ("put with an index key over the key limit", { tx in try messages.put(Message(id: 3, thread: oversizedThread, tag: "z"), in: tx) }),
    ("update with an index key over the key limit", { tx in try messages.update(Message(id: 1, thread: oversizedThread, tag: "w"), in: tx) }),
    ("put clashing in a unique index", { tx in try messages.put(Message(id: 3, thread: "c", tag: "y"), in: tx) }),
    ("update clashing in a unique index", { tx in try messages.update(Message(id: 1, thread: "c", tag: "y"), in: tx) }),
    ("insert of an existing identifier", { tx in try messages.insert(Message(id: 1, thread: "c", tag: "w"), in: tx) }),
    ("update of a missing identifier", { tx in try messages.update(Message(id: 9, thread: "c", tag: "w"), in: tx) }),
    ("put whose encode(to:) throws", { tx in try messages.put(Message(id: 1, thread: "c", tag: "w", failEncoding: true), in: tx) }),
    ("put whose index key function throws", { tx in try messages.put(Message(id: 3, thread: "c", tag: "refused"), in: tx) }),
    ("update whose index key function throws", { tx in try messages.update(Message(id: 2, thread: "c", tag: "refused"), in: tx) }),
    ("StoreIO put over the value limit", { tx in try tx.run(messages.put(Message(id: 1, thread: "c", body: oversizedBody, tag: "w"))) })
]

@Suite struct RefusedRecordWriteTests {
    @Test("a refused write caught inside the transaction leaves the record and its index entries as they were", arguments: failingWrites.indices)
    func caughtAndCommitted(_ position: Int) throws {
        let (name, failingWrite) = failingWrites[position]
        try withMessages { store in
            let before = try collectionKeys(store)
            let threw = try store.write { tx -> Bool in
                do {
                    try failingWrite(tx)
                    return false
                } catch {
                    return true
                }
            }
            #expect(threw, "\(name) did not throw")
            #expect(try collectionKeys(store) == before, "\(name) changed the collection's keys")
            try store.read { (tx: ReadTransaction) throws in
                #expect(try messages.find(byThread, equalTo: ["a"], in: tx).map(\.id) == [1], "\(name)")
                #expect(try messages.find(byThread, equalTo: ["b"], in: tx).map(\.id) == [2], "\(name)")
                #expect(try messages.find(byTag, equalTo: ["x"], in: tx).map(\.id) == [1], "\(name)")
                #expect(try messages.find(byTag, equalTo: ["y"], in: tx).map(\.id) == [2], "\(name)")
                #expect(try messages.find(byThread, equalTo: ["c"], in: tx).isEmpty, "\(name)")
            }
        }
    }

    @Test("writes before and after a caught refusal commit; the refused one does not", arguments: failingWrites.indices)
    func neighboursCommit(_ position: Int) throws {
        let (name, failingWrite) = failingWrites[position]
        try withMessages { store in
            try store.write { tx in
                try messages.put(Message(id: 4, thread: "a", tag: "before"), in: tx)
                _ = try? failingWrite(tx)
                try messages.put(Message(id: 5, thread: "b", tag: "after"), in: tx)
            }
            try store.read { (tx: ReadTransaction) throws in
                #expect(try messages.find(byThread, equalTo: ["a"], in: tx).map(\.id) == [1, 4], "\(name)")
                #expect(try messages.find(byThread, equalTo: ["b"], in: tx).map(\.id) == [2, 5], "\(name)")
                #expect(try messages.scan(in: tx).map(\.id) == [1, 2, 4, 5], "\(name)")
                #expect(try messages.get(1, in: tx) == Message(id: 1, thread: "a", tag: "x"), "\(name)")
            }
        }
    }

    @Test("a refused write that is not caught aborts the transaction", arguments: failingWrites.indices)
    func uncaughtAborts(_ position: Int) throws {
        let (name, failingWrite) = failingWrites[position]
        try withMessages { store in
            let before = try collectionKeys(store)
            let version = store.version
            #expect(throws: (any Error).self, "\(name)") {
                try store.write { tx in
                    try messages.put(Message(id: 4, thread: "a", tag: "before"), in: tx)
                    try failingWrite(tx)
                }
            }
            #expect(store.version == version)
            #expect(try collectionKeys(store) == before, "\(name)")
        }
    }

    @Test("the errors are the documented ones")
    func errorKinds() throws {
        try withMessages { store in
            try store.write { tx in
                let oversized = Message(id: 3, thread: "a", body: oversizedBody, tag: "z")
                #expect(throws: StoreError.self) { try messages.put(oversized, in: tx) }
                #expect(throws: TagRefused.self) { try messages.put(Message(id: 3, thread: "a", tag: "refused"), in: tx) }
                do {
                    try messages.put(Message(id: 3, thread: "a", tag: "z", failEncoding: true), in: tx)
                    Issue.record("a throwing encode(to:) was written")
                } catch let error as RecordError {
                    #expect(error.code == .encoding)
                }
                do {
                    try messages.put(Message(id: 3, thread: "a", tag: "y"), in: tx)
                    Issue.record("a unique clash was written")
                } catch let error as RecordError {
                    #expect(error.code == .uniqueViolation)
                }
                do {
                    try messages.put(Message(id: 3, thread: oversizedThread, tag: "z"), in: tx)
                    Issue.record("an oversized index key was written")
                } catch let error as StoreError {
                    #expect(error.code == .invalidArgument)
                }
            }
        }
    }

    @Test("a delete whose index key function throws deletes nothing")
    func refusedDelete() throws {
        // A collection whose key function refuses records stored before it changed: a delete
        // must leave the record and its entries in place.
        let strict = RecordCollection<Message>(
            "messages",
            indexes: [
                byThread,
                RecordIndex<Message>("tag", unique: true) { message in
                    if message.tag == "x" { throw TagRefused() }
                    return [message.tag]
                }
            ])
        try withMessages { store in
            let before = try collectionKeys(store)
            try store.write { tx in
                _ = #expect(throws: TagRefused.self) { try strict.delete(1, in: tx) }
            }
            #expect(try collectionKeys(store) == before)
        }
    }

    @Test("rebuildIndexes that meets a unique clash leaves the old entries")
    func refusedRebuild() throws {
        let sharedTag = RecordCollection<Message>("messages", indexes: [byThread, RecordIndex<Message>("tag", unique: true) { _ in ["same"] }])
        try withMessages { store in
            let before = try collectionKeys(store)
            try store.write { tx in
                _ = #expect(throws: RecordError.self) { try sharedTag.rebuildIndexes(in: tx) }
            }
            #expect(try collectionKeys(store) == before)
        }
    }
}
