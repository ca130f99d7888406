// Observation and change feeds: `store.observe(io)` delivers the current value, then a new
// one after each commit that wrote something the operation read, coalesced to the latest;
// it reports suspensions and goes on after resume; it ends on close or cancellation.
// `store.changes(...)` delivers every committed change in order, and ends with `.overflow`
// rather than skip one.
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import Testing

private func key(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("Observation and change feeds")
struct ObservationTests {
    private static func open() throws -> Store {
        try APITestSimulated.open()
    }

    @Test("the current value at once, then one per commit that touched what was read, with its version")
    func valuesFollowRelevantCommits() async throws {
        let store = try Self.open()
        try await store.write { tx in try tx.put(key("a"), key("1")) }
        try await withDeadline {
            var updates = store.observe(.get(key("a"))).makeAsyncIterator()
            guard case .value(let first, let version)? = await updates.next() else { throw TimedOut() }
            #expect(first == key("1") && version == store.version)
            try await store.write { tx in try tx.put(key("b"), key("unrelated")) }
            try await store.write { tx in try tx.put(key("a"), key("2")) }
            let expectedVersion = store.version
            guard case .value(let second, let secondVersion)? = await updates.next() else { throw TimedOut() }
            #expect(second == key("2"))
            #expect(secondVersion == expectedVersion, "no value for the commit to b, which the operation did not read")
            try await store.write { tx in try tx.delete(key("a")) }
            guard case .value(let third, _)? = await updates.next() else { throw TimedOut() }
            #expect(third == nil)
        }
        try store.close()
    }

    /// A commit that lands while an evaluation is under way signals the observation again;
    /// when that evaluation already read the commit, the next one reads the same version and
    /// must not deliver it a second time.
    @Test("each value is delivered at a newer version than the one before")
    func versionsStrictlyIncrease() async throws {
        let store = try Self.open()
        try await withDeadline {
            let observation = store.observe(.scan(prefix: key("k/")))
            let consumer = Task {
                var versions: [UInt64] = []
                for await update in observation {
                    guard case .value(let entries, let version) = update else { continue }
                    versions.append(version)
                    if entries.count == 2000 { break }
                }
                return versions
            }
            for index in 0..<2000 {
                try await store.write(durability: .buffered) { tx in
                    try tx.put(key("k/\(10000 + index)"), key("v"))
                }
            }
            let versions = await consumer.value
            let repeats = zip(versions, versions.dropFirst()).filter { $0.0 >= $0.1 }
            #expect(repeats.isEmpty, "versions delivered again or out of order: \(repeats.prefix(5))")
        }
        try store.close()
    }

    @Test("a scan's range is watched: an insert into it is seen, one outside is not")
    func rangesAreWatched() async throws {
        let store = try Self.open()
        try await withDeadline {
            var updates = store.observe(StoreIO<ReadOnly, [Entry]>.scan(prefix: key("mail/"))).makeAsyncIterator()
            guard case .value(let empty, _)? = await updates.next() else { throw TimedOut() }
            #expect(empty.isEmpty)
            try await store.write { tx in try tx.put(key("other/1"), key("x")) }
            try await store.write { tx in try tx.put(key("mail/7"), key("hello")) }
            let version = store.version
            guard case .value(let mails, let seen)? = await updates.next() else { throw TimedOut() }
            #expect(mails.map(\.key) == [key("mail/7")] && seen == version)
        }
        try store.close()
    }

    @Test("a slow consumer gets the latest value, not a backlog, and never misses the final one")
    func coalescesToTheLatest() async throws {
        let store = try Self.open()
        try await store.write { tx in try tx.put(key("n"), key("0")) }
        try await withDeadline {
            var updates = store.observe(.get(key("n"))).makeAsyncIterator()
            _ = await updates.next()
            for i in 1...200 { try await store.write { tx in try tx.put(key("n"), key(String(i))) } }
            var received = 0
            while true {
                guard case .value(let value, _)? = await updates.next() else { throw TimedOut() }
                received += 1
                if value == key("200") { break }
            }
            #expect(received < 20, "coalesced: \(received) values for 200 commits")
        }
        try store.close()
    }

    @Test("a suspension is reported, and the observation goes on after resume")
    func survivesSuspension() async throws {
        let store = try Self.open()
        try await store.write { tx in try tx.put(key("a"), key("1")) }
        try await withDeadline {
            var updates = store.observe(.get(key("a"))).makeAsyncIterator()
            _ = await updates.next()
            try await store.suspend()
            guard case .interrupted(let error)? = await updates.next() else { throw TimedOut() }
            #expect(error.code == .suspended)
            _ = try store.resume()
            guard case .value(let again, _)? = await updates.next() else { throw TimedOut() }
            #expect(again == key("1"))
            try await store.write { tx in try tx.put(key("a"), key("2")) }
            guard case .value(let after, _)? = await updates.next() else { throw TimedOut() }
            #expect(after == key("2"))
        }
        try store.close()
    }

    @Test("an operation's own error is delivered as .failed, as thrown, not as an I/O interruption; a later commit fixes it")
    func operationErrorIsItsOwn() async throws {
        struct NotANumber: Error, Equatable { let text: String }
        let store = try Self.open()
        try await store.write { tx in try tx.put(key("n"), key("seven")) }
        let parse: StoreIO<ReadOnly, Int> = StoreIO<ReadOnly, [UInt8]?>.get(key("n")).map { bytes in
            let text = String(decoding: bytes ?? [], as: UTF8.self)
            guard let number = Int(text) else { throw NotANumber(text: text) }
            return number
        }
        try await withDeadline {
            var updates = store.observe(parse).makeAsyncIterator()
            guard case .failed(let error)? = await updates.next() else { throw TimedOut() }
            #expect(error as? NotANumber == NotANumber(text: "seven"), "\(error)")
            try await store.write { tx in try tx.put(key("n"), key("7")) }
            guard case .value(let number, _)? = await updates.next() else { throw TimedOut() }
            #expect(number == 7)
        }
        // A refused argument is the operation's own problem too: reported as the StoreError it is.
        try await withDeadline {
            var updates = store.observe(.get([UInt8](repeating: 1, count: StoreLimits.maxKeyBytes + 1))).makeAsyncIterator()
            guard case .failed(let error)? = await updates.next() else { throw TimedOut() }
            #expect((error as? StoreError)?.code == .invalidArgument, "\(error)")
        }
        try store.close()
    }

    @Test("closing the store ends the observation; so does cancelling its task")
    func endsOnCloseAndCancellation() async throws {
        let store = try Self.open()
        try await withDeadline {
            let cancelled = Task {
                var count = 0
                for await _ in store.observe(.get(key("a"))) { count += 1 }
                return count
            }
            let (started, firstValue) = AsyncStream.makeStream(of: Void.self)
            let closing = Task {
                var count = 0
                for await _ in store.observe(.get(key("b"))) {
                    count += 1
                    firstValue.yield()
                }
                return count
            }
            try await store.write { tx in try tx.put(key("a"), key("1")) }
            cancelled.cancel()
            #expect(await cancelled.value >= 0)
            // Closed once the observation is under way: its sequence must then end.
            var waiting = started.makeAsyncIterator()
            _ = await waiting.next()
            try store.close()
            #expect(await closing.value >= 1)
        }
    }

    @Test("a change feed gives every change in its range in commit order, deletions included")
    func changeFeedInOrder() async throws {
        let store = try Self.open()
        try await withDeadline {
            var feed = store.changes(prefix: key("k/")).makeAsyncIterator()
            try await store.write { tx in
                try tx.put(key("k/1"), key("a"))
                try tx.put(key("x"), key("outside"))
                try tx.put(key("k/2"), key("b"))
            }
            let first = store.version
            try await store.write { tx in try tx.delete(key("k/1")) }
            var changes: [Change] = []
            for _ in 0..<3 { if let change = try await feed.next() { changes.append(change) } }
            #expect(changes.map(\.key) == [key("k/1"), key("k/2"), key("k/1")])
            #expect(changes.map(\.value) == [key("a"), key("b"), nil])
            #expect(changes.map(\.version) == [first, first, first + 1])
        }
        try store.close()
    }

    @Test("a change feed whose consumer falls behind its buffer ends with .overflow after what it holds")
    func changeFeedOverflow() async throws {
        let store = try Self.open()
        try await withDeadline {
            var feed = store.changes(from: [], to: nil, bufferSize: 8).makeAsyncIterator()
            for i in 0..<20 { try await store.write { tx in try tx.put(key("k\(i)"), key("v")) } }
            var delivered = 0
            do {
                while try await feed.next() != nil { delivered += 1 }
                Issue.record("the feed ended without an error")
            } catch let error as StoreError {
                #expect(error.code == .overflow)
            }
            #expect(delivered == 8)
        }
        try store.close()
    }
}
