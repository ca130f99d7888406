// A real full disk: a 4 MiB tmpfs, filled through the store until the kernel says ENOSPC.
// Mounting needs root (and Linux); elsewhere the test says it was skipped and passes.
import Foundation
@_spi(Testing) import Strata
import StrataIO
import StrataTestSupport
import StrataVerifier
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("A real full disk")
struct RealFullDiskTests {
    /// Runs a command, its output discarded; true when it exits with status 0.
    static func run(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    static func options(_ durability: Durability) -> StoreOptions {
        var options = StoreOptions()
        options.logger.logLevel = .critical
        options.durability = durability
        options.walSegmentBytes = 64 << 10
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.runsBackgroundWorkInline = true
        return options
    }

    static func entries(_ store: Store) throws -> [[UInt8]: [UInt8]] {
        try store.read { tx in Dictionary(uniqueKeysWithValues: try tx.scan(from: []).map { ($0.key, $0.value) }) }
    }

    /// Synced commits of 4 KiB values go to the log by pwrite; buffered ones of 1,000 bytes
    /// through its mapped window (`WALWriter`), whose blocks must be allocated before use.
    @Test(
        "writes fail with .diskFull, reads go on, and once space is freed every acknowledged commit is there",
        arguments: [(Durability.synced, 4_096), (.buffered, 1_000)])
    func fillATmpfs(durability: Durability, valueBytes: Int) throws {
        guard getuid() == 0 else {
            print("[RealFullDiskTests] skipped: mounting a tmpfs needs root")
            return
        }
        let directory = try TemporaryDirectory(label: "full-disk")
        defer { directory.remove() }
        let mountPoint = directory.path("disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        guard Self.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint]) else {
            print("[RealFullDiskTests] skipped: mount -t tmpfs failed (not Linux, or not allowed here)")
            return
        }
        defer {
            if !Self.run(["umount", mountPoint]) { _ = Self.run(["umount", "-l", mountPoint]) }
        }
        try fill(mountPoint, durability: durability, valueBytes: valueBytes)
    }

    /// Fills the disk at `mountPoint` and checks the store before and after space is freed.
    /// Every store is closed before it returns, so the caller can unmount.
    private func fill(_ mountPoint: String, durability: Durability, valueBytes: Int) throws {
        // A filler made first, so that deleting it frees space the store can use.
        let filler = mountPoint + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(repeating: 0x5A, count: 1_536 << 10)))
        let path = mountPoint + "/store"
        let seed = TestSeeds.seed(61, test: "RealFullDiskTests")
        var random = SeededRandom(seed: seed)
        var acknowledged: [[UInt8]: [UInt8]] = [:]

        let store = try Store(path: path, options: Self.options(durability))
        var closed = false
        defer { if !closed { try? store.close() } }
        var failure: StoreError? = nil
        for index in 0..<10_000 {
            // Random values: nothing compresses, every byte takes space.
            let key = Array("key-\(index)".utf8)
            let value = random.bytes(count: valueBytes)
            do {
                try store.write { tx in try tx.put(key, value) }
                acknowledged[key] = value
            } catch let error as StoreError {
                failure = error
                break
            }
        }
        let first = try #require(failure, "seed \(seed): \(10 * valueBytes) KB went into a 4 MiB disk")
        #expect(first.code == .diskFull, "seed \(seed): the first failed write says \(first)")
        #expect(first.underlying?.code == .noSpace, "seed \(seed): \(first)")
        #expect(acknowledged.count > 100, "seed \(seed): only \(acknowledged.count) writes fitted")

        // Later writes are refused: the disk is still full, or the writer stopped after the
        // failed log write; either way the cause is the full disk.
        let later = #expect(throws: StoreError.self) { try store.write { tx in try tx.put(Array("later".utf8), Array("x".utf8)) } }
        #expect(later?.code == .diskFull || later?.code == .readOnly, "seed \(seed): \(String(describing: later))")
        #expect(later?.underlying?.code == .noSpace, "seed \(seed): \(String(describing: later))")

        // Reads go on, and see every acknowledged commit.
        #expect(try Self.entries(store) == acknowledged, "seed \(seed): reads on the full disk")
        for key in acknowledged.keys.prefix(20) {
            #expect(try store.read { try $0.get(key) } == acknowledged[key])
        }

        // Space freed, the store reopened: everything acknowledged is there, and it writes.
        try FileManager.default.removeItem(atPath: filler)
        do {
            try store.close()
        } catch let error as StoreError {
            #expect(error.code == .diskFull || error.code == .io || error.code == .readOnly, "seed \(seed): close said \(error)")
        }
        closed = true
        let reopened = try Store(path: path, options: Self.options(durability))
        defer { try? reopened.close() }
        #expect(try Self.entries(reopened) == acknowledged, "seed \(seed): after space was freed and the store reopened")
        try reopened.write { tx in try tx.put(Array("after".utf8), Array("freed".utf8)) }
        try reopened.close()
        let report = try Verifier.verify(path: path)
        for finding in report.findings where finding.severity != .info {
            Issue.record("seed \(seed): the verifier finds \(finding.severity.rawValue) \(finding.code) in \(finding.file): \(finding.message)")
        }
        print("[RealFullDiskTests] seed \(seed): \(acknowledged.count) commits fitted; the first refused one said: \(first.message)")
    }
}
