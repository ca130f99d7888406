/// One key's newest version visible at a sequence: its value, or nil for a tombstone.
struct VersionedEntry {
    var key: [UInt8]
    var value: [UInt8]?
}

extension MemTable {
    /// Walks the newest version of each key visible at `sequence`, tombstones included (the
    /// merge above needs them to hide older data), within `[lower, upper)`, in key order or
    /// in reverse.
    struct Cursor {
        let table: MemTable
        let sequence: UInt64
        let lower: [UInt8]
        let upper: [UInt8]?
        let reverse: Bool

        private var started = false
        private var node: Node? = nil
        private var decidedKey: Node? = nil
        /// Reverse scans step by searching for the last key below the previous one.
        private var reverseBound: [UInt8]? = nil
        private var finished = false

        init(table: MemTable, sequence: UInt64, lower: [UInt8], upper: [UInt8]?, reverse: Bool) {
            self.table = table
            self.sequence = sequence
            self.lower = lower
            self.upper = upper
            self.reverse = reverse
        }

        mutating func next() -> VersionedEntry? {
            if finished { return nil }
            let result = reverse ? nextBackward() : nextForward()
            if result == nil { finished = true }
            return result
        }

        private mutating func nextForward() -> VersionedEntry? {
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
                return VersionedEntry(key: Array(n.key), value: n.isTombstone ? nil : Array(n.value))
            }
            return nil
        }

        private mutating func nextBackward() -> VersionedEntry? {
            if !started {
                started = true
                reverseBound = upper
            }
            while true {
                let candidate: Node?
                if let bound = reverseBound {
                    candidate = bound.withUnsafeBytes { table.findLast(before: $0) }
                } else {
                    candidate = table.findLast(before: nil)
                }
                guard let found = candidate else { return nil }
                let key = Array(found.key)
                if key.withUnsafeBytes({ k in lower.withUnsafeBytes { compareKeys(k, $0) } }) < 0 { return nil }
                reverseBound = key
                switch key.withUnsafeBytes({ table.get($0, at: sequence) }) {
                case .value(let value): return VersionedEntry(key: key, value: value)
                case .deleted: return VersionedEntry(key: key, value: nil)
                case .absent: continue
                }
            }
        }
    }
}
