import Foundation
@_spi(Engine) import StrataFormat

/// The data a reader can see: the active memtable, sealed memtables waiting for their flush,
/// and the segment files of every level. A Version never changes; a new one replaces it when
/// a memtable is sealed or a flush or compaction is installed. Readers hold a version (ARC
/// keeps it, and the files it lists, alive) plus the commit sequence they read at.
///
/// Invariants:
/// 1. For one user key, a newer source holds newer versions: the active memtable, then
///    sealed memtables newest first, then level 0 newest first, then levels 1, 2, ...
/// 2. Files of a level >= 1 do not overlap and are sorted by key.
/// 3. `sealedTables` lists `sealed`, in the same order, unretained: `sealed` keeps them alive
///    for as long as the version lives.
final class Version: Sendable {
    let memtable: MemTable
    /// Newest first.
    let sealed: [MemTable]
    /// `sealed` again, unretained (invariant 3): a point read visits each sealed table twice,
    /// and walking the array retained and released every table each time, writes to a line
    /// that every reader thread shares (docs/benchmarks.md, 2026-11-26, last: "point reads
    /// that retain nothing").
    private let sealedTables: UnretainedList<MemTable>
    /// `levels[0]` newest first; deeper levels sorted by smallest key.
    let levels: [[SegmentTable]]
    /// The store these files belong to (References/StoreIdentity.swift).
    let storeID: UUID
    /// The newest sequence of a deletion marker that compaction dropped from these files'
    /// ancestors: for a key with no entry left, deletions up to it can no longer be told apart
    /// from no change (References/HistoryProbe.swift).
    let droppedDeletions: UInt64

    /// The key ranges of `levels`' files, packed for point reads.
    let ranges: FileRanges

    /// `ranges`, when given, must be those of `levels` (a version that keeps its files
    /// shares them).
    init(
        memtable: MemTable, sealed: [MemTable] = [], levels: [[SegmentTable]] = Array(repeating: [], count: ManifestFormat.maxLevels),
        storeID: UUID, droppedDeletions: UInt64, ranges: FileRanges? = nil
    ) {
        self.memtable = memtable
        self.sealed = sealed
        sealedTables = UnretainedList(sealed)
        self.levels = levels
        self.ranges = ranges ?? FileRanges(levels: levels)
        self.storeID = storeID
        self.droppedDeletions = droppedDeletions
        #if STRATA_INTERNAL_CHECKS
            for level in levels.dropFirst() {
                for (a, b) in zip(level, level.dropFirst()) {
                    assert(a.meta.largestKey.lexicographicallyPrecedes(b.meta.smallestKey), "Version invariant 2: files of a level overlap")
                }
            }
            if ranges != nil { self.ranges.checkInvariants(levels: levels) }
            assert(
                sealedTables.count == sealed.count && sealed.indices.allSatisfy { sealedTables[$0].takeUnretainedValue() === sealed[$0] },
                "Version invariant 3: the unretained list is not `sealed`")
        #endif
    }

    deinit {
        sealedTables.deallocate()
    }

    func replacing(memtable: MemTable? = nil, sealed: [MemTable]? = nil, levels: [[SegmentTable]]? = nil, droppedDeletions: UInt64? = nil) -> Version {
        Version(
            memtable: memtable ?? self.memtable, sealed: sealed ?? self.sealed, levels: levels ?? self.levels, storeID: storeID,
            droppedDeletions: droppedDeletions ?? self.droppedDeletions, ranges: levels == nil ? ranges : nil)
    }

    /// The value of `key` at `sequence`: a copy of what `borrowValue` finds.
    func get(_ key: [UInt8], at sequence: UInt64) throws -> [UInt8]? {
        try key.withUnsafeBytes { raw in try borrowValue(raw, at: sequence) }.withBytes { $0.map(copyBytes) }
    }

    /// The newest value of `key` at or below `sequence`, nil when that version is a deletion
    /// or there is none, borrowed: nothing is copied or allocated for it. The bytes stay
    /// valid while the caller holds this version and `owner`, the decoded block they sit in
    /// (nil, or a mapping this version holds anyway, for a memtable node or a mapped file).
    /// Not generic, so that a public generic caller does not make the whole lookup generic.
    func borrowValue(_ key: UnsafeRawBufferPointer, at sequence: UInt64) throws -> BorrowedValue {
        let hash = hashKey(key)
        // Start every memtable's index miss now, without waiting: the files' first misses
        // are started next, and the memtables are looked in only after that, when their
        // slots have had that time to arrive. Most reads of a large store find nothing in the
        // memtables, and looking there first made each of them wait for that miss alone.
        memtable.prefetchIndex(hash: hash)
        for i in 0..<sealedTables.count { sealedTables[i]._withUnsafeGuaranteedRef { $0.prefetchIndex(hash: hash) } }
        do {
            return try borrowValueFromFiles(key, hash: hash, at: sequence)
        } catch let error as FormatError {
            // A damaged block, met by the block cursor (StrataFormat).
            throw StoreError(error, file: error.file)
        }
    }

    /// The memtables' answer, newest table first: the newest version of `key` at or below
    /// `sequence`, or nil when no memtable holds one. A node's bytes live in its table's
    /// arena, which this version keeps alive.
    @inline(__always)
    private func visibleInMemtables(_ key: UnsafeRawBufferPointer, hash: UInt64, at sequence: UInt64) -> BorrowedValue? {
        if let node = memtable.findVisible(key, hash: hash, at: sequence) {
            return BorrowedValue(bytes: node.isTombstone ? nil : node.value, owner: nil)
        }
        for i in 0..<sealedTables.count {
            if let node = sealedTables[i]._withUnsafeGuaranteedRef({ $0.findVisible(key, hash: hash, at: sequence) }) {
                return BorrowedValue(bytes: node.isTombstone ? nil : node.value, owner: nil)
            }
        }
        return nil
    }

    /// The rest of the lookup: the files' misses started, then the memtables (`hash` is the
    /// key's `hashKey`), then level 0 newest first, then one file per deeper level.
    private func borrowValueFromFiles(_ key: UnsafeRawBufferPointer, hash memtableHash: UInt64, at sequence: UInt64) throws -> BorrowedValue {
        // The files come from `ranges`, unretained (FileRanges invariant 3): this version
        // holds them all, and a retain and release per file visited, or of a level's array,
        // would be a write to memory every reader thread shares.
        let ranges = self.ranges
        let deepest = ranges.deepestLevel
        let level0Count = ranges.fileCount(level: 0)
        if deepest == 0 && level0Count == 0 {
            return visibleInMemtables(key, hash: memtableHash, at: sequence) ?? BorrowedValue(bytes: nil, owner: nil)
        }
        // One hash serves every filter. Each filter probe is one cache line, usually a miss
        // on a large store: start them all before testing the first, so they overlap
        // instead of queueing one behind another.
        let hash = BloomFilter.hash(key)
        let levelCount = levels.count
        return try withUnsafeTemporaryAllocation(of: Unmanaged<SegmentTable>?.self, capacity: levelCount) { candidates in
            // The one file of each deeper level whose range holds the key, found once.
            for file in 0..<level0Count where ranges.covers(level: 0, file: file, key) {
                ranges.table(level: 0, file: file)._withUnsafeGuaranteedRef { $0.tail.filter.prefetchLine(hash: hash) }
            }
            for index in 1..<levelCount {
                let found = ranges.fileCount(level: index) == 0 ? nil : ranges.file(level: index, containing: key)
                let table = found.map { ranges.table(level: index, file: $0) }
                candidates.initializeElement(at: index, to: table)
                if let table, index != deepest {
                    table._withUnsafeGuaranteedRef { $0.tail.filter.prefetchLine(hash: hash) }
                }
            }
            // The deepest level holds most keys: start its block's misses now, behind the
            // filters'. So does the nearest level above it with a candidate: in a settled
            // store it holds about a tenth as many, but right after a load as many or more
            // (a fill of 1,000,000 keys left half of them in level 1), and a read that finds
            // its key there would otherwise wait for the filter, then the index, then the block.
            let deepestBlock = deepest > 0 ? candidates[deepest]?._withUnsafeGuaranteedRef { $0.prefetchBlock(key, sequence: sequence) } : nil
            var secondLevel = deepest - 1
            while secondLevel > 0 && candidates[secondLevel] == nil { secondLevel -= 1 }
            let secondBlock = secondLevel > 0 ? candidates[secondLevel]?._withUnsafeGuaranteedRef { $0.prefetchBlock(key, sequence: sequence) } : nil
            if let found = visibleInMemtables(key, hash: memtableHash, at: sequence) { return found }
            return try ReadScratch.withKeyBuffer { buffer in
                for file in 0..<level0Count where ranges.covers(level: 0, file: file, key) {
                    let found = try ranges.table(level: 0, file: file)._withUnsafeGuaranteedRef {
                        try $0.borrowEntry(key, hash: hash, at: sequence, keyBuffer: buffer)
                    }
                    if let found { return found }
                }
                for index in 1..<levelCount {
                    guard let table = candidates[index] else { continue }
                    // Most data lives in the deepest level: a read that reaches it usually
                    // finds its key there, so its filter is skipped (a miss then costs one
                    // block read).
                    let found = try table._withUnsafeGuaranteedRef {
                        try $0.borrowEntry(
                            key, hash: index == deepest ? nil : hash, at: sequence, keyBuffer: buffer,
                            block: index == deepest ? deepestBlock : (index == secondLevel ? secondBlock : nil))
                    }
                    if let found { return found }
                }
                return BorrowedValue(bytes: nil, owner: nil)
            }
        }
    }

    /// The index of the first file whose largest key is >= `key`.
    static func firstFile(in level: [SegmentTable], endingAtOrAfter key: UnsafeRawBufferPointer) -> Int {
        var low = 0
        var high = level.count
        while low < high {
            let mid = (low + high) / 2
            if level[mid].largestKey.withUnsafeBytes({ compareKeys($0, key) < 0 }) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    static func firstFile(in level: [SegmentTable], endingAtOrAfter key: [UInt8]) -> Int {
        key.withUnsafeBytes { firstFile(in: level, endingAtOrAfter: $0) }
    }

    var memtableBytes: Int { sealed.reduce(memtable.approximateBytes) { $0 + $1.approximateBytes } }
    var memtableEntries: Int { sealed.reduce(memtable.count) { $0 + $1.count } }
}

/// A value a point read found, borrowed (`Version.borrowValue`): `bytes` is nil for a deletion
/// or no version at all, and stays valid while `owner` and the version read are alive.
struct BorrowedValue {
    let bytes: UnsafeRawBufferPointer?
    let owner: AnyObject?

    /// Runs `body` on `bytes` with `owner` kept alive until it returns.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withExtendedLifetime(owner) { try body(bytes) }
    }
}

/// What one read sees: a version and a commit sequence inside it.
struct ReadView: Sendable {
    let version: Version
    let sequence: UInt64
}
