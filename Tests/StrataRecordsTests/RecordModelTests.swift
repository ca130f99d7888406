import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataRecords

// Model test of a record collection with three indexes (one unique, two composite with
// descending elements): random puts, inserts, updates and deletes, alone, several in one
// transaction, or composed as StoreIO operations with a throwing step; with flushes (a small
// memtable and large records), compactions, index rebuilds, and close-and-reopen; on the
// simulated and the real file system. A plain dictionary of records is the model: after
// every few steps every record, the count, identifier scans, and every index query (by
// equality and by range, both directions, with limits) must equal the model's answer,
// computed independently by sorting the records on their index keys in value order, and
// every index must hold exactly one entry per record, under exactly the documented key
// (docs/format/records.md). Writes that must fail (a duplicate identifier, a missing one, a
// unique key another record holds, a record over the value limit, a message id over the key
// limit, a record whose `encode(to:)` throws, an index key function that throws, an app's own
// error thrown mid-transaction) must throw the right error and change nothing, whether the
// transaction catches it and commits the rest or lets it abort. After every step the stored
// records and every index entry are compared with the model; every few steps, every query
// too. Suspensions (a call refused with `.suspended`, then a resume) and reopens come between.
// Replay a failure with STRATA_SEED=<seed>; run ten times longer with STRATA_LONG_TESTS=1.

private struct Mail: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var folder: String
    var received: Date
    var priority: Int
    var messageID: String
    var note: String?
    /// Padding, so that records fill the small memtable and get flushed.
    var body: String
    /// Set on a record the app's `Codable` conformance refuses: its `encode(to:)` throws.
    var poison: Poison? = nil
}

/// A field whose encoding always fails, as an app's own `encode(to:)` may.
private struct Poison: Codable, Sendable, Equatable {
    struct Refused: Error {}
    func encode(to encoder: any Encoder) throws { throw Refused() }
}

/// What the flag index's key function throws for a record it refuses.
private struct IndexKeyRefused: Error {}

private enum MailStore {
    static let byMessageID = RecordIndex<Mail>("message-id", unique: true) { [$0.messageID] }
    static let byFolder = RecordIndex<Mail>("folder-received") { [$0.folder, $0.received.descending] }
    /// Refuses priority 13: an index key function that throws.
    static let refusedPriority = 13
    static let byFlag = RecordIndex<Mail>("flag-priority") { mail in
        if mail.priority == refusedPriority { throw IndexKeyRefused() }
        return [mail.note != nil, mail.priority.descending, mail.folder]
    }
    static let mail = RecordCollection<Mail>("mail", indexes: [byMessageID, byFolder, byFlag])

    /// The indexes as the model sees them: their keys written out again here, as elements,
    /// rather than taken from the index's key function.
    static let modelIndexes: [ModelIndex] = [
        ModelIndex(index: byMessageID) { [.string($0.messageID)] },
        ModelIndex(index: byFolder) { [.string($0.folder), .descending(.date($0.received))] },
        ModelIndex(index: byFlag) { [.bool($0.note != nil), .descending(.int(Int64($0.priority))), .string($0.folder)] }
    ]
}

private struct ModelIndex: Sendable {
    let index: RecordIndex<Mail>
    let key: @Sendable (Mail) -> [KeyElement]

    var name: String { index.name }
    var isUnique: Bool { index.isUnique }

    /// The record's position in the index: its key, then, in an ordinary index, its id.
    func entry(_ mail: Mail) -> [KeyElement] {
        isUnique ? key(mail) : key(mail) + [.int(Int64(mail.id))]
    }

    /// The stored key of the record's entry, as records.md specifies it.
    func storedKey(_ mail: Mail) -> [UInt8] {
        KeyTuple([.string(MailStore.mail.name), .int(1), .string(name)] + entry(mail)).bytes
    }

    var storedPrefix: [UInt8] { KeyTuple([.string(MailStore.mail.name), .int(1), .string(name)]).bytes }

    /// The model's records in index order.
    func ordered(_ records: [Int: Mail]) -> [Mail] {
        records.values.sorted { KeyElement.tuple(entry($0)) < KeyElement.tuple(entry($1)) }
    }
}

/// A write, as the model and the collection each carry it out.
private enum Operation: CustomStringConvertible {
    case put(Mail)
    case insert(Mail)
    case update(Mail)
    case delete(Int)
    /// Reads the record and updates it with another folder; nothing when it is missing.
    case move(Int, folder: String)
    /// A step that throws `CompositionFailure(token)`.
    case fail(Int)

    var description: String {
        func short(_ mail: Mail) -> String {
            "#\(mail.id) \(mail.folder.debugDescription) \(mail.received.timeIntervalSinceReferenceDate) p\(mail.priority) "
                + "\(mail.messageID.debugDescription) note \(mail.note?.debugDescription ?? "nil") body \(mail.body.count)"
        }
        switch self {
        case .put(let mail): return "put(\(short(mail)))"
        case .insert(let mail): return "insert(\(short(mail)))"
        case .update(let mail): return "update(\(short(mail)))"
        case .delete(let id): return "delete(#\(id))"
        case .move(let id, let folder): return "move(#\(id) to \(folder.debugDescription))"
        case .fail(let token): return "throw \(token)"
        }
    }

    var id: Int? {
        switch self {
        case .put(let mail), .insert(let mail), .update(let mail): mail.id
        case .delete(let id), .move(let id, _): id
        case .fail: nil
        }
    }

    /// Carries the operation out in an open transaction.
    func apply(in tx: WriteTransaction) throws -> Bool? {
        let mail = MailStore.mail
        switch self {
        case .put(let record): try mail.put(record, in: tx)
        case .insert(let record): try mail.insert(record, in: tx)
        case .update(let record): try mail.update(record, in: tx)
        case .delete(let id): return try mail.delete(id, in: tx)
        case .move(let id, let folder):
            guard var record = try mail.get(id, in: tx) else { return nil }
            record.folder = folder
            try mail.update(record, in: tx)
        case .fail(let token): throw CompositionFailure(token: token)
        }
        return nil
    }

    /// The operation as a `StoreIO`, built from the collection's `StoreIO` forms.
    var io: StoreIO<ReadWrite, Bool?> {
        let mail = MailStore.mail
        switch self {
        case .put(let record): return mail.put(record).map { _ in nil }
        case .insert(let record): return mail.insert(record).map { _ in nil }
        case .update(let record): return mail.update(record).map { _ in nil }
        case .delete(let id): return mail.delete(id).map { deleted in deleted }
        case .move(let id, let folder):
            return mail.get(id).flatMap { record -> StoreIO<ReadWrite, Bool?> in
                guard var record else { return .just(nil) }
                record.folder = folder
                return mail.update(record).map { _ in nil }
            }
        case .fail(let token):
            return .write { _ in throw CompositionFailure(token: token) }
        }
    }
}

private struct CompositionFailure: Error {
    let token: Int
}

/// What an operation did, or should do: a value, or an error described as
/// `record:<code>` or `thrown:<token>`.
private enum Outcome: Equatable, CustomStringConvertible {
    case value(Bool?)
    case failure(String)

    init(_ body: () throws -> Bool?) throws {
        do {
            self = .value(try body())
        } catch {
            guard let failure = Self.failure(error) else { throw error }
            self = failure
        }
    }

    /// The failure an error stands for, nil for one no operation throws.
    static func failure(_ error: any Error) -> Outcome? {
        switch error {
        case let error as RecordError: .failure("record:\(error.code)")
        case let error as CompositionFailure: .failure("thrown:\(error.token)")
        case let error as StoreError: .failure("store:\(error.code)")
        case is IndexKeyRefused: .failure("thrown:index")
        default: nil
        }
    }

    var description: String {
        switch self {
        case .value(let value): "value(\(value.map(String.init) ?? "nil"))"
        case .failure(let what): what
        }
    }
}

/// The model: the records by id, and what each operation should do to them.
private struct MailModel {
    var records: [Int: Mail] = [:]

    /// Applies `operation` when it should succeed; returns the outcomes allowed (more than
    /// one when an operation breaks two rules and either error is right).
    mutating func apply(_ operation: Operation) -> [Outcome] {
        func holdsMessageID(of mail: Mail) -> Bool {
            // `==` on strings is canonical equivalence, as equality of key elements is.
            records.values.contains { $0.id != mail.id && $0.messageID == mail.messageID }
        }
        func write(_ mail: Mail, existing: Bool?) -> [Outcome] {
            var errors: [Outcome] = []
            if existing == true, records[mail.id] == nil { errors.append(.failure("record:notFound")) }
            if existing == false, records[mail.id] != nil { errors.append(.failure("record:duplicateID")) }
            if holdsMessageID(of: mail) { errors.append(.failure("record:uniqueViolation")) }
            if mail.poison != nil { errors.append(.failure("record:encoding")) }
            if mail.body.utf8.count >= StoreLimits.maxValueBytes || mail.messageID.utf8.count >= StoreLimits.maxKeyBytes {
                errors.append(.failure("store:invalidArgument"))
            }
            if mail.priority == MailStore.refusedPriority { errors.append(.failure("thrown:index")) }
            guard errors.isEmpty else { return errors }
            records[mail.id] = mail
            return [.value(nil)]
        }
        switch operation {
        case .put(let mail): return write(mail, existing: nil)
        case .insert(let mail): return write(mail, existing: false)
        case .update(let mail): return write(mail, existing: true)
        case .delete(let id): return [.value(records.removeValue(forKey: id) != nil)]
        case .move(let id, let folder):
            guard var mail = records[id] else { return [.value(nil)] }
            mail.folder = folder
            records[id] = mail
            return [.value(nil)]
        case .fail(let token): return [.failure("thrown:\(token)")]
        }
    }
}

/// How much a run did, for its summary line and to check that it did enough.
private struct Tally {
    var steps = 0
    var writes = 0
    var refused = 0
    var compositions = 0
    var abortedCompositions = 0
    var checks = 0
    var queries = 0
    var flushes = 0
    var compactions = 0
    var reopens = 0
    var rebuilds = 0
    var suspensions = 0
    var nonEmptyQueries = 0
    /// Failures injected, by what refused them (`record:encoding`, `store:invalidArgument`,
    /// `thrown:index`, `thrown:<token>` as "app error", ...), and how many were caught inside
    /// the transaction that went on to commit.
    var refusedBy: [String: Int] = [:]
    var caughtInsideTransaction = 0
    var uncaught = 0
    var entryChecks = 0

    mutating func refused(_ outcome: Outcome, caught: Bool) {
        guard case .failure(let what) = outcome else { return }
        refused += 1
        refusedBy[what.hasPrefix("thrown:") && what != "thrown:index" ? "app error" : what, default: 0] += 1
        if caught { caughtInsideTransaction += 1 } else { uncaught += 1 }
    }
    var checkSeconds = 0.0
}

@Suite("Record collection against a model")
struct RecordModelTests {
    @Test("simulated file system")
    func simulated() throws {
        let seed = TestSeeds.seed(0x5EED_4D01, test: "RecordModelTests.simulated")
        try ModelRun(seed: seed, path: "/db", fileSystem: SimulatedFileSystem()).run()
    }

    @Test("real file system")
    func real() throws {
        let seed = TestSeeds.seed(0x5EED_4D02, test: "RecordModelTests.real")
        let directory = try TemporaryDirectory(label: "record-model")
        defer { directory.remove() }
        try ModelRun(seed: seed, path: directory.path("store"), fileSystem: POSIXFileSystem()).run()
    }

    /// `limit` means the same for every query: at most that many records, none for zero.
    @Test func limitsAreTheSameForScanAndFind() throws {
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem()
        let store = try Store(path: "/db", options: options)
        let mail = MailStore.mail
        try store.write { tx in
            for id in 0..<3 {
                try mail.put(
                    Mail(
                        id: id, folder: "inbox", received: Date(timeIntervalSinceReferenceDate: 0), priority: 1, messageID: "m\(id)", note: nil,
                        body: ""), in: tx)
            }
        }
        try store.read { (tx: ReadTransaction) throws in
            for limit in 0...4 {
                let expected = min(limit, 3)
                #expect(try mail.scan(in: tx, limit: limit).count == expected, "scan, limit \(limit)")
                #expect(try mail.scan(in: tx, reverse: true, limit: limit).count == expected, "reverse scan, limit \(limit)")
                #expect(try mail.find(MailStore.byFolder, equalTo: ["inbox"], in: tx, limit: limit).count == expected, "find, limit \(limit)")
                #expect(
                    try mail.find(MailStore.byMessageID, from: [], to: nil, in: tx, reverse: true, limit: limit).count == expected,
                    "find range, limit \(limit)")
            }
        }
        #expect(try store.run(mail.find(MailStore.byFolder, equalTo: ["inbox"], limit: 0)).isEmpty)
        try store.close()
    }
}

/// One seeded run against one store.
private struct ModelRun {
    let seed: UInt64
    let path: String
    let fileSystem: any FileSystem

    static let ids = 0..<40
    static let folders = ["inbox", "archive", "", "in\0box", "\u{E9}t\u{E9}", "e\u{301}te\u{301}", "zz"]
    static let times: [Double] = [-86_400.5, -1, -0.0, 0, 1e-3, 1, 7e8, 7e8 + 0.25, 1e9]
    static let messageIDs = (0..<60).map { "m\($0)" } + ["m\u{E9}", "me\u{301}"]
    static let notes: [String?] = [nil, nil, nil, "", "x", "\0", "a longer note"]

    private var options: StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.memtableBytes = 64 << 10  // the minimum: with records up to 1.5 KB, a flush every few dozen writes
        options.segmentFileBytes = 64 << 10
        options.level0CompactionTrigger = 2
        options.runsBackgroundWorkInline = true
        options.durability = .buffered
        return options
    }

    func run() throws {
        var random = SeededRandom(seed: seed)
        var store = try Store(path: path, options: options)
        var model = MailModel()
        var tally = Tally()
        var issues = 0
        let steps = TestSeeds.scaled(1_000)
        let started = Date()

        func fail(_ step: Int, _ message: String) {
            // The first few say what went wrong; the rest would repeat it.
            guard issues < 10 else { return }
            issues += 1
            Issue.record("seed \(seed) (replay with STRATA_SEED=\(seed)) step \(step): \(message)")
        }

        for step in 0..<steps where issues < 5 {
            tally.steps += 1
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<35:
                // One operation, its own transaction: a refused write aborts it.
                let operation = randomOperation(model, &random)
                var next = model
                let allowed = next.apply(operation)
                let outcome = try Outcome { try store.write { tx in try operation.apply(in: tx) } }
                tally.writes += 1
                if !allowed.contains(outcome) {
                    fail(step, "\(operation): expected \(allowed), got \(outcome)")
                }
                if case .value = outcome { model = next } else { tally.refused(outcome, caught: false) }
            case 35..<65:
                // Several operations in one transaction, each refusal caught there: a refused
                // write must leave the transaction as it was, and the others still commit.
                try severalInOneTransaction(store, &model, &random, &tally) { fail(step, $0) }
            case 65..<85:
                try composition(store, &model, &random, &tally) { fail(step, $0) }
            case 85..<90:
                // Records large enough to fill the memtable, so that it flushes.
                let before = try store.stats().flushes
                try store.write { tx in
                    for _ in 0..<12 {
                        var mail = randomMail(model, &random)
                        mail.body = String(repeating: "f", count: 1_500 + Int.random(in: 0...500, using: &random))
                        var next = model
                        if next.apply(.put(mail)) == [.value(nil)] {
                            try MailStore.mail.put(mail, in: tx)
                            model = next
                            tally.writes += 1
                        }
                    }
                }
                tally.flushes += try store.stats().flushes - before
            case 90..<94:
                try store.compact()
                tally.compactions += 1
            case 94, 95:
                tally.flushes += try store.stats().flushes
                try store.close()
                store = try Store(path: path, options: options)
                tally.reopens += 1
            case 96:
                // Suspended, the store refuses a write with the retryable `.suspended` and
                // applies nothing of it; resumed, it serves what it held.
                try store.suspend()
                let operation = randomOperation(model, &random)
                let outcome = try Outcome { try store.write { tx in try operation.apply(in: tx) } }
                if outcome != .failure("store:suspended") { fail(step, "\(operation) while suspended: \(outcome), expected store:suspended") }
                if try store.resume() != .unchanged { fail(step, "resume after a suspension nobody wrote during did not say .unchanged") }
                tally.suspensions += 1
            default:
                try store.write { tx in try MailStore.mail.rebuildIndexes(in: tx) }
                tally.rebuilds += 1
            }
            try store.read { (tx: ReadTransaction) throws in
                try checkStored(tx, model.records) { fail(step, $0) }
            }
            tally.entryChecks += 1
            if step % 6 == 5 || step == steps - 1 {
                let checkStarted = Date()
                defer { tally.checkSeconds += Date().timeIntervalSince(checkStarted) }
                try store.read { (tx: ReadTransaction) throws in
                    try check(tx, model.records, &random, &tally) { fail(step, $0) }
                }
                try checkThroughStoreIO(store, model.records, &random, &tally) { fail(step, $0) }
            }
        }
        tally.flushes += try store.stats().flushes
        try store.close()
        // After the last close, the store as reopened holds what the model does.
        store = try Store(path: path, options: options)
        try store.read { (tx: ReadTransaction) throws in
            try check(tx, model.records, &random, &tally) { fail(steps, "after the final reopen: " + $0) }
        }
        try store.close()

        print(
            "[RecordModelTests] seed \(seed) \(path.hasPrefix("/db") ? "simulated" : "real"): \(tally.steps) steps, "
                + "\(tally.writes) writes (\(tally.refused) refused), \(tally.compositions) StoreIO compositions "
                + "(\(tally.abortedCompositions) aborted), \(tally.checks) full checks with \(tally.queries) index queries (\(tally.nonEmptyQueries) with records; checks took \(String(format: "%.2f", tally.checkSeconds)) s), "
                + "\(tally.flushes) flushes, \(tally.compactions) compactions, \(tally.reopens) reopens, \(tally.suspensions) suspensions, "
                + "\(tally.rebuilds) rebuilds, \(tally.entryChecks) record-and-entry checks, \(model.records.count) records at the end, "
                + "\(String(format: "%.2f", Date().timeIntervalSince(started))) s; refusals \(tally.refusedBy.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")), "
                + "\(tally.caughtInsideTransaction) caught inside a transaction that committed the rest, \(tally.uncaught) uncaught")
        let kinds = ["record:encoding", "store:invalidArgument", "thrown:index", "app error", "record:uniqueViolation"]
        #expect(
            tally.abortedCompositions > 0 && tally.flushes > 0 && tally.suspensions > 0 && tally.caughtInsideTransaction > 0 && tally.uncaught > 0
                && kinds.allSatisfy { tally.refusedBy[$0, default: 0] > 0 },
            "the run tested too little: \(tally)")
    }

    // MARK: Writing

    private func randomMail(_ model: MailModel, _ random: inout SeededRandom) -> Mail {
        let id = Self.ids.randomElement(using: &random)!
        var mail =
            model.records[id]
            ?? Mail(
                id: id, folder: "inbox", received: Date(timeIntervalSinceReferenceDate: 0), priority: 0,
                messageID: Self.messageIDs.randomElement(using: &random)!, note: nil, body: "")
        // Change a few fields: a record that keeps its message id is not refused for it.
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            switch Int.random(in: 0..<7, using: &random) {
            case 0: mail.folder = Self.folders.randomElement(using: &random)!
            case 1: mail.received = Date(timeIntervalSinceReferenceDate: Self.times.randomElement(using: &random)!)
            case 2:
                mail.priority =
                    Int.random(in: 0..<10, using: &random) == 0 ? [Int.min, Int.max].randomElement(using: &random)! : Int.random(in: -2...3, using: &random)
            case 3: mail.messageID = Self.messageIDs.randomElement(using: &random)!
            case 4: mail.note = Self.notes.randomElement(using: &random)!
            case 5 where Int.random(in: 0..<12, using: &random) == 0:
                // A write that must be refused, and leave everything as it was.
                switch Int.random(in: 0..<10, using: &random) {
                case 0: mail.body = String(repeating: "o", count: StoreLimits.maxValueBytes)  // the record is over the value limit
                case 1...3: mail.messageID = String(repeating: "k", count: StoreLimits.maxKeyBytes)  // its index key is over the key limit
                case 4...6: mail.poison = Poison()
                default: mail.priority = MailStore.refusedPriority
                }
            default:
                let length = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 200...1_500, using: &random) : Int.random(in: 0...20, using: &random)
                mail.body = String(repeating: "b", count: length)
            }
        }
        return mail
    }

    private func randomOperation(_ model: MailModel, _ random: inout SeededRandom) -> Operation {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4: return .put(randomMail(model, &random))
        case 4, 5: return .insert(randomMail(model, &random))
        case 6, 7: return .update(randomMail(model, &random))
        case 8: return .delete(Self.ids.randomElement(using: &random)!)
        default: return .move(Self.ids.randomElement(using: &random)!, folder: Self.folders.randomElement(using: &random)!)
        }
    }

    private func severalInOneTransaction(
        _ store: Store, _ model: inout MailModel, _ random: inout SeededRandom, _ tally: inout Tally, _ fail: (String) -> Void
    ) throws {
        var operations = (0..<Int.random(in: 2...6, using: &random)).map { _ in randomOperation(model, &random) }
        if Int.random(in: 0..<5, using: &random) == 0 {
            // The app's own error, thrown between record writes and caught there.
            operations.insert(.fail(Int.random(in: 0..<1_000, using: &random)), at: Int.random(in: 0...operations.count, using: &random))
        }
        let abort = Int.random(in: 0..<8, using: &random) == 0
        let checkInside = Int.random(in: 0..<4, using: &random) == 0
        var working = model
        var problems: [String] = []
        var localRandom = random
        var localTally = tally
        do {
            try store.write { tx in
                for operation in operations {
                    let allowed = working.apply(operation)
                    let outcome = try Outcome { try operation.apply(in: tx) }
                    localTally.writes += 1
                    if !allowed.contains(outcome) { problems.append("in one transaction, \(operation): expected \(allowed), got \(outcome)") }
                    if case .failure = outcome { localTally.refused(outcome, caught: true) }
                    // Refused or not, the transaction reads what the model holds.
                    if let id = operation.id, try MailStore.mail.get(id, in: tx) != working.records[id] {
                        problems.append("in one transaction, after \(operation): record #\(id) differs from the model")
                    }
                }
                // The indexes agree with the records inside the transaction too.
                if checkInside { try check(tx, working.records, &localRandom, &localTally) { problems.append("inside a transaction: " + $0) } }
                if abort { throw CompositionFailure(token: -1) }
            }
            model = working
        } catch let error as CompositionFailure where error.token == -1 {
            // Nothing of the transaction is applied.
        }
        random = localRandom
        tally = localTally
        for problem in problems { fail(problem + " (operations: \(operations))") }
    }

    private func composition(
        _ store: Store, _ model: inout MailModel, _ random: inout SeededRandom, _ tally: inout Tally, _ fail: (String) -> Void
    ) throws {
        // Mostly operations that succeed one after the other, so that a composition often
        // commits; now and then one that is refused, or a throwing step, late in the
        // composition, after writes that must then be undone.
        var operations: [Operation] = []
        var planned = model
        for _ in 0..<Int.random(in: 2...5, using: &random) {
            var operation = randomOperation(planned, &random)
            for _ in 0..<4 where Int.random(in: 0..<6, using: &random) != 0 {
                var trial = planned
                if case .value = trial.apply(operation)[0] { break }
                operation = randomOperation(planned, &random)
            }
            _ = planned.apply(operation)
            operations.append(operation)
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            operations.insert(.fail(Int.random(in: 0..<1_000, using: &random)), at: Int.random(in: 1...operations.count, using: &random))
        }
        // The model runs the operations until one fails: then the composition must throw
        // that error and apply nothing.
        var working = model
        var failure: [Outcome]?
        var values: [Bool?] = []
        for operation in operations {
            let allowed = working.apply(operation)
            if case .value(let value) = allowed[0] {
                values.append(value)
            } else {
                failure = allowed
                break
            }
        }

        let ios = operations.map(\.io)
        let composed: StoreIO<ReadWrite, [Bool?]>
        if Bool.random(using: &random) {
            composed = StoreIO<ReadWrite, Bool?>.sequence(ios)
        } else {
            // The same by chaining: each step's values passed to the next.
            let first: StoreIO<ReadWrite, [Bool?]> = ios[0].map { value in [value] }
            composed = ios.dropFirst().reduce(first) { chain, next in
                chain.flatMap { (earlier: [Bool?]) -> StoreIO<ReadWrite, [Bool?]> in next.map { value in earlier + [value] } }
            }
        }
        tally.compositions += 1
        do {
            let results = try store.run(composed)
            if let failure {
                fail("composition \(operations) ran to the end; expected \(failure)")
            } else if results != values {
                fail("composition \(operations): values \(results), expected \(values)")
            }
            model = working
        } catch {
            guard let outcome = Outcome.failure(error) else { throw error }
            tally.abortedCompositions += 1
            tally.refused(outcome, caught: false)
            if !(failure ?? []).contains(outcome) {
                fail("composition \(operations): threw \(outcome), expected \(failure.map { "\($0)" } ?? "success")")
            }
            // Nothing of the composition is applied; the next check compares with `model`.
        }
    }

    // MARK: Checking

    /// Compares everything readable in `tx` with `records`.
    private func check(
        _ tx: some ReadableTransaction, _ records: [Int: Mail], _ random: inout SeededRandom, _ tally: inout Tally,
        _ fail: (String) -> Void
    ) throws {
        let mail = MailStore.mail
        tally.checks += 1
        for id in Self.ids {
            let stored = try mail.get(id, in: tx)
            if stored != records[id] { fail("record #\(id) is \(stored.map { "\($0)" } ?? "missing"), the model has \(records[id].map { "\($0)" } ?? "none")") }
            if try mail.contains(id, in: tx) != (records[id] != nil) { fail("contains(#\(id)) disagrees with the model") }
        }
        let count = try mail.count(in: tx)
        if count != records.count { fail("count \(count), the model has \(records.count)") }
        try checkStored(tx, records, fail)
        let byID = records.values.sorted { $0.id < $1.id }
        for _ in 0..<3 {
            let from = Bool.random(using: &random) ? Self.ids.randomElement(using: &random) : nil
            let to = Bool.random(using: &random) ? Self.ids.randomElement(using: &random) : nil
            let reverse = Bool.random(using: &random)
            let limit = Bool.random(using: &random) ? Int.random(in: 0...5, using: &random) : nil
            var expected = byID.filter { mail in from.map { mail.id >= $0 } ?? true && to.map { mail.id < $0 } ?? true }
            if reverse { expected.reverse() }
            if let limit { expected = Array(expected.prefix(limit)) }
            let got = try mail.scan(in: tx, from: from, to: to, reverse: reverse, limit: limit)
            if got != expected {
                fail(
                    "scan(from: \(from.map(String.init) ?? "nil"), to: \(to.map(String.init) ?? "nil"), reverse: \(reverse), limit: \(limit.map(String.init) ?? "nil")) gave \(got.map(\.id)), expected \(expected.map(\.id))"
                )
            }
        }

        try checkQueries(tx, records, &random, &tally, fail)
    }

    /// The stored records and the raw index entries: every record as the model has it, and
    /// exactly one entry per record in each index, under the documented key, with the
    /// record's id as the value; nothing else in the collection's range. Cheap enough to run
    /// after every step.
    private func checkStored(_ tx: some ReadableTransaction, _ records: [Int: Mail], _ fail: (String) -> Void) throws {
        let mail = MailStore.mail
        if try mail.scan(in: tx) != records.values.sorted(by: { $0.id < $1.id }) { fail("a full scan differs from the model") }
        for index in MailStore.modelIndexes {
            let expected = records.values.map { ($0.id, index.storedKey($0)) }.sorted { $0.1.lexicographicallyPrecedes($1.1) }
            let actual = Array(try tx.scan(from: index.storedPrefix, to: index.storedPrefix + [0xFF]))
            if actual.map(\.key) != expected.map(\.1) {
                let stale = Set(actual.map(\.key)).subtracting(expected.map(\.1)).map { (try? KeyTuple(decoding: $0).description) ?? "?" }
                let missing = Set(expected.map(\.1)).subtracting(actual.map(\.key)).map { (try? KeyTuple(decoding: $0).description) ?? "?" }
                fail("index \(index.name) holds \(actual.count) entries for \(records.count) records; stale \(stale), missing \(missing)")
            } else {
                for (entry, (id, _)) in zip(actual, expected) where entry.value != KeyTuple([.int(Int64(id))]).bytes {
                    fail("index \(index.name) entry for #\(id) has value \(KeyTestEnvironment.hex(entry.value))")
                }
            }
        }
        let everything = KeyTuple([.string(mail.name)]).prefixRange
        let total = try tx.scan(from: everything.from, to: everything.to).count
        if total != records.count * (1 + MailStore.modelIndexes.count) {
            fail("the collection's range holds \(total) keys for \(records.count) records and \(MailStore.modelIndexes.count) indexes")
        }
    }

    /// Index queries against the model's answers.
    private func checkQueries(
        _ tx: some ReadableTransaction, _ records: [Int: Mail], _ random: inout SeededRandom, _ tally: inout Tally,
        _ fail: (String) -> Void
    ) throws {
        let mail = MailStore.mail
        for index in MailStore.modelIndexes {
            let ordered = index.ordered(records)
            for _ in 0..<4 {
                let values = randomPrefix(index, records, &random)
                let reverse = Bool.random(using: &random)
                let limit = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 0...3, using: &random) : nil
                let expected = Self.shape(
                    ordered.filter { mail in
                        let key = index.key(mail)
                        return key.count >= values.count && zip(key, values).allSatisfy { $0 == $1 }
                    }, reverse: reverse, limit: limit)
                let got = try mail.find(index.index, equalTo: values, in: tx, reverse: reverse, limit: limit)
                tally.queries += 1
                if !expected.isEmpty { tally.nonEmptyQueries += 1 }
                if got != expected {
                    fail(
                        "find(\(index.name), equalTo: \(values), reverse: \(reverse), limit: \(limit.map(String.init) ?? "nil")) gave \(got.map(\.id)), expected \(expected.map(\.id))"
                    )
                }
            }
            for _ in 0..<4 {
                let from = randomPrefix(index, records, &random)
                let to = Int.random(in: 0..<5, using: &random) == 0 ? nil : randomPrefix(index, records, &random)
                let reverse = Bool.random(using: &random)
                let limit = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 0...3, using: &random) : nil
                let expected = Self.shape(
                    ordered.filter { mail in
                        let entry = KeyElement.tuple(index.entry(mail))
                        return entry >= .tuple(from) && (to.map { entry < .tuple($0) } ?? true)
                    }, reverse: reverse, limit: limit)
                let got = try mail.find(index.index, from: from, to: to, in: tx, reverse: reverse, limit: limit)
                tally.queries += 1
                if !expected.isEmpty { tally.nonEmptyQueries += 1 }
                if got != expected {
                    fail(
                        "find(\(index.name), from: \(from), to: \(to.map { "\($0)" } ?? "nil"), reverse: \(reverse), limit: \(limit.map(String.init) ?? "nil")) gave \(got.map(\.id)), expected \(expected.map(\.id))"
                    )
                }
            }
        }
    }

    /// A few reads through the `StoreIO` forms, run on a snapshot of the store.
    private func checkThroughStoreIO(
        _ store: Store, _ records: [Int: Mail], _ random: inout SeededRandom, _ tally: inout Tally, _ fail: (String) -> Void
    ) throws {
        let mail = MailStore.mail
        let id = Self.ids.randomElement(using: &random)!
        if try store.run(mail.get(id)) != records[id] { fail("StoreIO get(#\(id)) differs from the model") }
        if try store.run(mail.count()) != records.count { fail("StoreIO count differs from the model") }
        let reverse = Bool.random(using: &random)
        if try store.run(mail.scan(reverse: reverse)).map(\.id) != records.keys.sorted(by: reverse ? (>) : (<)) {
            fail("StoreIO scan(reverse: \(reverse)) differs from the model")
        }
        let index = MailStore.modelIndexes.randomElement(using: &random)!
        let values = randomPrefix(index, records, &random)
        let expected = index.ordered(records).filter { mail in
            let key = index.key(mail)
            return key.count >= values.count && zip(key, values).allSatisfy { $0 == $1 }
        }
        let (found, ranged) = try store.run(mail.find(index.index, equalTo: values).zip(mail.find(index.index, from: values, to: nil, reverse: true)))
        tally.queries += 2
        if found != expected { fail("StoreIO find(\(index.name), equalTo: \(values)) gave \(found.map(\.id)), expected \(expected.map(\.id))") }
        let rangedExpected = index.ordered(records).filter { KeyElement.tuple(index.entry($0)) >= .tuple(values) }.reversed()
        if ranged != Array(rangedExpected) {
            fail("StoreIO find(\(index.name), from: \(values), reverse: true) gave \(ranged.map(\.id)), expected \(rangedExpected.map(\.id))")
        }
    }

    private static func shape(_ records: [Mail], reverse: Bool, limit: Int?) -> [Mail] {
        let ordered = reverse ? Array(records.reversed()) : records
        return limit.map { Array(ordered.prefix($0)) } ?? ordered
    }

    /// The first elements of an index key: mostly of a stored record, so queries find
    /// something, otherwise of random values.
    private func randomPrefix(_ index: ModelIndex, _ records: [Int: Mail], _ random: inout SeededRandom) -> [KeyElement] {
        let key: [KeyElement]
        if let mail = records.values.randomElement(using: &random), Int.random(in: 0..<4, using: &random) != 0 {
            key = index.key(mail)
        } else {
            let randomMail = Mail(
                id: 0, folder: Self.folders.randomElement(using: &random)!,
                received: Date(timeIntervalSinceReferenceDate: Self.times.randomElement(using: &random)!), priority: Int.random(in: -3...4, using: &random),
                messageID: Self.messageIDs.randomElement(using: &random)!, note: Self.notes.randomElement(using: &random)!, body: "")
            key = index.key(randomMail)
        }
        return Array(key.prefix(Int.random(in: 0...key.count, using: &random)))
    }
}
