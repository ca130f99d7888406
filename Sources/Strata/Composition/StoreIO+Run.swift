import Dispatch

// Running a `StoreIO`: in a new transaction of the store (sync, async, callback), in a
// snapshot, or in a transaction that is already open.

extension Store {
    /// Runs a writing operation as one write transaction and returns its value after the
    /// commit, as ``write(durability:_:)-4p1j`` does. If any part throws, nothing of it is
    /// applied and the error comes back unchanged.
    public func run<Value>(_ operation: StoreIO<ReadWrite, Value>, durability: Durability? = nil) throws -> Value {
        try write(durability: durability) { tx in try tx.run(operation) }
    }

    /// Runs a read-only operation on a snapshot of the latest commit, on the calling thread.
    public func run<Value>(_ operation: StoreIO<ReadOnly, Value>) throws -> Value {
        try read { tx in try tx.run(operation) }
    }

    /// Runs a writing operation as one write transaction, suspending until it is committed.
    public func run<Value: Sendable>(_ operation: StoreIO<ReadWrite, Value>, durability: Durability? = nil) async throws -> Value {
        try await write(durability: durability) { tx in try tx.run(operation) }
    }

    /// Runs a read-only operation on a snapshot of the latest commit.
    public func run<Value: Sendable>(_ operation: StoreIO<ReadOnly, Value>) async throws -> Value {
        try await read { tx in try tx.run(operation) }
    }

    /// Queues a writing operation as one transaction and returns at once; `completion` gets
    /// its value after the commit, or the error, as with ``asyncWrite(durability:_:completion:)``.
    public func asyncRun<Value: Sendable>(
        _ operation: StoreIO<ReadWrite, Value>, durability: Durability? = nil,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void = { _ in }
    ) {
        asyncWrite(durability: durability, { tx in try tx.run(operation) }, completion: completion)
    }
}

extension Snapshot {
    /// Runs a read-only operation on this snapshot's data.
    public func run<Value>(_ operation: StoreIO<ReadOnly, Value>) throws -> Value {
        try read { tx in try tx.run(operation) }
    }
}

extension ReadTransaction {
    /// Runs a read-only operation inside this transaction.
    public func run<Value>(_ operation: StoreIO<ReadOnly, Value>) throws -> Value {
        try operation.run(in: IONode.Context(readable: self, writable: nil))
    }
}

extension ReadOnlyTransaction {
    /// Runs a read-only operation inside this transaction.
    public func run<Value>(_ operation: StoreIO<ReadOnly, Value>) throws -> Value {
        try operation.run(in: IONode.Context(readable: self, writable: nil))
    }
}

extension WriteTransaction {
    /// Runs an operation, read-only or writing, inside this transaction: its writes join the
    /// transaction's, and its reads see them.
    public func run<Access, Value>(_ operation: StoreIO<Access, Value>) throws -> Value {
        try operation.run(in: IONode.Context(readable: self, writable: self))
    }
}
