import StrataIO

/// One committed change to a key, as a change feed delivers it.
public struct Change: Sendable, Hashable {
    public let key: [UInt8]
    /// The new value, nil when the commit deleted the key.
    public let value: [UInt8]?
    /// The commit's sequence.
    public let version: UInt64
}

extension Store {
    /// Every change committed from now on to a key with `from <= key < to` (no upper bound
    /// when `to` is nil), in commit order.
    ///
    /// The feed holds at most `bufferSize` changes its consumer has not taken. When a change
    /// does not fit, the feed neither drops it silently nor slows the writer: it ends,
    /// throwing `StoreError` with code `.overflow` after the changes it holds (the first
    /// change missing is the one after the last delivered). Start a new feed and read the
    /// range again to catch up. It also ends, without
    /// an error, when the store closes, and when the consuming task is cancelled.
    ///
    /// A commit gives one change per key it wrote: the key's last write in the transaction,
    /// in the order the transaction first wrote each key. A deletion of a key that had no
    /// value is a change too (the commit wrote it).
    ///
    /// Through a suspension the feed goes on. When ``resume()`` reloads because another
    /// process committed meanwhile, the feed first delivers that process's changes from the
    /// store's log, in commit order; when some of them are no longer in the log one by one
    /// (the other process flushed them into segment files), or the store was replaced, it
    /// ends instead, throwing `StoreError` with code `.historyUnavailable` naming the
    /// versions, after the changes it holds. It never skips a change silently.
    public func changes(from: [UInt8], to: [UInt8]?, bufferSize: Int = 4096) -> AsyncThrowingStream<Change, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Change.self, throwing: (any Error).self, bufferingPolicy: .bufferingOldest(max(bufferSize, 1)))
        let feed = ChangeFeed(lower: from, upper: to, capacity: max(bufferSize, 1), continuation: continuation)
        let listeners = self.listeners
        listeners.add(feed)
        continuation.onTermination = { _ in
            feed.end()
            listeners.remove(feed)
        }
        return stream
    }

    /// The changes to keys that start with `prefix`.
    public func changes(prefix: [UInt8], bufferSize: Int = 4096) -> AsyncThrowingStream<Change, any Error> {
        changes(from: prefix, to: Scan.upperBound(forPrefix: prefix), bufferSize: bufferSize)
    }
}

/// A change feed's end of the commit path: the stream's bounded buffer says when a change
/// does not fit, and the feed then ends instead of going on with a gap.
final class ChangeFeed: Sendable {
    private struct State {
        var ended = false
    }

    private let lower: [UInt8]
    private let upper: [UInt8]?
    private let capacity: Int
    private let continuation: AsyncThrowingStream<Change, any Error>.Continuation
    private let state = Locked(State())

    init(lower: [UInt8], upper: [UInt8]?, capacity: Int, continuation: AsyncThrowingStream<Change, any Error>.Continuation) {
        self.lower = lower
        self.upper = upper
        self.capacity = capacity
        self.continuation = continuation
    }

    /// Whether `key` is in the feed's range.
    func wants(_ key: [UInt8]) -> Bool {
        keyIsIn(key, lower: lower, upper: upper)
    }

    /// Yields the commits' changes in the feed's range, in order. On the writer queue, or,
    /// for the commits a reload found (`ReloadHistory`), on the thread resuming the store
    /// while no writer runs: one thread at a time either way.
    func committed(_ commits: [CommittedWrites]) {
        var changes: [Change] = []
        for commit in commits {
            for entry in commit.entries where wants(entry.key) {
                changes.append(Change(key: entry.key, value: entry.value, version: commit.sequence))
            }
        }
        if changes.isEmpty { return }
        // One thread yields at a time (above), so the changes keep commit order without
        // holding the lock; the lock is not held around `finish`, whose termination handler
        // takes it.
        if state.withLock({ $0.ended }) { return }
        for change in changes {
            if case .dropped = continuation.yield(change) {
                let first = state.withLock { state -> Bool in
                    defer { state.ended = true }
                    return !state.ended
                }
                if first {
                    continuation.finish(
                        throwing: StoreError(
                            .overflow, "the change feed's consumer fell \(capacity) changes behind; start a new feed and read the range again"))
                }
                return
            }
        }
    }

    /// Ends the feed after the changes it holds: without an error (nil), or throwing one.
    func end(throwing error: StoreError? = nil) {
        let finish = state.withLock { state -> Bool in
            defer { state.ended = true }
            return !state.ended
        }
        if finish { continuation.finish(throwing: error) }
    }
}
