import Foundation

/// What references need from a transaction: the committed data it reads (a write
/// transaction's own writes left out) and the store it belongs to. Every transaction type of
/// this module provides it.
protocol CommittedStateReading {
    func committedView() throws -> ReadView
}

/// Answers "did any commit after version V touch this key or range?" from the data itself,
/// with no history kept for the purpose.
///
/// Why it is exact in all but one case (docs/architecture.md, "References"):
/// - Every entry keeps the sequence of the commit that wrote it, through flushes and
///   compactions (compaction never rewrites sequences), and a key's newest entry, value or
///   tombstone, survives unless compaction drops a tombstone.
/// - So a newest entry with a sequence above V is a change. A newest entry at or below V was
///   also the newest at V: the key is as it was.
/// - A key with no entry left either never had one or lost its tombstone to compaction. If
///   it existed at V, it was deleted since. If it did not, a put-and-delete after V would
///   leave no trace: the probe answers "changed" when compaction has dropped any tombstone
///   newer than V (`Version.droppedDeletions`), and "unchanged" otherwise. That is the one
///   conservative answer.
/// - For a range, the entries left at or below V are a subset of the range's entries at V,
///   so comparing their count with the count taken at V finds every removal.
struct HistoryProbe {
    let view: ReadView

    init(_ transaction: some ReadableTransaction) throws {
        guard let reading = transaction as? any CommittedStateReading else {
            throw StoreError(.invalidArgument, "references work only in Strata's own transactions, not in \(type(of: transaction))")
        }
        view = try reading.committedView()
    }

    var storeID: UUID { view.version.storeID }

    func checkStore(_ id: UUID) throws {
        guard id == storeID else {
            throw StoreError(
                .invalidArgument, "the reference belongs to store \(id), not to this one (\(storeID)); take references in the store that resolves them")
        }
    }

    /// The newest committed entry of each key in `[lower, upper)`, tombstones included, in key
    /// order; `body` gets its sequence and whether it is a tombstone. Return false to stop.
    func forEachNewest(lower: [UInt8], upper: [UInt8]?, _ body: (_ sequence: UInt64, _ isDeletion: Bool) -> Bool) throws {
        let scan = Scan(
            version: view.version, sequence: view.sequence, lower: lower, upper: upper, reverse: false, overlay: [], errors: ReadErrors())
        let merge = scan.makeMerge(includingDeletions: true)
        do {
            while try merge.next() {
                if !body(merge.sequence, merge.isDeletion) { return }
            }
        } catch {
            throw StoreError.wrapping(error, while: "checking a reference")
        }
    }

    /// The newest committed entry of `key`, nil when it has none.
    func newest(_ key: [UInt8]) throws -> (sequence: UInt64, isDeletion: Bool)? {
        var found: (UInt64, Bool)? = nil
        try forEachNewest(lower: key, upper: key + [0]) { sequence, isDeletion in
            found = (sequence, isDeletion)
            return false
        }
        return found
    }

    /// How many committed entries `[lower, upper)` holds.
    func liveCount(lower: [UInt8], upper: [UInt8]?) throws -> Int {
        var count = 0
        try forEachNewest(lower: lower, upper: upper) { _, isDeletion in
            if !isDeletion { count += 1 }
            return true
        }
        return count
    }

    /// A tombstone newer than `version` may have been dropped: a key with no entry left may
    /// have been put and deleted since.
    func mayHaveLostDeletions(since version: UInt64) -> Bool {
        view.version.droppedDeletions > version
    }

    func changed(_ ref: KeyReference) throws -> Bool {
        try checkStore(ref.storeID)
        // A transaction older than the reference sees no commit after it.
        guard view.sequence > ref.version else { return false }
        guard let entry = try newest(ref.key) else {
            return ref.existed || mayHaveLostDeletions(since: ref.version)
        }
        if entry.sequence > ref.version { return true }
        // The newest entry is the one that was newest at the reference's version.
        return entry.isDeletion == ref.existed
    }

    func changed(_ ref: QueryReference) throws -> Bool {
        try checkStore(ref.storeID)
        guard view.sequence > ref.version else { return false }
        var newer = false
        var unchanged = 0
        try forEachNewest(lower: ref.lower, upper: ref.upper) { sequence, isDeletion in
            if sequence > ref.version {
                newer = true
                return false
            }
            if !isDeletion { unchanged += 1 }
            return true
        }
        if newer || unchanged != ref.entryCount { return true }
        return mayHaveLostDeletions(since: ref.version)
    }
}
