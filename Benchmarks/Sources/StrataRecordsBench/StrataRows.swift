// Strata's rows: puts and gets through RecordCollection, and the same data through the byte
// API (tx.put / tx.get) with the collection's own bytes, hand-packed bytes, JSON or a binary
// property list as the value. Every store is its own directory under `root`.
import Dispatch
import Foundation
import Strata
import StrataRecords

struct StrataRows {
    let root: String
    let people: [Person]
    let collection = RecordCollection<Person>("person")

    /// `(person, 0)`: where the collection keeps its records, and where the raw rows put theirs.
    static let recordPrefix = KeyTuple([.string("person"), .int(0)]).bytes

    /// The key the collection gives record `id`, `(person, 0, id)`, built as the collection
    /// builds it and as a byte-API user would: a constant prefix and the id's key tuple.
    static func key(_ id: Int) -> [UInt8] {
        recordPrefix + KeyTuple([.int(Int64(id))]).bytes
    }

    func open(_ name: String) throws -> Store {
        var options = StoreOptions()
        options.durability = .buffered
        options.logger.logLevel = .critical
        return try Store(path: (root as NSString).appendingPathComponent(name), options: options)
    }

    // MARK: Puts

    /// Seconds to put records `0..<count`, `batch` per `.buffered` transaction, with one
    /// `sync()` at the end (timed, as strata-bench's fills time theirs). The store is closed
    /// after a check, untimed, that it holds `count` records.
    func fill(_ name: String, count: Int, batch: Int, _ body: (WriteTransaction, Int) throws -> Void) throws -> Double {
        sync()
        let store = try open(name)
        let start = DispatchTime.now().uptimeNanoseconds
        var next = 0
        while next < count {
            let end = min(next + batch, count)
            try store.write(durability: .buffered) { tx in
                for i in next..<end { try body(tx, i) }
            }
            next = end
        }
        try store.sync()
        let seconds = elapsed(since: start)
        let stored = try store.read { tx in try Self.countRecords(tx) }
        try store.close()
        guard stored == count else { throw WrongAnswer("store \(name) holds \(stored) records after putting \(count)") }
        return seconds
    }

    func putTyped(_ name: String, count: Int, batch: Int) throws -> Double {
        try fill(name, count: count, batch: batch) { tx, i in try collection.put(people[i], in: tx) }
    }

    /// Puts keys and values made before the clock started: the store's share of a put.
    func putPrepared(_ name: String, _ pairs: [(key: [UInt8], value: [UInt8])], batch: Int) throws -> Double {
        try fill(name, count: pairs.count, batch: batch) { tx, i in try tx.put(pairs[i].key, pairs[i].value) }
    }

    /// Builds each key inside the clock and puts a value made before it: the key's share.
    func putKeyed(_ name: String, _ values: [[UInt8]], batch: Int) throws -> Double {
        try fill(name, count: values.count, batch: batch) { tx, i in try tx.put(Self.key(i), values[i]) }
    }

    /// Builds each key and encodes each value inside the clock, as app code on the byte API does.
    func putEncoded(_ name: String, count: Int, batch: Int, _ encode: (Person) throws -> [UInt8]) throws -> Double {
        try fill(name, count: count, batch: batch) { tx, i in
            let person = people[i]
            try tx.put(Self.key(person.id), encode(person))
        }
    }

    /// The typed store's records as stored (keys and values in id order), and a check that
    /// each key is the one `key(_:)` builds.
    func storedPairs(_ name: String) throws -> [(key: [UInt8], value: [UInt8])] {
        let store = try open(name)
        defer { try? store.close() }
        let pairs = try store.read { tx in
            try tx.scan(prefix: Self.recordPrefix).map { (key: $0.key, value: $0.value) }
        }
        guard pairs.count == people.count else { throw WrongAnswer("the typed store holds \(pairs.count) records") }
        for (id, pair) in pairs.enumerated() where pair.key != Self.key(id) {
            throw WrongAnswer("record \(id) is stored under \(pair.key), not under the key the raw rows build")
        }
        return pairs
    }

    // MARK: Gets

    /// Seconds for one `store.read` per id of `ids`, on the store reopened. `body` gets the
    /// transaction and the index into `ids`, reads, and says whether the answer was right.
    func gets(_ name: String, _ ids: [Int], _ body: (ReadTransaction, Int) throws -> Bool) throws -> Double {
        let store = try open(name)
        defer { try? store.close() }
        var wrong = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for index in ids.indices {
            if try !store.read({ tx in try body(tx, index) }) { wrong += 1 }
        }
        let seconds = elapsed(since: start)
        guard wrong == 0 else { throw WrongAnswer("\(wrong) of \(ids.count) gets on store \(name) gave a wrong or no answer") }
        return seconds
    }

    func getTyped(_ name: String, _ ids: [Int]) throws -> Double {
        try gets(name, ids) { tx, index in
            let id = ids[index]
            return try collection.get(id, in: tx) == people[id]
        }
    }

    /// Gets with keys made before the clock, keeping the bytes: the store's share of a get.
    func getBytes(_ name: String, _ ids: [Int], keys: [[UInt8]], expectedLengths: [Int]) throws -> Double {
        try gets(name, ids) { tx, index in
            try tx.get(keys[index])?.count == expectedLengths[ids[index]]
        }
    }

    /// Builds each key inside the clock, keeping the bytes.
    func getKeyedBytes(_ name: String, _ ids: [Int], expectedLengths: [Int]) throws -> Double {
        try gets(name, ids) { tx, index in
            let id = ids[index]
            return try tx.get(Self.key(id))?.count == expectedLengths[id]
        }
    }

    /// Builds each key and decodes each value inside the clock.
    func getDecoded(_ name: String, _ ids: [Int], _ decode: ([UInt8], Int) throws -> Person?) throws -> Double {
        try gets(name, ids) { tx, index in
            let id = ids[index]
            guard let bytes = try tx.get(Self.key(id)) else { return false }
            return try decode(bytes, id) == people[id]
        }
    }

    static func countRecords(_ tx: ReadTransaction) throws -> Int {
        var count = 0
        try tx.forEachUnsafe(from: recordPrefix, to: recordPrefix + [0xFF]) { _, _ in
            count += 1
            return true
        }
        return count
    }
}

struct WrongAnswer: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = "wrong answer: " + description
    }
}

func elapsed(since start: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
