/// Where a store is in an app's life, as ``Store/lifecycle`` reports it.
///
/// An app can be frozen at any moment, and iOS terminates a suspended app that holds a file
/// lock in a shared container (exception code 0xdead10cc). Drive these states from the app's
/// lifecycle: ``Store/enterBackground()`` when it leaves the foreground, `suspend()`
/// before it may be frozen, ``Store/resume()`` before any code touches the store again.
public enum Lifecycle: Sendable, Equatable {
    /// Every call is served; flushes and compactions run as needed.
    case active
    /// Every call is served, but no new compaction starts (unless writes would stop for one),
    /// so that a suspension soon after is quick.
    case background
    /// The store holds no file lock and refuses every call with a retryable
    /// ``StoreError/Code/suspended`` error. Another process may open the store meanwhile.
    case suspended
    /// The store is closed for good; every call fails with ``StoreError/Code/closed``.
    case closed
}

/// What ``Store/resume()`` found.
public enum ResumeOutcome: Sendable, Equatable {
    /// Nobody else changed the store while it was suspended (or it was not suspended).
    case unchanged
    /// Another process changed the store while it was suspended, so the store read its state
    /// from disk again before serving calls: `from` is the version it had, `to` the version
    /// it has now. Snapshots taken before read what they saw (while suspended, their reads
    /// were refused with `.suspended`, as every call is).
    case reloaded(from: UInt64, to: UInt64)
}
