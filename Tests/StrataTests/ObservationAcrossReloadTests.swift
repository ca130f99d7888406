// Observations and change feeds across a suspension during which another process (here a
// second `Store` on the same simulated files, as an app extension would be) writes: the
// feed delivers the other process's commits in commit order before this store's next ones,
// or, when it cannot deliver them one by one, ends with `.historyUnavailable` naming the
// versions; never a silent gap. An observation reads again after the reload.
import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Testing

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
private func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "nil" }

/// A change as text, for comparisons that print well.
private func describe(_ change: Change) -> String { "\(text(change.key))=\(text(change.value))@\(change.version)" }

@Suite("Observation and change feeds across a reload")
struct ObservationAcrossReloadTests {
    @Test("a change feed delivers another process's commits, in order, between this store's own")
    func feedDeliversOtherProcessCommits() async throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try await withDeadline {
            var feed = store.changes(prefix: bytes("cf/")).makeAsyncIterator()
            try await store.write { tx in try tx.put("cf/1", "a") }
            try await store.write { tx in try tx.put("cf/2", "b") }
            try await store.suspend()

            // The extension: three commits, one outside the feed's range, one deleting.
            let other = try APITestSimulated.open(fileSystem)
            try await other.write { tx in
                try tx.put("cf/3", "c")
                try tx.put("elsewhere", "x")
            }
            try await other.write { tx in try tx.put("elsewhere", "y") }
            try await other.write { tx in
                try tx.delete("cf/1")
                try tx.put("cf/3", "c2")
            }
            try other.close()

            #expect(try store.resume() == .reloaded(from: 2, to: 5))
            try await store.write { tx in try tx.put("cf/4", "d") }

            var seen: [String] = []
            for _ in 0..<6 {
                guard let change = try await feed.next() else { break }
                seen.append(describe(change))
            }
            #expect(seen == ["cf/1=a@1", "cf/2=b@2", "cf/3=c@3", "cf/1=nil@5", "cf/3=c2@5", "cf/4=d@6"])
        }
        try store.close()
    }

    @Test("a feed whose range another process did not touch goes on with this store's commits")
    func feedUntouchedByOtherProcess() async throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try await withDeadline {
            var feed = store.changes(prefix: bytes("cf/")).makeAsyncIterator()
            try await store.write { tx in try tx.put("cf/1", "a") }
            try await store.suspend()
            let other = try APITestSimulated.open(fileSystem)
            try await other.write { tx in try tx.put("elsewhere", "x") }
            try other.close()
            #expect(try store.resume() == .reloaded(from: 1, to: 2))
            try await store.write { tx in try tx.put("cf/2", "b") }
            var seen: [String] = []
            for _ in 0..<2 { if let change = try await feed.next() { seen.append(describe(change)) } }
            #expect(seen == ["cf/1=a@1", "cf/2=b@3"])
        }
        try store.close()
    }

    @Test("a feed ends with .historyUnavailable, naming the versions, when the other process flushed them into segments")
    func feedEndsWhenHistoryIsOnlyInSegments() async throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try await withDeadline {
            var feed = store.changes(prefix: bytes("cf/")).makeAsyncIterator()
            try await store.write { tx in try tx.put("cf/1", "a") }
            try await store.suspend()
            let other = try APITestSimulated.open(fileSystem)
            try await other.write { tx in try tx.put("cf/2", "b") }
            try await other.write { tx in try tx.put("cf/2", "b2") }
            // Flushes the memtable into a segment file, which keeps cf/2's latest value only.
            try await other.compact()
            try await other.write { tx in try tx.put("cf/3", "c") }
            try other.close()
            #expect(try store.resume() == .reloaded(from: 1, to: 4))

            var seen: [String] = []
            do {
                while let change = try await feed.next() { seen.append(describe(change)) }
                Issue.record("the feed ended without an error after \(seen)")
            } catch let error as StoreError {
                #expect(error.code == .historyUnavailable, "\(error)")
                #expect(error.message.contains("versions 2 through 4"), "\(error.message)")
                #expect(error.message.contains("2 through 3"), "\(error.message)")
                #expect(!error.isRetryable)
            }
            #expect(seen == ["cf/1=a@1"])
        }
        try store.close()
    }

    @Test("a feed ends with .historyUnavailable when the store was replaced by another while suspended")
    func feedEndsWhenStoreReplaced() async throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try await withDeadline {
            var feed = store.changes(prefix: bytes("cf/")).makeAsyncIterator()
            try await store.write { tx in try tx.put("cf/1", "a") }
            try await store.suspend()
            for name in try fileSystem.listDirectory(APITestSimulated.path) {
                try fileSystem.removeFile(fileSystem.path(APITestSimulated.path, name))
            }
            let other = try APITestSimulated.open(fileSystem)
            try await other.write { tx in try tx.put("cf/9", "new store") }
            try other.close()
            #expect(try store.resume() == .reloaded(from: 1, to: 1))
            var seen: [String] = []
            do {
                while let change = try await feed.next() { seen.append(describe(change)) }
                Issue.record("the feed ended without an error after \(seen)")
            } catch let error as StoreError {
                #expect(error.code == .historyUnavailable, "\(error)")
            }
            #expect(seen == ["cf/1=a@1"])
        }
        try store.close()
    }

    @Test("a feed through a suspension nobody else used goes on; nothing is delivered twice")
    func feedThroughPlainSuspension() async throws {
        let store = try APITestSimulated.open()
        try await withDeadline {
            var feed = store.changes(prefix: bytes("cf/")).makeAsyncIterator()
            try await store.write { tx in try tx.put("cf/1", "a") }
            try await store.suspend()
            #expect(try store.resume() == .unchanged)
            try await store.write { tx in try tx.put("cf/2", "b") }
            var seen: [String] = []
            for _ in 0..<2 { if let change = try await feed.next() { seen.append(describe(change)) } }
            #expect(seen == ["cf/1=a@1", "cf/2=b@2"])
        }
        try store.close()
    }

    @Test("an observation reads again after a reload and delivers what the other process wrote")
    func observationAfterReload() async throws {
        let fileSystem = SimulatedFileSystem()
        let store = try APITestSimulated.open(fileSystem)
        try await store.write { tx in try tx.put("cf/1", "a") }
        try await withDeadline {
            var updates = store.observe(.scan(prefix: bytes("cf/"))).makeAsyncIterator()
            guard case .value(let first, let firstVersion)? = await updates.next() else { throw TimedOut() }
            #expect(first.map(\.key) == [bytes("cf/1")] && firstVersion == 1)
            try await store.suspend()
            guard case .interrupted(let error)? = await updates.next() else { throw TimedOut() }
            #expect(error.code == .suspended)
            let other = try APITestSimulated.open(fileSystem)
            try await other.write { tx in try tx.put("cf/3", "c") }
            try other.close()
            #expect(try store.resume() == .reloaded(from: 1, to: 2))
            guard case .value(let after, let version)? = await updates.next() else { throw TimedOut() }
            #expect(after.map(\.key) == [bytes("cf/1"), bytes("cf/3")])
            #expect(version == 2)
        }
        try store.close()
    }
}
