// A compaction gives back the page cache of each input file it has read to its end
// (RawFileIterator), so the outputs it writes meanwhile land in pages just freed.
import Foundation
@_spi(Engine) import StrataFormat
import StrataTestSupport
import Testing

@_spi(Testing) @testable import Strata

@Suite struct CompactionPageCacheTests {
    @Test func everyInputReadToItsEndHasItsCachedPagesDropped() throws {
        let fileSystem = SimulatedFileSystem()
        var options = APITestSimulated.options(fileSystem)
        options.durability = .buffered
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        // Level 0 grows untouched until `compact()` merges it.
        options.level0CompactionTrigger = 100
        options.level0StopWritesTrigger = 200
        options.runsBackgroundWorkInline = true
        let store = try Store(path: APITestSimulated.path, options: options)
        defer { try? store.close() }
        let value = [UInt8](repeating: 0x42, count: 200)
        for round in 0..<4 {
            try store.write { tx in
                for i in 0..<400 { try tx.put(Array("key\(i * 4 + round)".utf8), value) }
            }
        }
        let level0 = try store.stats().levels[0].files
        try #require(level0 >= 2, "level 0 holds \(level0) files")

        // The files the merge will read, with their sizes.
        var inputs: [String: Int64] = [:]
        for name in try fileSystem.listDirectory(APITestSimulated.path) where ManifestFormat.number(fromSegmentName: name) != nil {
            let path = fileSystem.path(APITestSimulated.path, name)
            let handle = try fileSystem.openFileForReading(path)
            inputs[path] = try handle.size()
            try handle.close()
        }
        try #require(inputs.count >= 2)
        #expect(Self.segmentDrops(fileSystem).isEmpty, "pages dropped before any compaction: \(Self.segmentDrops(fileSystem))")

        try store.compact()
        let dropped = Self.segmentDrops(fileSystem)
        for (path, size) in inputs {
            #expect(dropped[path] == size, "\(path): \(size) bytes, \(dropped[path] ?? 0) dropped")
        }
        // Nothing the merge wrote was dropped: readers will want those pages. (The file the
        // memtable was flushed to first was an input too.)
        let outputs = try fileSystem.listDirectory(APITestSimulated.path).filter { ManifestFormat.number(fromSegmentName: $0) != nil }
        try #require(!outputs.isEmpty)
        for name in outputs {
            let path = fileSystem.path(APITestSimulated.path, name)
            #expect(inputs[path] == nil && dropped[path] == nil, "\(path): an output, \(dropped[path] ?? 0) bytes dropped")
        }
    }

    /// The drops of segment files only (the WAL writer gives back its written pages too).
    static func segmentDrops(_ fileSystem: SimulatedFileSystem) -> [String: Int64] {
        fileSystem.droppedCacheBytes.filter { path, _ in
            ManifestFormat.number(fromSegmentName: String(path.split(separator: "/").last ?? "")) != nil
        }
    }
}
