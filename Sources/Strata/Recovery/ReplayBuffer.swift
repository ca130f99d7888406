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

    /// Inserts every operation into `memtable`, in table order: key ascending, newest first.
    mutating func apply(to memtable: MemTable) {
        bytes.withUnsafeBytes { base in
            func key(_ operation: Operation) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: base[operation.keyStart..<(operation.keyStart + Int(operation.keyCount))])
            }
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
            if !sorted { operations.sort(by: inTableOrder) }
            for operation in operations {
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
}
