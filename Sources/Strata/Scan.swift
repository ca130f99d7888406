/// The entries of a key range, in key order (or reverse), as a snapshot or transaction saw
/// them when the scan was made. Iterating is lazy: entries are read as you go, so a scan can
/// be stopped early at no cost. Iterate it inside the transaction's closure.
public struct Scan: Sequence {
    let table: MemTable
    let sequence: UInt64
    let lower: [UInt8]
    let upper: [UInt8]?
    let reverse: Bool
    /// A write transaction's own uncommitted writes inside the range, sorted in scan order;
    /// they shadow the table.
    let overlay: [VersionedEntry]

    public struct Iterator: IteratorProtocol {
        private var cursor: MemTable.Cursor
        private let overlay: [VersionedEntry]
        private var overlayIndex = 0
        private var pending: VersionedEntry?
        private var pendingLoaded = false
        private let reverse: Bool

        init(_ scan: Scan) {
            cursor = MemTable.Cursor(table: scan.table, sequence: scan.sequence, lower: scan.lower, upper: scan.upper, reverse: scan.reverse)
            overlay = scan.overlay
            reverse = scan.reverse
        }

        public mutating func next() -> Entry? {
            if overlay.isEmpty {
                // Read transactions have no writes of their own to merge in; tombstones are
                // skipped without copying anything.
                while let node = cursor.nextNode() {
                    if !node.isTombstone { return Entry(key: copyBytes(node.key), value: copyBytes(node.value)) }
                }
                return nil
            }
            while true {
                if !pendingLoaded {
                    pending = cursor.next()
                    pendingLoaded = true
                }
                let fromOverlay = overlayIndex < overlay.count ? overlay[overlayIndex] : nil
                let chosen: VersionedEntry
                switch (pending, fromOverlay) {
                case (nil, nil):
                    return nil
                case (let base?, nil):
                    chosen = base
                    pendingLoaded = false
                case (nil, let own?):
                    chosen = own
                    overlayIndex += 1
                case (let base?, let own?):
                    let order = base.key.withUnsafeBytes { b in own.key.withUnsafeBytes { compareKeys(b, $0) } }
                    let baseFirst = reverse ? order > 0 : order < 0
                    if order == 0 {
                        chosen = own  // the transaction's own write shadows the committed one
                        overlayIndex += 1
                        pendingLoaded = false
                    } else if baseFirst {
                        chosen = base
                        pendingLoaded = false
                    } else {
                        chosen = own
                        overlayIndex += 1
                    }
                }
                if let value = chosen.value { return Entry(key: chosen.key, value: value) }
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// The number of entries, found by iterating the scan.
    public var count: Int {
        var n = 0
        forEachBorrowed { _, _ in n += 1; return true }
        return n
    }

    /// Visits each entry with its key and value borrowed from the store's memory, copying
    /// nothing; `body` returns false to stop. The buffers are valid only during the call.
    func forEachBorrowed(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) rethrows {
        if overlay.isEmpty {
            var cursor = MemTable.Cursor(table: table, sequence: sequence, lower: lower, upper: upper, reverse: reverse)
            while let node = cursor.nextNode() {
                if !node.isTombstone, try !body(node.key, node.value) { return }
            }
            return
        }
        for entry in self {
            let proceed = try entry.key.withUnsafeBytes { key in try entry.value.withUnsafeBytes { try body(key, $0) } }
            if !proceed { return }
        }
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
