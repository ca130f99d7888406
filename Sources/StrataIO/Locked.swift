#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a lock: `withLock` runs its body with the lock held and the value
/// borrowed mutably. Every lock in Strata is one of these.
///
/// Built on `pthread_mutex_t` rather than the standard library's `Mutex` because
/// ThreadSanitizer must see every lock: on Linux `Mutex` takes its lock with raw futex system
/// calls, which the sanitizer does not model, so accesses it orders look like races (four
/// threads adding to a counter under a `Mutex` give the right total and two "Swift access
/// race" reports). The sanitizer intercepts `pthread_mutex_lock` and `_unlock`.
///
/// Invariant: `value` is read or written only between `pthread_mutex_lock(mutex)` and the
/// matching unlock, inside `withLock`.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: every access to `value` holds `mutex` (the invariant), and values
    // cross into and out of the lock as `sending`, as with the standard library's Mutex.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Unchecked: the mutex already makes every access exclusive, and the runtime's check
    /// (a thread-local lookup on each `withLock`) would only repeat it.
    @exclusivity(unchecked) private var value: Value

    package init(_ value: sending Value) {
        // A zero-sized value (`Locked(())`) shares its address with the object's header, and
        // ThreadSanitizer then reports the body's inout access, made with the lock held, as
        // racing with another thread's read of the header on its way to the lock. A lock with
        // nothing to guard holds a counter instead.
        assert(MemoryLayout<Value>.size > 0, "Locked needs a value of non-zero size; use Locked(0) for a bare lock")
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held. Never call it again from inside `body` on the same
    /// lock: the mutex is not recursive.
    package func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
