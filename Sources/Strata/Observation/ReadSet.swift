/// The keys and ranges one evaluation of an observed operation read: a commit that writes
/// none of them cannot change its value.
struct ReadSet: Sendable {
    private(set) var keys: Set<[UInt8]> = []
    /// `[lower, upper)`, nil for no upper bound.
    private(set) var ranges: [(lower: [UInt8], upper: [UInt8]?)] = []

    mutating func addKey(_ key: [UInt8]) { keys.insert(key) }

    mutating func addRange(_ lower: [UInt8], _ upper: [UInt8]?) { ranges.append((lower, upper)) }

    func contains(_ key: [UInt8]) -> Bool {
        if keys.contains(key) { return true }
        return ranges.contains { range in keyIsIn(key, lower: range.lower, upper: range.upper) }
    }
}

/// A read transaction that writes down what it reads, for observation. Everything else is
/// the wrapped transaction's.
final class RecordingTransaction: ReadableTransaction, CommittedStateReading {
    private let base: ReadTransaction
    private(set) var readSet = ReadSet()

    init(_ base: ReadTransaction) {
        self.base = base
    }

    var version: UInt64 { base.version }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        readSet.addKey(key)
        return try base.get(key)
    }

    func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan {
        readSet.addRange(from, to)
        return try base.scan(from: from, to: to, reverse: reverse)
    }

    func committedView() throws -> ReadView { base.view }
}
