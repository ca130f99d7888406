/// The entries of a key range, in key order (or reverse), as a snapshot or transaction saw
/// them when the scan was made. Iterating is lazy: entries are read as you go, so a scan can
/// be stopped early at no cost. Iterate it inside the transaction's closure.
public struct Scan: Sequence {
    let version: Version
    let sequence: UInt64
    let lower: [UInt8]
    let upper: [UInt8]?
    let reverse: Bool
    /// A write transaction's own uncommitted writes inside the range, sorted in scan order;
    /// they shadow the store's data.
    let overlay: [VersionedEntry]
    /// Where a read error met while iterating goes: `Sequence` iteration cannot throw, so the
    /// iteration ends and the transaction's closure throws the error when it returns.
    let errors: ReadErrors

    /// True when the memtable alone holds everything the scan can see: it is then walked
    /// directly, without a merge.
    private var isMemtableOnly: Bool {
        overlay.isEmpty && version.sealed.isEmpty && version.levels.allSatisfy(\.isEmpty)
    }

    func makeMerge(includingDeletions: Bool = false) -> MergingCursor {
        var sources: [MergeSource] = []
        if !overlay.isEmpty { sources.append(OverlaySource(entries: overlay)) }
        for table in [version.memtable] + version.sealed {
            sources.append(MemorySource(table: table, sequence: sequence, lower: lower, upper: upper, reverse: reverse))
        }
        for file in version.levels[0] {
            sources.append(FileSource(files: [file], sequence: sequence, lower: lower, upper: upper, reverse: reverse))
        }
        for level in version.levels.dropFirst() where !level.isEmpty {
            sources.append(FileSource(files: level, sequence: sequence, lower: lower, upper: upper, reverse: reverse))
        }
        return MergingCursor(sources: sources, reverse: reverse, includingDeletions: includingDeletions)
    }

    public struct Iterator: IteratorProtocol {
        private var cursor: MemTable.Cursor?
        private let merge: MergingCursor?
        private let errors: ReadErrors

        init(_ scan: Scan) {
            errors = scan.errors
            if scan.isMemtableOnly {
                cursor = MemTable.Cursor(table: scan.version.memtable, sequence: scan.sequence, lower: scan.lower, upper: scan.upper, reverse: scan.reverse)
                merge = nil
            } else {
                cursor = nil
                merge = scan.makeMerge()
            }
        }

        public mutating func next() -> Entry? {
            if cursor != nil {
                // Tombstones are skipped without copying anything.
                while let node = cursor!.nextNode() {
                    if !node.isTombstone { return Entry(key: copyBytes(node.key), value: copyBytes(node.value)) }
                }
                return nil
            }
            guard let merge else { return nil }
            do {
                guard try merge.next() else { return nil }
                return Entry(key: copyBytes(merge.key), value: copyBytes(merge.value))
            } catch {
                errors.record(error)
                return nil
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// The number of entries, found by iterating the scan.
    public var count: Int {
        var n = 0
        do {
            try forEachBorrowed { _, _ in
                n += 1
                return true
            }
        } catch {
            errors.record(error)
        }
        return n
    }

    /// Visits each entry with its key and value borrowed from the store's memory, copying
    /// nothing; `body` returns false to stop. The buffers are valid only during the call.
    func forEachBorrowed(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        if isMemtableOnly {
            var cursor = MemTable.Cursor(table: version.memtable, sequence: sequence, lower: lower, upper: upper, reverse: reverse)
            while let node = cursor.nextNode() {
                if !node.isTombstone, try !body(node.key, node.value) { return }
            }
            return
        }
        let merge = makeMerge()
        while true {
            let more: Bool
            do {
                more = try merge.next()
            } catch {
                throw StoreError.wrapping(error, while: "reading a scan")
            }
            guard more, try body(merge.key, merge.value) else { return }
        }
    }
}

/// The first error a transaction's scans met while being iterated (see `Scan.errors`). A
/// transaction and its scans stay on one thread.
final class ReadErrors {
    private(set) var first: (any Error)? = nil

    func record(_ error: any Error) {
        if first == nil { first = StoreError.wrapping(error, while: "reading a scan") }
    }

    func check() throws {
        if let first { throw first }
    }

    /// Forgets the error recorded, for reuse by another transaction (`ReadScratch`).
    func reset() {
        first = nil
    }
}

extension Scan {
    /// The smallest key greater than every key that starts with `prefix`, or nil when there
    /// is none (the prefix is empty or all 0xFF): the exclusive upper bound of a prefix range.
    /// `scan(prefix:)` is `scan(from: prefix, to: Scan.upperBound(forPrefix: prefix))`.
    public static func upperBound(forPrefix prefix: [UInt8]) -> [UInt8]? {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return nil
    }
}

/// `lower <= key < upper` (no upper bound when `upper` is nil), bytewise: the ranges scans,
/// observations and change feeds cover.
func keyIsIn(_ key: [UInt8], lower: [UInt8], upper: [UInt8]?) -> Bool {
    !key.lexicographicallyPrecedes(lower) && (upper.map { key.lexicographicallyPrecedes($0) } ?? true)
}
