import Foundation
import Strata
import StrataTestSupport
import Testing

// A store directory holding a file numbered 2^64 - 1 (a crafted or foreign file: Strata never
// gets near it) leaves no number for the next file. Opening such a store trapped on the
// `+ 1`; it must refuse with a .corruption error that names the file, and open again once the
// file is moved out.

@Suite struct LargestFileNumberTests {
    @Test(arguments: ["seg-18446744073709551615.sst", "wal-18446744073709551615.log"])
    func aFileNumberedAtTheLimitIsRefusedNotTrapped(name: String) throws {
        let directory = try TemporaryDirectory(label: "largest-number")
        defer { directory.remove() }
        let path = directory.path("store")
        let store = try Store(path: path)
        try store.write { tx in try tx.put([1], [2]) }
        try store.close()
        let stray = path + "/" + name
        // A WAL segment needs its header to count: the stray one is a copy of the store's own.
        let wal = try FileManager.default.contentsOfDirectory(atPath: path).first { $0.hasPrefix("wal-") }
        let contents = name.hasPrefix("wal-") ? try Data(contentsOf: URL(fileURLWithPath: path + "/" + wal!)) : Data()
        #expect(FileManager.default.createFile(atPath: stray, contents: contents))

        do {
            _ = try Store(path: path)
            Issue.record("a store with \(name) opened")
        } catch let error as StoreError {
            #expect(error.code == .corruption, "\(error)")
            #expect(error.file?.hasSuffix(name) == true, "\(error)")
        }
        try FileManager.default.removeItem(atPath: stray)
        let reopened = try Store(path: path)
        #expect(try reopened.read { tx in try tx.get([1]) } == [2])
        try reopened.close()
    }
}
