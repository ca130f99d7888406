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
        /// Forward over several runs: the next node to look at in each. Runs begun after the
        /// cursor started hold only nodes inserted since, all newer than its sequence, so
        /// the runs there were at the start are all it needs.
        private var positions: [Node?] = []
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
                let runs = table.runs
                if runs == 1 {
                    node = lower.withUnsafeBytes { table.findGreaterOrEqual($0, UInt64.max, in: 0, previous: nil) }
                } else {
                    positions = (0..<runs).map { run in lower.withUnsafeBytes { table.findGreaterOrEqual($0, UInt64.max, in: run, previous: nil) } }
                }
            }
            if !positions.isEmpty { return nextForwardMerging() }
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

        /// The forward step over several runs: the smallest key any run is at, and of that
        /// key's versions in all the runs, the newest this cursor may see (MemTable invariant
        /// 6: any run may hold any of them).
        private mutating func nextForwardMerging() -> Node? {
            while true {
                var smallest: Node? = nil
                for position in positions {
                    guard let candidate = position else { continue }
                    if smallest.map({ compareKeys(candidate.key, $0.key) < 0 }) ?? true { smallest = candidate }
                }
                guard let key = smallest else { return nil }
                if let upper, upper.withUnsafeBytes({ compareKeys(key.key, $0) }) >= 0 { return nil }
                var visible: Node? = nil
                for run in positions.indices {
                    while let n = positions[run], compareKeys(n.key, key.key) == 0 {
                        if n.sequence <= sequence, visible.map({ n.sequence > $0.sequence }) ?? true { visible = n }
                        positions[run] = n.next(0)
                    }
                }
                // No version of this key is old enough for the cursor: on to the next key.
                if let visible { return visible }
            }
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
