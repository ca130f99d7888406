// Generated seeds for the store-file fuzz targets: small files of each kind, written with the
// format module's own encoders, that reach what the checked-in store fixtures do not (zlib
// blocks, sync marks, a record across a WAL block boundary, manifest fields of format 1.1).
// `scripts/fuzz seeds TARGET` writes them into Fixtures/fuzz/TARGET.
@_spi(Engine) import StrataFormat

enum StoreFileSeeds {
    /// `payloads` as the pieces `StoreFileFuzzing.framedRecords` cuts an input into.
    static func pieces(_ payloads: [[UInt8]]) -> [UInt8] {
        payloads.flatMap { [UInt8($0.count)] + $0 }
    }

    static func wal() -> [(String, [UInt8])] {
        func segment(_ payloads: [[UInt8]], major: UInt16 = WALFormat.majorVersion) -> [UInt8] {
            var bytes = WALFormat.SegmentHeader(segmentNumber: 1, majorVersion: major).encoded()
            for payload in payloads {
                payload.withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
            }
            return bytes
        }
        func batch(_ sequence: UInt64, synced: UInt64 = 0, _ build: (inout BatchFormat.Encoder) -> Void) -> [UInt8] {
            var encoder = BatchFormat.Encoder(sequence: sequence, syncedThrough: synced)
            build(&encoder)
            return encoder.finish()
        }
        let first = batch(1) {
            $0.put(Array("apple".utf8), Array("red".utf8))
            $0.delete(Array("banana".utf8))
        }
        let second = batch(2, synced: 32) { $0.put([0, 0xFF, 0x80], []) }
        let mark = BatchFormat.syncMark(sequence: 2, syncedThrough: 80)
        // One FULL record that ends 22 bytes before the first block does, so the next one is
        // split into a FIRST fragment and a LAST one in the second block. The filler's batch
        // takes 29 bytes besides its value, and its fragment header 7.
        let fillerValue = WALFormat.blockSize - 22 - segment([first, second]).count - WALFormat.fragmentHeaderSize - 29
        let filler = batch(3) { $0.put(Array("big".utf8), Array(repeating: 0x61, count: fillerValue)) }
        let spanning = batch(4) { $0.put(Array("after".utf8), Array(repeating: 0x62, count: 60)) }
        return [
            ("generated-batches-and-sync-mark.log", segment([first, second, mark])),
            ("generated-format-1.0.log", segment([first], major: 1)),
            ("generated-header-only.log", segment([])),
            ("generated-record-across-blocks.log", segment([first, second, filler, spanning])),
            ("generated-batch-payload.bin", batch(7, synced: 100) { $0.put(Array("k".utf8), Array("v".utf8)) }),
            // After the manifest's last sequence (0), the records of the first seed.
            ("generated-framed-records.bin", [UInt8](repeating: 0, count: 8) + pieces([first, second, mark]))
        ]
    }

    static func segments() throws -> [(String, [UInt8])] {
        func build(compression: Int32?, blockSize: Int, count: Int) throws -> [UInt8] {
            var builder = SegmentBuilder(compressionLevel: compression, blockSize: blockSize)
            for i in 0..<count {
                let key = Array("key/\(i / 10)\(i % 10)".utf8)
                // Two versions of every third key, the newer a tombstone.
                if i % 3 == 0 { try builder.delete(key, sequence: UInt64(100 + i)) }
                try builder.put(key, Array(repeating: UInt8(0x41 + i % 26), count: 12), sequence: UInt64(1 + i))
            }
            return builder.finish()
        }
        var block = SegmentBlockBuilder(restartInterval: 2)
        for (i, name) in ["a", "ab", "abc", "b", "ba"].enumerated() {
            block.add(
                key: SegmentFormat.internalKey(userKey: Array(name.utf8), sequence: UInt64(9 - i), kind: i == 3 ? .tombstone : .value),
                value: i == 3 ? [] : [UInt8(i)])
        }
        var filter = BloomFilter.Builder()
        for name in ["a", "b", "c"] { filter.add(Array(name.utf8)) }
        return [
            ("generated-zlib-blocks.sst", try build(compression: 6, blockSize: 200, count: 24)),
            ("generated-small-blocks.sst", try build(compression: nil, blockSize: 64, count: 12)),
            ("generated-empty.sst", try build(compression: nil, blockSize: 64, count: 0)),
            ("generated-data-block.bin", block.finish()),
            ("generated-filter-block.bin", filter.finish().encoded()),
            ("generated-index-block.bin", StoreFileFuzzing.fixedIndexBlock)
        ]
    }

    static func manifest() -> [(String, [UInt8])] {
        func file(_ edits: [VersionEdit]) -> [UInt8] {
            var bytes = ManifestFormat.Header(fileNumber: 9).encoded()
            for edit in edits {
                edit.encoded().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &bytes, fileOffset: 0) }
            }
            return bytes
        }
        func meta(_ level: Int, _ number: UInt64, _ smallest: String, _ largest: String) -> SegmentMeta {
            SegmentMeta(
                level: level, fileNumber: number, fileSize: 4096, entryCount: 10, smallestSequence: 1, largestSequence: 10,
                smallestKey: Array(smallest.utf8), largestKey: Array(largest.utf8))
        }
        let snapshot = VersionEdit(
            logNumber: 4, lastSequence: 10, nextFileNumber: 12, added: [meta(0, 5, "a", "m"), meta(2, 6, "n", "z")],
            storeIdentifier: Array(1...16), droppedDeletions: 3)
        let move = VersionEdit(lastSequence: 11, added: [meta(1, 5, "a", "m")], removed: [(0, 5)])
        // A field of a later minor version (tag 9, sized), which this version skips.
        let unknown: [UInt8] = [0x02, 0x0C, 0x09, 0x02, 0xAB, 0xCD]
        var withUnknown = file([snapshot])
        unknown.withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &withUnknown, fileOffset: 0) }
        return [
            ("generated-snapshot-and-move.log", file([snapshot, move])),
            ("generated-unknown-sized-field.log", withUnknown),
            ("generated-edit-payload.bin", snapshot.encoded()),
            ("generated-framed-records.bin", pieces([snapshot.encoded(), move.encoded(), unknown]))
        ]
    }

    static func identity() -> [(String, [UInt8])] {
        [
            ("generated-identity", StoreIdentityFormat.encode()),
            ("generated-name-wal", Array(WALFormat.fileName(3).utf8)),
            ("generated-name-manifest", Array(ManifestFormat.fileName(18_446_744_073_709_551_615).utf8)),
            ("generated-name-temporary", Array(ManifestFormat.temporaryName(7).utf8)),
            ("generated-name-segment", Array(ManifestFormat.segmentFileName(12).utf8))
        ]
    }
}
