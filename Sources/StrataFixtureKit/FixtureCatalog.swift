import StrataFormat

/// Every fixture under Fixtures/stores. Each starts from `CleanStore` and changes one thing.
public enum FixtureCatalog {
    public static func all() -> [FixtureCase] {
        let clean = CleanStore()
        let l1 = CleanStore.level1Segment
        let l1Footer = clean.footer(of: l1)
        var cases: [FixtureCase] = []

        func add(
            _ name: String, _ damage: String, code: String?, severity: String?, file: String?, exit: Int32,
            withRepair: Int32? = nil, _ change: (inout FixtureStore) -> Void
        ) {
            var store = clean.store
            change(&store)
            cases.append(
                FixtureCase(
                    name: name, damage: damage, expectedCode: code, expectedSeverity: severity, expectedFile: file,
                    exitStatus: exit, exitStatusWithRepair: withRepair, store: store))
        }

        add(
            "clean", "nothing: one level 0 and one level 1 segment, a manifest of two records, two WAL segments continuing the sequence",
            code: nil, severity: nil, file: nil, exit: 0
        ) { _ in }

        add(
            "flipped-data-block", "one bit flipped in the first data block of the level 1 segment",
            code: "segment.checksum", severity: "error", file: l1, exit: 4
        ) { store in
            store.flipBit(in: l1, at: 8)
        }
        add(
            "flipped-index-block", "one bit flipped in the index block of the level 1 segment",
            code: "segment.checksum", severity: "error", file: l1, exit: 4
        ) { store in
            store.flipBit(in: l1, at: Int(l1Footer.indexHandle.offset) + 1)
        }
        add(
            "flipped-filter-block", "one bit flipped in the Bloom filter block of the level 1 segment",
            code: "segment.checksum", severity: "error", file: l1, exit: 4
        ) { store in
            store.flipBit(in: l1, at: Int(l1Footer.filterHandle.offset) + 1)
        }
        add(
            "flipped-footer", "one bit flipped in the entry count of the level 1 segment's footer",
            code: "segment.checksum", severity: "error", file: l1, exit: 4
        ) { store in
            store.flipBit(in: l1, at: store.files[l1]!.count - SegmentFormat.footerSize + 48)
        }
        add(
            "flipped-wal-record", "one bit flipped in the first record of the older WAL segment, which the newer one follows, so the bytes had been synced",
            code: "wal.corruption", severity: "error", file: CleanStore.olderWAL, exit: 4
        ) { store in
            store.flipBit(in: CleanStore.olderWAL, at: clean.olderWALRecordOffsets[0] + WALFormat.fragmentHeaderSize + 1)
        }
        add(
            "flipped-manifest-record", "one bit flipped in the manifest's first record (its snapshot), which another record follows",
            code: "manifest.corruptRecord", severity: "error", file: CleanStore.manifest, exit: 4
        ) { store in
            store.flipBit(in: CleanStore.manifest, at: clean.manifestRecordOffsets[0] + WALFormat.fragmentHeaderSize + 1)
        }
        add(
            "truncated-segment", "the level 1 segment cut to half its size",
            code: "segment.truncated", severity: "error", file: l1, exit: 4
        ) { store in
            store.truncate(l1, to: store.files[l1]!.count / 2)
        }
        add(
            "missing-segment", "the level 0 segment deleted while the manifest still lists it",
            code: "manifest.missingSegment", severity: "error", file: CleanStore.level0Segment, exit: 4
        ) { store in
            store.remove(CleanStore.level0Segment)
        }
        let neverWritten = SegmentMeta(
            level: 0, fileNumber: 5, fileSize: 180, entryCount: 2, smallestSequence: 7, largestSequence: 8,
            smallestKey: Array("banana".utf8), largestKey: Array("cherry".utf8))
        add(
            "manifest-names-missing-file", "a third manifest record adds segment 5, a file that was never written",
            code: "manifest.missingSegment", severity: "error", file: ManifestFormat.segmentFileName(5), exit: 4
        ) { store in
            store.files[CleanStore.manifest] = CleanStore.manifest(clean.manifestEdits + [VersionEdit(nextFileNumber: 6, added: [neverWritten])])
        }
        add(
            "torn-wal-tail", "the newer WAL segment cut in the middle of its last record, as a crash during an unsynced write leaves it",
            code: "wal.tornTail", severity: "warning", file: CleanStore.newerWAL, exit: 4, withRepair: 1
        ) { store in
            store.truncate(CleanStore.newerWAL, to: clean.newerWALRecordOffsets.last! + 10)
        }
        add(
            "unreferenced-segment", "an extra segment file, seg-0000000001.sst, that no manifest record lists",
            code: "file.unreferenced", severity: "warning", file: ManifestFormat.segmentFileName(1), exit: 4, withRepair: 1
        ) { store in
            store.files[ManifestFormat.segmentFileName(1)] = FixtureEncoding.segment(Array(CleanStore.level1Entries.prefix(3)))
        }
        add(
            "overlapping-level1", "the manifest puts both segments at level 1, where their key ranges (apple...fig, banana...kiwi) overlap",
            code: "manifest.overlap", severity: "error", file: CleanStore.manifest, exit: 4
        ) { store in
            var edits = clean.manifestEdits
            edits[1].added[0].level = 1
            store.files[CleanStore.manifest] = CleanStore.manifest(edits)
        }
        add(
            "torn-manifest-record", "a third manifest record cut short, as a crash during an append that was never acknowledged leaves it",
            code: "manifest.tornRecord", severity: "info", file: CleanStore.manifest, exit: 0
        ) { store in
            let torn = FixtureEncoding.manifest(number: 3, clean.manifestEdits + [VersionEdit(nextFileNumber: 6, added: [neverWritten])])
            store.files[CleanStore.manifest] = Array(torn.bytes.prefix(torn.recordOffsets[2] + 12))
        }
        add(
            "leftover-files", "files a crash can leave behind: an older manifest, a manifest .tmp, STRATA.tmp and a WAL segment already flushed",
            code: "file.unreferenced", severity: "warning", file: nil, exit: 4, withRepair: 1
        ) { store in
            store.files[ManifestFormat.fileName(1)] = FixtureEncoding.manifest(number: 1, [VersionEdit(logNumber: 1, lastSequence: 0, nextFileNumber: 2)]).bytes
            store.files[ManifestFormat.temporaryName(5)] =
                FixtureEncoding.manifest(
                    number: 5,
                    [
                        VersionEdit(logNumber: 3, lastSequence: 10, nextFileNumber: 6, added: [clean.level1Meta, clean.level0Meta])
                    ]
                ).bytes
            store.files[StoreIdentityFormat.fileName + ".tmp"] = StoreIdentityFormat.encode()
            store.files["wal-0000000002.log"] = FixtureEncoding.walSegment(number: 2, CleanStore.flushedTransactions).bytes
        }
        return cases
    }
}
