/// What a write committed: the transaction body's value and the version of the commit.
///
/// ```swift
/// let saved = try store.commit { tx in
///     try tx.put("draft/1", "Hello")
///     return "draft/1"
/// }
/// // Any read at or after saved.version sees the draft, so a view that shows values by
/// // version knows when its observation has caught up with this write.
/// print(saved.value, saved.version)
/// ```
public struct Commit<Value> {
    /// What the transaction's body returned.
    public let value: Value
    /// The commit's sequence: every read of the store at this version or later sees the
    /// transaction's writes, and ``Observed/value(_:version:)`` and ``Change/version`` name
    /// it. A transaction that wrote nothing makes no commit; its version is then the one its
    /// reads saw.
    public let version: UInt64
    /// False when the transaction wrote nothing, so no commit was made.
    public let wroteAnything: Bool
}

extension Commit: Sendable where Value: Sendable {}
extension Commit: Equatable where Value: Equatable {}

extension WriteTransaction {
    /// The commit this transaction makes once its body returns: the writer runs one
    /// transaction at a time and gives each that writes the next sequence after `version`.
    func commit<Value>(returning value: Value) -> Commit<Value> {
        Commit(value: value, version: isEmpty ? version : version + 1, wroteAnything: !isEmpty)
    }
}

extension Store {
    /// Runs `body` as one transaction, as ``write(durability:_:)-4p1j`` does, and returns its
    /// value with the version it committed at. Blocks the calling thread; from async code
    /// use the async overload.
    ///
    /// `tx.version` inside a write is the version before it; this is the one after.
    public func commit<T>(durability: Durability? = nil, _ body: (WriteTransaction) throws -> T) throws -> Commit<T> {
        try write(durability: durability) { tx in tx.commit(returning: try body(tx)) }
    }

    /// Runs `body` as one transaction, as the async ``write(durability:_:)-7upbf`` does, and
    /// returns its value with the version it committed at.
    public func commit<T: Sendable>(durability: Durability? = nil, _ body: @Sendable (WriteTransaction) throws -> T) async throws -> Commit<T> {
        try await write(durability: durability) { tx in tx.commit(returning: try body(tx)) }
    }

    /// Runs a read-write operation as one transaction, as ``run(_:durability:)-89mf5`` does, and
    /// returns its value with the version it committed at.
    public func commit<T>(_ operation: StoreIO<ReadWrite, T>, durability: Durability? = nil) throws -> Commit<T> {
        try commit(durability: durability) { tx in try tx.run(operation) }
    }

    /// The async form of ``commit(_:durability:)-(StoreIO<ReadWrite,T>,_)``.
    public func commit<T: Sendable>(_ operation: StoreIO<ReadWrite, T>, durability: Durability? = nil) async throws -> Commit<T> {
        try await commit(durability: durability) { tx in try tx.run(operation) }
    }
}
