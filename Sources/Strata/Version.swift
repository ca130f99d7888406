import StrataFormat

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

    init(memtable: MemTable, sealed: [MemTable] = [], levels: [[SegmentTable]] = Array(repeating: [], count: ManifestFormat.maxLevels)) {
        self.memtable = memtable
        self.sealed = sealed
        self.levels = levels
        #if STRATA_INTERNAL_CHECKS
        for level in levels.dropFirst() {
            for (a, b) in zip(level, level.dropFirst()) {
                assert(a.meta.largestKey.lexicographicallyPrecedes(b.meta.smallestKey), "Version invariant 2: files of a level overlap")
            }
        }
        #endif
    }

    func replacing(memtable: MemTable? = nil, sealed: [MemTable]? = nil, levels: [[SegmentTable]]? = nil) -> Version {
        Version(memtable: memtable ?? self.memtable, sealed: sealed ?? self.sealed, levels: levels ?? self.levels)
    }

    /// The newest version of `key` at or below `sequence`: value, tombstone or absent.
    func get(_ key: [UInt8], at sequence: UInt64) throws -> [UInt8]? {
        let inMemory = key.withUnsafeBytes { raw -> MemTable.Lookup in
            let found = memtable.get(raw, at: sequence)
            if found != .absent { return found }
            for table in sealed {
                let found = table.get(raw, at: sequence)
                if found != .absent { return found }
            }
            return .absent
        }
        switch inMemory {
        case .value(let value): return value
        case .deleted: return nil
        case .absent: break
        }
        var deepest = 0
        for index in levels.indices where !levels[index].isEmpty { deepest = index }
        if deepest == 0 && levels[0].isEmpty { return nil }
        let buffer = KeyBuffer()
        for table in levels[0] where covers(table, key) {
            switch try table.get(key, at: sequence, keyBuffer: buffer) {
            case .value(let value): return value
            case .deleted: return nil
            case .absent: continue
            }
        }
        for index in 1..<levels.count where !levels[index].isEmpty {
            guard let table = Version.file(in: levels[index], containing: key) else { continue }
            // Most data lives in the deepest level: a read that reaches it usually finds its key
            // there, so its filter is skipped (a miss then costs one block read).
            switch try table.get(key, at: sequence, keyBuffer: buffer, useFilter: index != deepest) {
            case .value(let value): return value
            case .deleted: return nil
            case .absent: continue
            }
        }
        return nil
    }

    private func covers(_ table: SegmentTable, _ key: [UInt8]) -> Bool {
        !key.lexicographicallyPrecedes(table.meta.smallestKey) && !table.meta.largestKey.lexicographicallyPrecedes(key)
    }

    /// The file of a sorted, non-overlapping level whose range holds `key`.
    static func file(in level: [SegmentTable], containing key: [UInt8]) -> SegmentTable? {
        let i = firstFile(in: level, endingAtOrAfter: key)
        guard i < level.count, !key.lexicographicallyPrecedes(level[i].meta.smallestKey) else { return nil }
        return level[i]
    }

    /// The index of the first file whose largest key is >= `key`.
    static func firstFile(in level: [SegmentTable], endingAtOrAfter key: [UInt8]) -> Int {
        var low = 0, high = level.count
        while low < high {
            let mid = (low + high) / 2
            if level[mid].meta.largestKey.lexicographicallyPrecedes(key) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    var memtableBytes: Int { sealed.reduce(memtable.approximateBytes) { $0 + $1.approximateBytes } }
    var memtableEntries: Int { sealed.reduce(memtable.count) { $0 + $1.count } }
}

/// What one read sees: a version and a commit sequence inside it.
struct ReadView: Sendable {
    let version: Version
    let sequence: UInt64
}
