@_spi(Engine) import StrataFormat
import StrataIO
import Synchronization

/// What one commit wrote, as observers and change feeds get it: on the writer queue, after
/// the commit is published, so whoever reads in response sees it.
struct CommittedWrites {
    /// One key's write: its value, or nil for a delete.
    struct Entry {
        let key: [UInt8]
        let value: [UInt8]?
    }

    let sequence: UInt64
    let entries: [Entry]
}

/// Every observation and change feed of a store: the one hook in the engine's commit path
/// (docs/architecture.md, "Observation"). The store owns it, so it outlives reloads.
///
/// Invariants:
/// 1. `isActive` is true whenever a listener is registered: the writer reads it (one relaxed
///    atomic load per commit) to decide whether to keep a round's writes for `committed`.
/// 2. `committed` runs on the writer queue, after publishing, and does nothing but look keys
///    up in `index` and hand on signals or changes: no listener code, no store call, runs
///    there.
/// 3. `index` always reflects the registrations: every change rebuilds it under `state`'s
///    lock and publishes it before returning, so an observer that announced an evaluation is
///    signalled by every commit the writer publishes afterwards.
final class CommitListeners: Sendable {
    private struct Registration {
        let observer: Observer
        /// What the observer's last evaluation read; nil while one runs or after one failed:
        /// then every commit signals it.
        var readSet: ReadSet?
    }

    private struct State {
        var observers: [ObjectIdentifier: Registration] = [:]
        var feeds: [ObjectIdentifier: ChangeFeed] = [:]
    }

    private let state = Locked(State())
    private let index = Locked(ListenerIndex())
    private let active = Atomic<Bool>(false)

    var isActive: Bool { active.load(ordering: .relaxed) }

    // MARK: Registering (any thread)

    func add(_ observer: Observer) {
        change { $0.observers[ObjectIdentifier(observer)] = Registration(observer: observer, readSet: nil) }
    }

    func add(_ feed: ChangeFeed) {
        change { $0.feeds[ObjectIdentifier(feed)] = feed }
    }

    func remove(_ observer: Observer) {
        change { $0.observers[ObjectIdentifier(observer)] = nil }
    }

    func remove(_ feed: ChangeFeed) {
        change { $0.feeds[ObjectIdentifier(feed)] = nil }
    }

    /// An evaluation starts: until it ends, every commit signals the observer.
    func evaluationStarted(_ observer: Observer) {
        change { $0.observers[ObjectIdentifier(observer)]?.readSet = nil }
    }

    /// An evaluation ended, having read `readSet` (nil when it failed).
    func evaluationEnded(_ observer: Observer, reading readSet: ReadSet?) {
        change { $0.observers[ObjectIdentifier(observer)]?.readSet = readSet }
    }

    private func change(_ body: (inout State) -> Void) {
        state.withLock { state in
            body(&state)
            let rebuilt = ListenerIndex(
                observers: state.observers.values.map { ($0.observer, $0.readSet) }, feeds: Array(state.feeds.values))
            index.withLock { $0 = rebuilt }
            active.store(!state.observers.isEmpty || !state.feeds.isEmpty, ordering: .relaxed)
        }
    }

    // MARK: Notifying

    /// One round's commits, in commit order. On the writer queue (invariant 2).
    func committed(_ commits: [CommittedWrites]) {
        let current = index.withLock { $0 }
        for feed in current.feeds { feed.committed(commits) }
        for observer in current.touched(by: commits) { observer.trigger() }
    }

    /// The store changed state (suspended, resumed, reloaded): observers evaluate again, and
    /// report the interruption or the new value.
    func lifecycleChanged() {
        for registration in state.withLock({ Array($0.observers.values) }) { registration.observer.trigger() }
    }

    /// What a reload is to gather for the feeds open now, nil when there are none.
    func historyRequest(after view: ReadView) -> ReloadHistory.Request? {
        let feeds = state.withLock { Array($0.feeds.values) }
        return feeds.isEmpty ? nil : ReloadHistory.Request(floor: view.sequence, storeID: view.version.storeID, feeds: feeds)
    }

    /// The store closed: every observation and feed ends.
    func storeClosed() {
        let (observers, feeds) = state.withLock { state in
            defer {
                state = State()
                index.withLock { $0 = ListenerIndex() }
                active.store(false, ordering: .relaxed)
            }
            return (state.observers.values.map(\.observer), Array(state.feeds.values))
        }
        for observer in observers { observer.finish() }
        for feed in feeds { feed.end() }
    }
}

/// The observers' read sets arranged for lookups by key, so a commit costs a hash lookup and
/// a binary search per key written, whatever the number of observers. Immutable: rebuilt
/// when a read set changes (once per evaluation), read by the writer once per round.
struct ListenerIndex: Sendable {
    /// Observers signalled by every commit (evaluating, or their last evaluation failed).
    private var always: [Observer] = []
    private var byKey: [HashedKey: [Observer]] = [:]
    /// Scanned ranges, sorted by lower bound, with the furthest upper bound reached by any
    /// range up to each position (nil: unbounded), so a lookup walks back only over ranges
    /// that can still hold the key.
    private var ranges: [(lower: [UInt8], upper: [UInt8]?, observer: Observer)] = []
    private var reach: [[UInt8]?] = []
    private(set) var feeds: [ChangeFeed] = []

    init() {}

    init(observers: [(Observer, ReadSet?)], feeds: [ChangeFeed]) {
        self.feeds = feeds
        for (observer, readSet) in observers {
            guard let readSet else {
                always.append(observer)
                continue
            }
            for key in readSet.keys { byKey[HashedKey(key), default: []].append(observer) }
            for range in readSet.ranges { ranges.append((range.lower, range.upper, observer)) }
        }
        ranges.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
        var furthest: [UInt8]?? = .none
        for range in ranges {
            switch furthest {
            case .none: furthest = .some(range.upper)
            case .some(nil): break
            case .some(let bound?): if range.upper.map({ bound.lexicographicallyPrecedes($0) }) ?? true { furthest = .some(range.upper) }
            }
            reach.append(furthest!)
        }
    }

    /// Every observer one of `commits` wrote into, each once. Allocates nothing when no
    /// observer is touched, the common case with many observers of unrelated data.
    func touched(by commits: [CommittedWrites]) -> [Observer] {
        var found = always
        if byKey.isEmpty && ranges.isEmpty { return found }
        for commit in commits {
            for entry in commit.entries {
                if !byKey.isEmpty, let observers = byKey[HashedKey(entry.key)] { found.append(contentsOf: observers) }
                entry.key.withUnsafeBytes { key in forEachRange(holding: key) { found.append($0) } }
            }
        }
        if found.count < 2 { return found }
        var seen = Set<ObjectIdentifier>()
        return found.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    private func forEachRange(holding key: UnsafeRawBufferPointer, _ body: (Observer) -> Void) {
        // The last range whose lower bound is <= key, then back while some range so far
        // still reaches past the key.
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].lower.withUnsafeBytes({ compareKeys(key, $0) < 0 }) { high = mid } else { low = mid + 1 }
        }
        var i = low - 1
        while i >= 0 {
            if let bound = reach[i], bound.withUnsafeBytes({ compareKeys(key, $0) >= 0 }) { return }
            let range = ranges[i]
            if range.upper?.withUnsafeBytes({ compareKeys(key, $0) < 0 }) ?? true { body(range.observer) }
            i -= 1
        }
    }
}
