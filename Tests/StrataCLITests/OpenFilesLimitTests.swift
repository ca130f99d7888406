import Foundation
import Strata
import StrataTestSupport
import Testing

/// The "open files" row of docs/limits.md: a store keeps no descriptor per segment file (each
/// is mapped, then its descriptor closed), so a process allowed only a handful of descriptors
/// reads a store of hundreds of files.
@Suite struct OpenFilesLimitTests {
    @Test("a store of hundreds of segment files reads with 16 descriptors allowed")
    func manySegmentFilesFewDescriptors() async throws {
        try await withTemporaryDirectory(label: "open-files") { dir in
            let path = dir.path("many.strata")
            let keys = 20_000
            try Self.fill(path, keys: keys)

            let script = "ulimit -n 16 && exec \"$0\" scan \"$1\" --prefix k1"
            let child = try StrataProcess(
                executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script, try StrataBinary.url().path, path])
            try child.stdin.close()
            let result = try await child.finish()
            #expect(result.status == 0, "\(result)")
            // k1, k10..k19, k100..k199, k1000..k1999, k10000..k19999
            #expect(result.outputLines.count == 11_111, "\(result.description.prefix(2_000))")
        }
    }

    /// Small memtables and segment files, so 20 MB of values make hundreds of files.
    private static func fill(_ path: String, keys: Int) throws {
        var options = StoreOptions()
        options.durability = .buffered
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.level1Bytes = 64 << 10
        let store = try Store(path: path, options: options)
        var generator = SeededRandom(seed: 7)
        for start in stride(from: 0, to: keys, by: 500) {
            try store.write { tx in
                for i in start..<min(start + 500, keys) {
                    let value = (0..<128).map { _ in generator.next() }.withUnsafeBytes { Array($0) }
                    try tx.put(Array("k\(i)".utf8), value)
                }
            }
        }
        try store.compact()
        let files = try store.stats().levels.reduce(0) { $0 + $1.files }
        #expect(files >= 200, "the store has \(files) segment files; the test needs hundreds")
        try store.close()
    }
}
