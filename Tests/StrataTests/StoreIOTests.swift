// StoreIO: composable operations that run in one transaction (DocC, "Composing
// operations"). The examples of the contract are compiled here as written.
import Dispatch
import Foundation
import Strata
import StrataIO
import StrataTestSupport
import Synchronization
import Testing

private struct Refused: Error, Equatable {}

private func increment(_ old: [UInt8]?) -> [UInt8] {
    let n = old.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
    return Array(String(n + 1).utf8)
}

@Suite("StoreIO: composable operations")
struct StoreIOTests {
    @Test("the contract's examples compile as written and run in one transaction each")
    func contractExamples() async throws {
        let store = try APITestSimulated.open()
        let key = apiBytes("counter")
        let bump = try Self.synchronousExamples(store, key: key)
        let load: StoreIO<ReadOnly, [UInt8]?> = .get(key)
        try await store.run(bump)  // async
        #expect(try await store.run(load) == apiBytes("8"))
        try store.close()
    }

    /// The contract's synchronous lines, as written (from async code the compiler would pick
    /// the async overloads). Returns `bump`.
    private static func synchronousExamples(_ store: Store, key: [UInt8]) throws -> StoreIO<ReadWrite, Void> {
        let p = apiBytes("dog/")
        let (a, b) = (apiBytes("dog/a"), apiBytes("dog/z"))
        try store.write { tx in
            try tx.put(apiBytes("dog/rex"), apiBytes("1"))
            try tx.put(apiBytes("dog/fido"), apiBytes("1"))
        }

        let load: StoreIO<ReadOnly, [UInt8]?> = .get(key)
        let bump: StoreIO<ReadWrite, Void> = load.flatMap { old in .put(key, increment(old)) }
        let count: StoreIO<ReadOnly, Int> = .read { tx in try tx.scan(prefix: p).count }
        let custom: StoreIO<ReadWrite, Int> = .write { tx in try tx.deleteRange(from: a, to: b) }
        let both = load.zip(count)
        let all = StoreIO.sequence([bump, bump])

        let before = store.version
        try store.run(bump)
        #expect(store.version == before + 1)
        let done = DispatchSemaphore(value: 0)
        store.asyncRun(bump) { _ in done.signal() }
        done.wait()
        try store.run(bump, durability: .buffered)
        let snapshot = store.snapshot()
        #expect(try snapshot.run(load) == apiBytes("3"))
        try store.write { tx in try tx.run(bump) }
        #expect(try store.run(load) == apiBytes("4"))

        let version = store.version
        let results: [Void] = try store.run(all)
        #expect(results.count == 2)
        #expect(store.version == version + 1, "a sequence of two writes is one commit")
        #expect(try store.run(load) == apiBytes("6"))

        let (value, dogs) = try store.run(both)
        #expect(value == apiBytes("6") && dogs == 2)
        #expect(try store.run(custom) == 2)
        #expect(try store.run(count) == 0)
        snapshot.close()
        try store.run(bump)
        return bump
    }

    @Test("a composition is one transaction: if any part throws, nothing of it is applied and the error comes back unchanged")
    func allOrNothing() throws {
        let store = try APITestSimulated.open()
        let first: StoreIO<ReadWrite, Void> = .put(apiKey(1), apiBytes("a"))
        let failing: StoreIO<ReadWrite, Void> = .write { _ in throw Refused() }
        let composed = first.flatMap { failing }.flatMap { StoreIO<ReadWrite, Void>.put(apiKey(2), apiBytes("b")) }
        let before = store.version
        #expect(throws: Refused.self) { try store.run(composed) }
        #expect(store.version == before)
        #expect(try store.read { try $0.get(apiKey(1)) } == nil)
        #expect(try store.read { try $0.get(apiKey(2)) } == nil)
        try store.close()
    }

    @Test("reads inside a composition see the composition's own earlier writes")
    func readsSeeOwnWrites() throws {
        let store = try APITestSimulated.open()
        let put: StoreIO<ReadWrite, Void> = .put(apiKey(1), apiBytes("mine"))
        let read: StoreIO<ReadOnly, [UInt8]?> = .get(apiKey(1))
        let seen = try store.run(put.flatMap { read })
        #expect(seen == apiBytes("mine"))
        let viaRead = try store.run(put.zip(StoreIO<ReadOnly, Int>.read { tx in try tx.scan(from: []).count }))
        #expect(viaRead.1 == 1)
        try store.close()
    }

    @Test("same-access compositions stay unambiguous next to the mixed-access forms")
    func overloadsResolve() throws {
        let store = try APITestSimulated.open()
        let rw: StoreIO<ReadWrite, Int> = .just(1)
        let next = rw.flatMap { n in .just(n + 1) }
        let ro: StoreIO<ReadOnly, Int> = .just(10)
        let stillReadOnly = ro.flatMap { n in .just(n * 2) }
        let lifted = ro.flatMap { n in StoreIO<ReadWrite, Void>.put(apiKey(n), apiBytes("x")) }.map { 3 }
        let mixed = rw.zip(ro)
        #expect(try store.run(next) == 2)
        #expect(try store.run(stillReadOnly) == 20)
        #expect(try store.run(lifted) == 3)
        #expect(try store.run(mixed) == (1, 10))
        #expect(try store.read { try $0.get(apiKey(10)) } == apiBytes("x"))
        #expect(try store.run(ro.readWrite.map { $0 + 1 }) == 11)
        try store.close()
    }

    @Test("ten thousand chained flatMaps and a sequence of ten thousand run without overflowing a small stack")
    func deepCompositions() throws {
        let store = try APITestSimulated.open()
        var building: StoreIO<ReadWrite, Int> = .just(0)
        for _ in 0..<10_000 { building = building.flatMap { n in .just(n + 1) } }
        let chain = building
        // Right-nested too: each step returns the rest of the chain.
        let right = Self.nested(10_000)
        let sequence = StoreIO.sequence((0..<10_000).map { i in StoreIO<ReadWrite, Void>.put(apiKey(i), apiBytes("v")) })

        // On a thread with a 256 KiB stack, as an app's secondary thread may have: a
        // recursive runner (or a recursive release of the chain) would overflow it.
        let outcome = Locked<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { finished.signal() }
            do {
                let a = try store.run(chain)
                let b = try store.run(right)
                let c = try store.run(sequence).count
                outcome.withLock { $0 = "\(a) \(b) \(c)" }
            } catch {
                outcome.withLock { $0 = "error: \(error)" }
            }
        }
        thread.stackSize = 256 << 10
        thread.start()
        finished.wait()
        #expect(outcome.withLock { $0 } == "10000 10000 10000")
        #expect(try store.read { try $0.scan(from: []).count } == 10_000)
        try store.close()
    }

    @Sendable private static func nested(_ depth: Int) -> StoreIO<ReadOnly, Int> {
        depth == 0 ? .just(0) : StoreIO<ReadOnly, Int>.just(depth).flatMap { _ in nested(depth - 1).map { $0 + 1 } }
    }

    @Test("read-only operations run in snapshots, read transactions and write transactions")
    func runsEverywhere() throws {
        let store = try APITestSimulated.open()
        try store.write { tx in try tx.put(apiKey(1), apiBytes("v")) }
        let get: StoreIO<ReadOnly, [UInt8]?> = .get(apiKey(1))
        #expect(try store.read { tx in try tx.run(get) } == apiBytes("v"))
        #expect(try store.snapshot().run(get) == apiBytes("v"))
        #expect(try store.write { tx in try tx.run(get) } == apiBytes("v"))
        let read: StoreIO<ReadOnly, Int> = .read { tx in
            // The step's transaction reads; it offers no way to write.
            try tx.scan(from: []).count + (try tx.run(get)?.count ?? 0)
        }
        #expect(try store.run(read) == 2)
        try store.close()
    }

    @Test("a StoreIO built on one thread runs on another")
    func sendable() async throws {
        let store = try APITestSimulated.open()
        let op: StoreIO<ReadWrite, Int> = StoreIO<ReadWrite, Void>.put(apiKey(1), apiBytes("v")).map { 7 }
        let value = try await Task.detached { try await store.run(op) }.value
        #expect(value == 7)
        try store.close()
    }

    @Test("running a ReadWrite operation in a read does not compile")
    func readWriteInReadDoesNotCompile() async throws {
        let valid = """
            import Strata
            func f(store: Store, snapshot: Snapshot) throws {
                let op: StoreIO<ReadOnly, [UInt8]?> = .get([1])
                _ = try store.read { tx in try tx.run(op) }
                _ = try snapshot.run(op)
            }
            """
        let invalid = [
            "_ = try store.read { tx in try tx.run(op) }",
            "_ = try snapshot.run(op)",
            "let ro: StoreIO<ReadOnly, Void> = .put([1], [2])",
            "let ro: StoreIO<ReadOnly, Int> = .write { _ in 1 }"
        ]
        let checker = try SwiftTypeChecker()
        let accepted = try await checker.check(valid)
        try #require(accepted.succeeded, "the valid snippet should type-check (else the setup is wrong): \(accepted.output)")
        for line in invalid {
            let snippet = """
                import Strata
                func f(store: Store, snapshot: Snapshot) throws {
                    let op: StoreIO<ReadWrite, Void> = .put([1], [2])
                    _ = op
                    \(line)
                }
                """
            let result = try await checker.check(snippet)
            #expect(!result.succeeded, "this should not compile: \(line)")
            #expect(result.output.contains("error:"), "\(line): \(result.output)")
        }
    }
}
