import Foundation
import Strata
import StrataFormat
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
        // A WAL segment needs a header carrying its name's number to count as the store's (a
        // file without one is set aside: AsideTests). A version 1.0 header makes the store
        // start a new segment after it, which needs the number after 2^64 - 1.
        let header = WALFormat.SegmentHeader(segmentNumber: .max, majorVersion: 1).encoded() + [UInt8](repeating: 0, count: 1024)
        let contents = name.hasPrefix("wal-") ? Data(header) : Data()
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
