/// Carries a transaction's result from the writer queue to the caller.
///
/// @unchecked Sendable: `T` may not be Sendable (synchronous writes), and the fields are plain
/// variables. That is safe because every write happens on the writer queue before the
/// request's completion runs, and every read happens either inside that completion (same
/// thread, later) or after the caller's semaphore wait, which the completion signals; the
/// semaphore orders the memory accesses.
final class ResultSlot<T>: @unchecked Sendable {
    private var value: T? = nil
    private var error: (any Error)? = nil

    func store(_ value: T) {
        self.value = value
    }

    func fail(_ error: (any Error)?) {
        if let error { self.error = error }
    }

    func take() throws -> T {
        if let error { throw error }
        guard let value else {
            preconditionFailure("ResultSlot: the transaction completed without a value or an error")
        }
        return value
    }
}

/// Carries a non-Sendable value across threads where the code around it guarantees that
/// only one thread uses it at a time (each use site says why).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
