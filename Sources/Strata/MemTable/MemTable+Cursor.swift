@_spi(Engine) import StrataFormat

/// One key's newest version visible at a sequence: its value, or nil for a tombstone.
struct VersionedEntry {
    var key: [UInt8]
    var value: [UInt8]?
}

extension MemTable {
    /// Walks the newest version of each key visible at `sequence`, tombstones included (the
    /// merge above needs them to hide older data), within `[lower, upper)`, in key order or
    /// in reverse. It hands out nodes, whose bytes stay valid as long as the table does
    /// (MemTable invariant 3), so nothing is copied until a caller asks for a copy.
    struct Cursor {
        let table: MemTable
        let sequence: UInt64
        let lower: [UInt8]
        let upper: [UInt8]?
        let reverse: Bool

        private var started = false
        private var finished = false
        /// Forward: the next node to look at, and the last node whose key was decided.
        private var node: Node? = nil
        private var decidedKey: Node? = nil
        /// Reverse: a node holding the last key returned; the next step searches below it.
        private var reverseBound: Node? = nil

        init(table: MemTable, sequence: UInt64, lower: [UInt8], upper: [UInt8]?, reverse: Bool) {
            self.table = table
            self.sequence = sequence
            self.lower = lower
            self.upper = upper
            self.reverse = reverse
        }

        /// The next visible version, as a node (a tombstone when `isTombstone`).
        mutating func nextNode() -> Node? {
            if finished { return nil }
            let result = reverse ? nextBackward() : nextForward()
            if result == nil { finished = true }
            return result
        }

        /// The next visible version, copied out.
        mutating func next() -> VersionedEntry? {
            nextNode().map { VersionedEntry(key: copyBytes($0.key), value: $0.isTombstone ? nil : copyBytes($0.value)) }
        }

        private mutating func nextForward() -> Node? {
            if !started {
                started = true
                node = lower.withUnsafeBytes { table.findGreaterOrEqual($0, UInt64.max, previous: nil) }
            }
            while let n = node {
                node = n.next(0)
                if let decided = decidedKey, compareKeys(decided.key, n.key) == 0 { continue }
                if let upper, upper.withUnsafeBytes({ compareKeys(n.key, $0) }) >= 0 { return nil }
                if n.sequence > sequence { continue }
                decidedKey = n
                return n
            }
            return nil
        }

        private mutating func nextBackward() -> Node? {
            while true {
                let candidate: Node?
                if let bound = reverseBound {
                    candidate = table.findLast(before: bound.key)
                } else if !started, let upper {
                    candidate = upper.withUnsafeBytes { table.findLast(before: $0) }
                } else {
                    candidate = table.findLast(before: nil)
                }
                started = true
                guard let found = candidate else { return nil }
                if lower.withUnsafeBytes({ compareKeys(found.key, $0) }) < 0 { return nil }
                reverseBound = found
                // The newest version of this key that the snapshot may see.
                if let visible = table.findVisible(found.key, at: sequence) {
                    return visible
                }
            }
        }
    }
}
