@_spi(Engine) import StrataFormat

/// The operations recovery found in the log, gathered from every segment and inserted into
/// the memtable in key order at the end, rather than in log order as they are read.
///
/// Why: nodes are laid out in the memtable's arena in insertion order, so inserting in key
/// order puts neighbouring keys next to each other in memory, and a scan then walks memory
/// in order instead of missing the cache at every step. Each insert also lands just after
/// the previous one, where the memtable's search finger makes it cheap. The cost is holding
/// the replayed keys and values once more until the memtable is built.
struct ReplayBuffer {
    private struct Operation {
        var keyStart: Int
        var keyCount: Int32
        /// -1 for a delete.
        var valueCount: Int32
        var sequence: UInt64

        /// The operation's key, in `base`: the buffer's bytes.
        @inline(__always)
        func key(in base: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: base[keyStart..<(keyStart + Int(keyCount))])
        }
    }

    /// Keys and values, back to back: each operation's key, then its value.
    private var bytes: [UInt8] = []
    private var operations: [Operation] = []

    mutating func add(key: UnsafeRawBufferPointer, sequence: UInt64, value: UnsafeRawBufferPointer?) {
        operations.append(
            Operation(
                keyStart: bytes.count, keyCount: Int32(key.count),
                valueCount: value.map { Int32($0.count) } ?? -1, sequence: sequence))
        bytes.append(contentsOf: key)
        if let value { bytes.append(contentsOf: value) }
    }

    /// The operations of the commits after `floor`, in log order (commit order, and within a
    /// commit as the batch holds them), as change feeds get them: only the keys `wanted`
    /// accepts, and no commit left without any. For a reload with feeds open
    /// (`ReloadHistory`); call it before `apply`, which empties the buffer.
    func commits(after floor: UInt64, wanted: ([UInt8]) -> Bool) -> [CommittedWrites] {
        bytes.withUnsafeBytes { base in
            var commits: [CommittedWrites] = []
            var sequence: UInt64 = 0
            var entries: [CommittedWrites.Entry] = []
            func close() {
                if !entries.isEmpty { commits.append(CommittedWrites(sequence: sequence, entries: entries)) }
                entries = []
            }
            for operation in operations where operation.sequence > floor {
                if operation.sequence != sequence {
                    close()
                    sequence = operation.sequence
                }
                let key = Array(operation.key(in: base))
                guard wanted(key) else { continue }
                var value: [UInt8]? = nil
                if operation.valueCount >= 0 {
                    let valueStart = operation.keyStart + Int(operation.keyCount)
                    value = Array(base[valueStart..<(valueStart + Int(operation.valueCount))])
                }
                entries.append(CommittedWrites.Entry(key: key, value: value))
            }
            close()
            return commits
        }
    }

    /// Inserts every operation into `memtable`, in table order: key ascending, newest first.
    mutating func apply(to memtable: MemTable) {
        bytes.withUnsafeBytes { base in
            func key(_ operation: Operation) -> UnsafeRawBufferPointer { operation.key(in: base) }
            func inTableOrder(_ a: Operation, _ b: Operation) -> Bool {
                let order = compareKeys(key(a), key(b))
                return order < 0 || (order == 0 && a.sequence > b.sequence)
            }
            // A log written in key order (a bulk load) needs no sort.
            var sorted = true
            for index in operations.indices.dropFirst() where !inTableOrder(operations[index - 1], operations[index]) {
                sorted = false
                break
            }
            let order = sorted ? nil : sortedOrder(base)
            for position in operations.indices {
                let operation = operations[order?[position].index ?? position]
                let keyBytes = key(operation)
                if operation.valueCount < 0 {
                    memtable.insert(key: keyBytes, sequence: operation.sequence, value: nil)
                } else {
                    let valueStart = operation.keyStart + Int(operation.keyCount)
                    let value = UnsafeRawBufferPointer(rebasing: base[valueStart..<(valueStart + Int(operation.valueCount))])
                    memtable.insert(key: keyBytes, sequence: operation.sequence, value: value)
                }
            }
        }
        bytes = []
        operations = []
    }

    /// The keys and sequences in the order `apply` inserts them; for tests.
    var insertionOrder: [(key: [UInt8], sequence: UInt64)] {
        bytes.withUnsafeBytes { base in
            let order = operations.count < 2 ? Array(operations.indices) : sortedOrder(base).map(\.index)
            return order.map { index in
                let operation = operations[index]
                return (Array(operation.key(in: base)), operation.sequence)
            }
        }
    }

    /// One operation in the sort: the 8 bytes of its key after the prefix every key shares,
    /// as a big-endian word, and its index in `operations`.
    private struct SortItem {
        var word: UInt64
        var index: Int
    }

    /// The operations' indexes with their words, in table order (at least two operations):
    /// by word, in one small array, then the keys of each run of equal words compared in
    /// full. For two keys that share the prefix, a smaller word means a smaller key
    /// (`SegmentTable.fence`).
    /// Comparing the keys themselves, scattered over the whole buffer, missed the cache at
    /// nearly every step: that sort was 27% of a reopen that replayed 118,000 random puts
    /// (docs/benchmarks.md, 2026-11-28, "recovery's sort by words").
    private func sortedOrder(_ base: UnsafeRawBufferPointer) -> [SortItem] {
        @inline(__always) func key(_ index: Int) -> UnsafeRawBufferPointer { operations[index].key(in: base) }
        let first = key(0)
        var shared = first.count
        for index in operations.indices.dropFirst() where shared > 0 {
            let other = key(index)
            var n = 0
            while n < shared && n < other.count && other[n] == first[n] { n += 1 }
            shared = n
        }
        var items = operations.indices.map { SortItem(word: SegmentTable.fence(key($0), after: shared), index: $0) }
        ReplayBuffer.radixSortByWord(&items)
        // Then each run of equal words by the keys themselves, newest first; equal keys and
        // sequences keep their log order, as the sort before this one did.
        var start = 0
        while start < items.count {
            var end = start + 1
            while end < items.count && items[end].word == items[start].word { end += 1 }
            if end - start > 1 {
                items[start..<end].sort { a, b in
                    let order = compareKeys(key(a.index), key(b.index))
                    if order != 0 { return order < 0 }
                    let (x, y) = (operations[a.index].sequence, operations[b.index].sequence)
                    return x > y || (x == y && a.index < b.index)
                }
            }
            start = end
        }
        return items
    }

    /// Sorts `items` by word, keeping the order of equal words (so by index, as they start):
    /// a byte at a time from the lowest, skipping a byte every word shares (the padding of
    /// short keys, the fixed digits of numbered ones). Each pass reads the items twice in
    /// order, where a comparison sort follows its merges across the array.
    private static func radixSortByWord(_ items: inout [SortItem]) {
        var scratch = items
        var counts = [Int](repeating: 0, count: 257)
        for shift in Swift.stride(from: UInt64(0), to: 64, by: 8) {
            for i in counts.indices { counts[i] = 0 }
            for item in items { counts[Int(item.word >> shift & 0xFF) + 1] += 1 }
            if counts.contains(items.count) { continue }
            for i in 1..<counts.count { counts[i] += counts[i - 1] }
            for item in items {
                let bucket = Int(item.word >> shift & 0xFF)
                scratch[counts[bucket]] = item
                counts[bucket] += 1
            }
            swap(&items, &scratch)
        }
    }
}
