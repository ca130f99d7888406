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
final class Version: Sendable {
    let memtable: MemTable
    /// Newest first.
    let sealed: [MemTable]
    /// `levels[0]` newest first; deeper levels sorted by smallest key.
    let levels: [[SegmentTable]]
    /// The store these files belong to (References/StoreIdentity.swift).
    let storeID: UUID
    /// The newest sequence of a deletion marker that compaction dropped from these files'
    /// ancestors: for a key with no entry left, deletions up to it can no longer be told apart
    /// from no change (References/HistoryProbe.swift).
    let droppedDeletions: UInt64

    init(
        memtable: MemTable, sealed: [MemTable] = [], levels: [[SegmentTable]] = Array(repeating: [], count: ManifestFormat.maxLevels),
        storeID: UUID, droppedDeletions: UInt64
    ) {
        self.memtable = memtable
        self.sealed = sealed
        self.levels = levels
        self.storeID = storeID
        self.droppedDeletions = droppedDeletions
        #if STRATA_INTERNAL_CHECKS
            for level in levels.dropFirst() {
                for (a, b) in zip(level, level.dropFirst()) {
                    assert(a.meta.largestKey.lexicographicallyPrecedes(b.meta.smallestKey), "Version invariant 2: files of a level overlap")
                }
            }
        #endif
    }

    func replacing(memtable: MemTable? = nil, sealed: [MemTable]? = nil, levels: [[SegmentTable]]? = nil, droppedDeletions: UInt64? = nil) -> Version {
        Version(
            memtable: memtable ?? self.memtable, sealed: sealed ?? self.sealed, levels: levels ?? self.levels, storeID: storeID,
            droppedDeletions: droppedDeletions ?? self.droppedDeletions)
    }

    /// The newest version of `key` at or below `sequence`: value, tombstone or absent.
    func get(_ key: [UInt8], at sequence: UInt64) throws -> [UInt8]? {
        let inMemory = key.withUnsafeBytes { raw -> MemTable.Lookup in
            let hash = hashKey(raw)
            if !sealed.isEmpty {
                // As with the filters below: start every table's index miss at once.
                var touched = memtable.touchIndex(hash: hash)
                for table in sealed { touched |= table.touchIndex(hash: hash) }
                keepAlive(UInt8(truncatingIfNeeded: touched))
            }
            let found = memtable.get(raw, hash: hash, at: sequence)
            if found != .absent { return found }
            for table in sealed {
                let found = table.get(raw, hash: hash, at: sequence)
                if found != .absent { return found }
            }
            return .absent
        }
        switch inMemory {
        case .value(let value): return value
        case .deleted: return nil
        case .absent: break
        }
        do {
            return try key.withUnsafeBytes { raw in try getFromFiles(raw, at: sequence) }
        } catch let error as FormatError {
            // A damaged block, met by the block cursor (StrataFormat).
            throw StoreError(error, file: error.file)
        }
    }

    /// The lookup's second half: level 0 newest first, then one file per deeper level.
    private func getFromFiles(_ key: UnsafeRawBufferPointer, at sequence: UInt64) throws -> [UInt8]? {
        var deepest = 0
        for index in levels.indices where !levels[index].isEmpty { deepest = index }
        if deepest == 0 && levels[0].isEmpty { return nil }
        // One hash serves every filter. Each filter probe is one cache line, usually a miss
        // on a large store: start them all before testing the first, so they overlap
        // instead of queueing one behind another.
        let hash = BloomFilter.hash(key)
        return try withUnsafeTemporaryAllocation(of: SegmentTable?.self, capacity: levels.count) { candidates in
            // The one file of each deeper level whose range holds the key, found once.
            var touched: UInt8 = 0
            for table in levels[0] where table.covers(key) { touched |= table.tail.filter.touchLine(hash: hash) }
            for index in 1..<levels.count {
                let table = levels[index].isEmpty ? nil : Version.file(in: levels[index], containing: key)
                candidates.initializeElement(at: index, to: table)
                if let table, index != deepest { touched |= table.tail.filter.touchLine(hash: hash) }
            }
            defer { candidates[1..<levels.count].deinitialize() }
            keepAlive(touched)
            // The deepest level holds most keys: start its block's misses now, behind the
            // filters'.
            let deepestBlock = deepest > 0 ? candidates[deepest]?.prefetchBlock(key, sequence: sequence) : nil
            let buffer = KeyBuffer()
            for table in levels[0] where table.covers(key) {
                switch try table.get(key, hash: hash, at: sequence, keyBuffer: buffer) {
                case .value(let value): return value
                case .deleted: return nil
                case .absent: continue
                }
            }
            for index in 1..<levels.count {
                guard let table = candidates[index] else { continue }
                // Most data lives in the deepest level: a read that reaches it usually finds
                // its key there, so its filter is skipped (a miss then costs one block read).
                switch try table.get(
                    key, hash: index == deepest ? nil : hash, at: sequence, keyBuffer: buffer,
                    block: index == deepest ? deepestBlock : nil)
                {
                case .value(let value): return value
                case .deleted: return nil
                case .absent: continue
                }
            }
            return nil
        }
    }

    /// The file of a sorted, non-overlapping level whose range holds `key`.
    static func file(in level: [SegmentTable], containing key: UnsafeRawBufferPointer) -> SegmentTable? {
        let i = firstFile(in: level, endingAtOrAfter: key)
        guard i < level.count, level[i].smallestKey.withUnsafeBytes({ compareKeys(key, $0) >= 0 }) else { return nil }
        return level[i]
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

/// Keeps a value the optimiser would otherwise drop, with the loads that made it.
@inline(never)
func keepAlive(_ value: UInt8) {
    _ = value
}

/// What one read sees: a version and a commit sequence inside it.
struct ReadView: Sendable {
    let version: Version
    let sequence: UInt64
}
