import Foundation
import Strata
import StrataTestSupport
import Testing

// `Store.commit`: the version it returns is the one the write committed at, so a read at or
// after it sees the write and a feed names the same version; a transaction that writes
// nothing makes no commit and says so.

private func withStore<T>(_ body: (Store) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory(label: "commits")
    defer { directory.remove() }
    let store = try Store(path: directory.path("store"))
    defer { try? store.close() }
    return try await body(store)
}

@Suite struct CommitTests {
    @Test("a blocking commit returns the body's value and the version the write committed at")
    func blockingCommit() async throws {
        try await withStore { store in
            let before = try store.read { tx in tx.version }
            let saved = try store.commit { tx in
                try tx.put("draft/1", "Hello")
                return tx.version
            }
            // Inside the write, `tx.version` is the head before the commit.
            #expect(saved.value == before)
            #expect(saved.version == before + 1)
            #expect(saved.wroteAnything)
            #expect(try store.read { tx in tx.version } == saved.version)
            let second = try store.commit { tx in try tx.put("draft/2", "World") }
            #expect(second.version == saved.version + 1)
        }
    }

    @Test("a transaction that writes nothing makes no commit: its version is the head it read")
    func emptyCommit() async throws {
        try await withStore { store in
            try store.write { tx in try tx.put("k", "v") }
            let head = try store.read { tx in tx.version }
            let nothing = try store.commit { tx in try tx.get("k", as: String.self) }
            #expect(nothing.value == "v")
            #expect(nothing.version == head)
            #expect(!nothing.wroteAnything)
            #expect(try store.read { tx in tx.version } == head)
        }
    }

    @Test("concurrent async commits each return a distinct version, and the feed names the same ones")
    func asyncCommitsMatchTheFeed() async throws {
        try await withStore { store in
            let feed = store.changes(prefix: "n/")
            let versions = try await withThrowingTaskGroup(of: UInt64.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await store.commit { tx in try tx.put("n/\(index)", "\(index)") }.version
                    }
                }
                var versions: [UInt64] = []
                for try await version in group { versions.append(version) }
                return versions
            }
            #expect(Set(versions).count == 20)
            var fed: [String: UInt64] = [:]
            for try await change in feed {
                fed[String(decoding: change.key, as: UTF8.self)] = change.version
                if fed.count == 20 { break }
            }
            let committed = try await store.read { tx in
                try tx.scan(prefix: "n/").map { String(decoding: $0.key, as: UTF8.self) }
            }
            #expect(committed.count == 20)
            #expect(Set(fed.values) == Set(versions))
        }
    }

    @Test("a StoreIO operation committed through commit(_:) gives its value and version, blocking and async")
    func storeIOCommit() async throws {
        try await withStore { store in
            let bump: StoreIO<ReadWrite, Int> = StoreIO<ReadOnly, String?>.get("counter", as: String.self)
                .flatMap { old in
                    let next = (Int(old ?? "") ?? 0) + 1
                    return StoreIO<ReadWrite, Void>.put("counter", String(next)).map { next }
                }
            // A closure without `await` picks the blocking form.
            let blocking = { () throws in try store.commit(bump) }
            let first = try blocking()
            let second = try await store.commit(bump)
            #expect(first.value == 1)
            #expect(second.value == 2)
            #expect(second.version == first.version + 1)
            #expect(try await store.read { tx in try tx.get("counter", as: String.self) } == "2")
        }
    }
}
