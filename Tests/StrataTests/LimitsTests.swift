// One test per row of docs/limits.md: each limit, and the error a call past it gets. A row
// whose test lives elsewhere (file numbers, the memtable hard limit, open files, records)
// names it in the table.
import Foundation
import Strata
import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@Suite("Limits (docs/limits.md)") struct LimitsTests {
    private func openSimulated(_ fileSystem: SimulatedFileSystem = SimulatedFileSystem(), path: String = "/store") throws -> Store {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        return try Store(path: path, options: options)
    }

    private func code(_ body: () throws -> Void) -> StoreError.Code? {
        do {
            try body()
            return nil
        } catch let error as StoreError {
            return error.code
        } catch {
            Issue.record("expected a StoreError, got \(error)")
            return nil
        }
    }

    @Test("keys: 1 to 16,384 bytes")
    func keyLength() throws {
        let store = try openSimulated()
        let longest = [UInt8](repeating: 0x61, count: StoreLimits.maxKeyBytes)
        try store.write { tx in try tx.put(longest, [1]) }
        #expect(try store.read { tx in try tx.get(longest) } == [1])
        #expect(code { try store.write { tx in try tx.put([], [1]) } } == .invalidArgument)
        #expect(code { try store.write { tx in try tx.put(longest + [0], [1]) } } == .invalidArgument)
        #expect(code { try store.write { tx in try tx.delete(longest + [0]) } } == .invalidArgument)
        #expect(code { _ = try store.read { tx in try tx.get(longest + [0]) } } == .invalidArgument)
        // Range bounds may be empty (the start of the key space) but not longer than a key.
        #expect(try store.read { tx in try tx.scan(from: [], to: nil).count } == 1)
        #expect(code { _ = try store.read { tx in try tx.scan(from: longest + [0], to: nil) } } == .invalidArgument)
        #expect(try store.stats().version == 1, "a refused write committed something")
        try store.close()
    }

    @Test("values: up to 16 MiB")
    func valueLength() throws {
        let store = try openSimulated()
        var largest = [UInt8](repeating: 0x5a, count: StoreLimits.maxValueBytes)
        try store.write { tx in try tx.put([1], largest) }
        #expect(try store.read { tx in try tx.get([1]) }?.count == StoreLimits.maxValueBytes)
        largest.append(0)
        #expect(code { try store.write { tx in try tx.put([2], largest) } } == .invalidArgument)
        #expect(try store.read { tx in try tx.get([2]) } == nil)
        try store.close()
    }

    @Test("a write transaction: up to 256 MiB of keys and values; past it nothing is written")
    func transactionSize() throws {
        let store = try openSimulated()
        let value = [UInt8](repeating: 1, count: StoreLimits.maxValueBytes - 1)
        let fitting = StoreLimits.maxTransactionBytes / StoreLimits.maxValueBytes  // 16 puts of 16 MiB (key included)
        #expect(
            code {
                try store.write { tx in
                    for i in 0..<fitting { try tx.put([UInt8(i)], value) }
                    try tx.put([0xff], [1])
                }
            } == .invalidArgument)
        #expect(try store.read { tx in try tx.scan(from: [], to: nil).count } == 0, "a refused transaction wrote something")
        // The same puts less the last byte commit.
        try store.write { tx in
            for i in 0..<fitting { try tx.put([UInt8(i)], value) }
        }
        #expect(try store.read { tx in try tx.scan(from: [], to: nil).count } == fitting)
        try store.close()
    }

    @Test("snapshots: no limit on how many are open; each holds its version")
    func manySnapshots() throws {
        let store = try openSimulated()
        var snapshots: [Snapshot] = []
        for i in 0..<10_000 {
            try store.write { tx in try tx.put([1], withUnsafeBytes(of: UInt32(i).bigEndian, Array.init)) }
            snapshots.append(store.snapshot())
        }
        for (i, snapshot) in snapshots.enumerated() where i % 997 == 0 {
            #expect(try snapshot.read { tx in try tx.get([1]) } == withUnsafeBytes(of: UInt32(i).bigEndian, Array.init))
        }
        for snapshot in snapshots { snapshot.close() }
        try store.close()
    }

    @Test("paths: a name longer than 255 bytes, or a path leaving no room for the store's files, is refused")
    func pathLength() throws {
        let fileSystem = SimulatedFileSystem()
        let longName = String(repeating: "n", count: 256)
        #expect(code { _ = try openSimulated(fileSystem, path: "/\(longName)") } == .invalidArgument)
        let deep = "/" + Array(repeating: String(repeating: "d", count: 200), count: 21).joined(separator: "/")
        #expect(deep.utf8.count > StoreLimits.maxPathBytes)
        #expect(code { _ = try openSimulated(fileSystem, path: deep) } == .invalidArgument)
        #expect(code { _ = try openSimulated(fileSystem, path: "") } == .invalidArgument)
        #expect(try fileSystem.listDirectory("/").isEmpty, "a refused path created something")
        let source = try openSimulated(fileSystem, path: "/source")
        #expect(code { _ = try source.checkpoint(to: "") } == .invalidArgument)
        #expect(code { _ = try source.checkpoint(to: "/\(longName)") } == .invalidArgument)
        try source.close()
        #expect(try fileSystem.listDirectory("/") == ["source"], "a refused checkpoint created something")
        // At the limit: a path of exactly maxPathBytes opens (the simulated file system has no
        // limit of its own).
        var longest = "/"
        while longest.utf8.count < StoreLimits.maxPathBytes {
            let room = StoreLimits.maxPathBytes - longest.utf8.count
            longest += String(repeating: "p", count: min(room, 200))
            if longest.utf8.count < StoreLimits.maxPathBytes - 1 { longest += "/" }
        }
        #expect(longest.utf8.count == StoreLimits.maxPathBytes)
        var parent = ""
        for name in longest.split(separator: "/").dropLast() {
            parent += "/" + name
            try fileSystem.createDirectory(parent)
        }
        let store = try openSimulated(fileSystem, path: longest)
        try store.write { tx in try tx.put([1], [1]) }
        try store.close()
    }

    @Test("paths on a real file system: the longest name opens, one byte more is refused")
    func pathLengthOnDisk() throws {
        let directory = try TemporaryDirectory(label: "limits")
        defer { directory.remove() }
        let longest = directory.path(String(repeating: "s", count: StoreLimits.maxNameBytes))
        let store = try Store(path: longest)
        try store.write { tx in try tx.put([1], [1]) }
        try store.close()
        #expect(code { _ = try Store(path: longest + "s") } == .invalidArgument)
    }

    @Test("sequences: a store at sequence 2^64 - 1 reads, but refuses commits with .corruption")
    func lastSequence() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try openSimulated(fileSystem)
        try store.write { tx in try tx.put([1], [1]) }
        try store.compact()  // the commit moves into a segment file; the manifest records sequence 1
        try store.close()
        // Append a version edit that claims the last sequence is 2^64 - 2: only a crafted file
        // gets there (a store committing a million times a second would take 584,000 years).
        let manifest = try #require(try fileSystem.listDirectory("/store").first { ManifestFormat.number(fromManifestName: $0) != nil })
        var bytes = try fileSystem.readWholeFile("/store/" + manifest)
        var scanner = WALScanner(bytes: bytes, start: ManifestFormat.headerSize)
        var end = ManifestFormat.headerSize
        scan: while true {
            switch scanner.next() {
            case .record(_, _, let recordEnd): end = recordEnd
            default: break scan
            }
        }
        var appended = Array(bytes[..<end])
        let edit = VersionEdit(lastSequence: UInt64.max - 1).encoded()
        _ = edit.withUnsafeBytes { WALFormat.appendRecord($0, to: &appended, fileOffset: end) }
        bytes = appended
        let handle = try fileSystem.openFile("/store/" + manifest, create: false)
        try handle.truncate(to: 0)
        try handle.write(bytes, at: 0)
        try handle.sync()
        try handle.close()

        let reopened = try openSimulated(fileSystem)
        #expect(try reopened.stats().version == UInt64.max - 1)
        try reopened.write { tx in try tx.put([2], [2]) }  // takes 2^64 - 1
        #expect(code { try reopened.write { tx in try tx.put([3], [3]) } } == .corruption)
        #expect(try reopened.read { tx in try tx.get([1]) } == [1])
        #expect(try reopened.read { tx in try tx.get([2]) } == [2])
        #expect(try reopened.read { tx in try tx.get([3]) } == nil)
        try reopened.close()
    }
}
