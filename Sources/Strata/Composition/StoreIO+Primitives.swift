// The primitive operations. Reads are available at either access, so they compose into
// read-only and writing operations alike; writes only as `ReadWrite`.

extension StoreIO {
    /// Runs `body` on the transaction, which offers reads only: an operation built from it
    /// cannot write, even by accident. Inside a write transaction it sees that
    /// transaction's own writes.
    public static func read(_ body: @escaping @Sendable (ReadOnlyTransaction) throws -> Value) -> StoreIO {
        StoreIO(primitive: { context in try body(ReadOnlyTransaction(context.readable)) })
    }

    /// The value of `key`, or nil.
    public static func get(_ key: [UInt8]) -> StoreIO where Value == [UInt8]? {
        StoreIO(primitive: { context in try context.readable.get(key) })
    }

    /// The entries whose key starts with `prefix`, in key order.
    public static func scan(prefix: [UInt8]) -> StoreIO where Value == [Entry] {
        StoreIO(primitive: { context in Array(try context.readable.scan(prefix: prefix)) })
    }

    /// The entries with `from <= key < to` (no upper bound when `to` is nil), in key order.
    public static func scan(from: [UInt8], to: [UInt8]? = nil) -> StoreIO where Value == [Entry] {
        StoreIO(primitive: { context in Array(try context.readable.scan(from: from, to: to)) })
    }
}

extension StoreIO where Access == ReadWrite {
    /// Runs `body` on the write transaction.
    public static func write(_ body: @escaping @Sendable (WriteTransaction) throws -> Value) -> StoreIO {
        StoreIO(primitive: { context in try body(context.writableTransaction) })
    }

    /// Sets `key` to `value`.
    public static func put(_ key: [UInt8], _ value: [UInt8]) -> StoreIO where Value == Void {
        StoreIO(step: .put(key, value))
    }

    /// Removes `key`.
    public static func delete(_ key: [UInt8]) -> StoreIO where Value == Void {
        StoreIO(primitive: { context in try context.writableTransaction.delete(key) })
    }

    /// Removes every key with `from <= key < to` (no upper bound when `to` is nil); gives how
    /// many were removed.
    public static func deleteRange(from: [UInt8], to: [UInt8]?) -> StoreIO where Value == Int {
        StoreIO(primitive: { context in try context.writableTransaction.deleteRange(from: from, to: to) })
    }
}

extension IONode.Context {
    /// The write transaction of a `ReadWrite` step. The types run such steps only in write
    /// transactions, so its absence is a bug in this module.
    var writableTransaction: WriteTransaction {
        guard let writable else { preconditionFailure("StoreIO: a writing step ran outside a write transaction") }
        return writable
    }
}

/// The transaction a ``StoreIO/read(_:)`` step gets: reads only. It wraps whatever
/// transaction the operation runs in (a read, a snapshot, or a write, whose own writes it
/// sees) and offers no way to change it.
public struct ReadOnlyTransaction: ReadableTransaction {
    let base: any ReadableTransaction

    init(_ base: any ReadableTransaction) {
        self.base = base
    }

    public var version: UInt64 { base.version }

    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try base.get(key)
    }

    public func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan {
        try base.scan(from: from, to: to, reverse: reverse)
    }
}

@available(*, unavailable)
extension ReadOnlyTransaction: Sendable {}
