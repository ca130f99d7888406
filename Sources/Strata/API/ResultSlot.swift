import StrataIO

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

/// Carries a caller's transaction body to the writer queue.
///
/// @unchecked Sendable: the body may capture non-Sendable state, but the caller waits (blocked
/// or suspended) from submitting the request until its completion has run, and the writer
/// calls the body only before that completion; so the body is used by one thread at a time,
/// and the wait orders the accesses. `clear()` runs after the wait, dropping the closure so
/// it does not outlive the caller's `withoutActuallyEscaping`.
///
/// The closure is read and cleared under a lock even so: an async caller is resumed through
/// the concurrency runtime, whose ordering ThreadSanitizer does not see, and without the lock
/// it reported `clear()` racing the writer's read (a false report, but one that would hide
/// real ones). The lock is never contended.
final class BodyCell<T>: @unchecked Sendable {
    private var body: ((WriteTransaction) throws -> T)?
    /// Orders `run`'s read of `body` before `clear()`'s write, visibly to the sanitizer.
    private let gate = Locked(0)

    init(_ body: @escaping (WriteTransaction) throws -> T) {
        self.body = body
    }

    func run(_ transaction: WriteTransaction) throws -> T {
        var taken: ((WriteTransaction) throws -> T)? = nil
        gate.withLock { _ in taken = self.body }
        // The closure runs outside the lock: it may take as long as it likes.
        guard let taken else {
            preconditionFailure("BodyCell: a transaction body ran after its caller returned")
        }
        return try taken(transaction)
    }

    func clear() {
        gate.withLock { _ in self.body = nil }
    }
}
