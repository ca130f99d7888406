/// A read of one consistent snapshot. Handed to the closure of ``Store/read(_:)`` and
/// ``Snapshot/read(_:)``; do not keep it after the closure returns.
public struct ReadTransaction: ReadableTransaction {
    let view: ReadView

    init(view: ReadView) {
        self.view = view
    }

    public var version: UInt64 { view.sequence }

    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try KeyValidation.checkKey(key)
        switch key.withUnsafeBytes({ view.version.memtable.get($0, at: view.sequence) }) {
        case .value(let value): return value
        case .deleted, .absent: return nil
        }
    }

    public func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan {
        try KeyValidation.checkBound(from)
        if let to { try KeyValidation.checkBound(to) }
        return Scan(table: view.version.memtable, sequence: view.sequence, lower: from, upper: to, reverse: reverse, overlay: [])
    }
}

// Transactions stay on the thread that runs their closure.
@available(*, unavailable)
extension ReadTransaction: Sendable {}
