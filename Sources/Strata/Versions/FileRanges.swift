@_spi(Engine) import StrataFormat

/// The smallest and largest key of every file of a Version, packed into one buffer: a point
/// read finds the file of each level that may hold its key by a binary search here, touching
/// a few contiguous cache lines, where a search through the files' own metadata follows three
/// pointers (table, metadata, key array) per step, each a cache miss on a large store.
///
/// Invariants:
/// 1. Immutable after `init`; any number of threads read it.
/// 2. For level `l`, files `levelStarts[l]..<levelStarts[l + 1]` in the order of
///    `Version.levels[l]`; file `f`'s smallest key is bytes `offsets[2f]..<offsets[2f + 1]`
///    and its largest `offsets[2f + 1]..<offsets[2f + 2]`, and `tables[f]` is the file.
/// 3. `tables` holds the files unretained: every Version built with these ranges holds the
///    same `levels`, so the files outlive any read through a Version that uses them.
final class FileRanges: @unchecked Sendable {
    // @unchecked Sendable: the buffers are written in init only (invariant 1) and freed in
    // deinit.
    private let bytes: UnsafeMutableRawPointer
    private let offsets: UnsafeMutablePointer<Int>
    private let levelStarts: [Int]
    /// The files, unretained (invariant 3): a point read visits several per get, and from
    /// `Version.levels` each visit retained and released the level's array and the file, a
    /// write to a cache line every reader thread shares.
    private let tables: UnretainedList<SegmentTable>
    /// The deepest level holding a file, 0 if none does.
    let deepestLevel: Int

    init(levels: [[SegmentTable]]) {
        var starts = [0]
        var byteCount = 0
        for level in levels {
            starts.append(starts[starts.count - 1] + level.count)
            for table in level { byteCount += table.smallestKey.count + table.largestKey.count }
        }
        levelStarts = starts
        bytes = .allocate(byteCount: max(byteCount, 1), alignment: 8)
        offsets = .allocate(capacity: 2 * starts[starts.count - 1] + 1)
        tables = UnretainedList(levels.flatMap { $0 })
        deepestLevel = levels.indices.last { !levels[$0].isEmpty } ?? 0
        var end = 0
        var next = 0
        offsets[0] = 0
        for level in levels {
            for table in level {
                for key in [table.smallestKey, table.largestKey] {
                    key.withUnsafeBytes { if let base = $0.baseAddress { (bytes + end).copyMemory(from: base, byteCount: $0.count) } }
                    end += key.count
                    next += 1
                    offsets[next] = end
                }
            }
        }
    }

    deinit {
        bytes.deallocate()
        offsets.deallocate()
        tables.deallocate()
    }

    /// Invariant 2 against `levels`, for a version handed ranges built for another; debug
    /// builds only.
    func checkInvariants(levels: [[SegmentTable]]) {
        #if STRATA_INTERNAL_CHECKS
            precondition(levelStarts.count == levels.count + 1, "FileRanges invariant 2: built for another number of levels")
            for (level, files) in levels.enumerated() {
                precondition(levelStarts[level + 1] - levelStarts[level] == files.count, "FileRanges invariant 2: level \(level) has other files")
                for (i, table) in files.enumerated() {
                    let f = levelStarts[level] + i
                    precondition(
                        Array(key(2 * f)) == table.smallestKey && Array(key(2 * f + 1)) == table.largestKey,
                        "FileRanges invariant 2: file \(i) of level \(level) has another range")
                    precondition(
                        tables[f].toOpaque() == Unmanaged.passUnretained(table).toOpaque(),
                        "FileRanges invariant 2: file \(i) of level \(level) is another file")
                }
            }
        #endif
    }

    @inline(__always)
    private func key(_ slot: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes + offsets[slot], count: offsets[slot + 1] - offsets[slot])
    }

    /// How many files `level` holds.
    @inline(__always)
    func fileCount(level: Int) -> Int {
        levelStarts[level + 1] - levelStarts[level]
    }

    /// File `file` of `level`, unretained (invariant 3): valid while the caller holds a
    /// Version built with these ranges.
    @inline(__always)
    func table(level: Int, file: Int) -> Unmanaged<SegmentTable> {
        tables[levelStarts[level] + file]
    }

    /// Whether `key` lies in the range of file `file` of `level`.
    @inline(__always)
    func covers(level: Int, file: Int, _ key: UnsafeRawBufferPointer) -> Bool {
        let f = levelStarts[level] + file
        return compareKeys(key, self.key(2 * f)) >= 0 && compareKeys(key, self.key(2 * f + 1)) <= 0
    }

    /// The index in `level` (sorted, not overlapping: level 1 and deeper) of the file whose
    /// range holds `key`, if one does.
    func file(level: Int, containing key: UnsafeRawBufferPointer) -> Int? {
        let first = levelStarts[level]
        var low = first
        var high = levelStarts[level + 1]
        // The first file whose largest key is >= `key`.
        while low < high {
            let mid = (low + high) / 2
            if compareKeys(self.key(2 * mid + 1), key) < 0 { low = mid + 1 } else { high = mid }
        }
        guard low < levelStarts[level + 1], compareKeys(key, self.key(2 * low)) >= 0 else { return nil }
        return low - first
    }
}
