import Foundation

/// The commits another process made while this store was suspended, as a reload found them,
/// for the change feeds that were open (docs/architecture.md, "Observation").
///
/// A feed promises every commit in order, and another process's commits reach this store
/// only through its files. The WAL keeps each commit after the manifest's last sequence as
/// its batch, so a reload replays them one by one; commits the other process flushed into
/// segment files are kept only as each key's latest version, and cannot be told apart one
/// by one. So a feed gets the other process's commits when the WAL still holds all of them,
/// and otherwise ends with `.historyUnavailable`, naming the versions it cannot deliver.
struct ReloadHistory {
    /// What the reload is to gather: the commits after `floor` (the version the store had
    /// before the reload) to the keys some open feed wants.
    struct Request {
        let floor: UInt64
        /// The identity of the store before the reload: a store deleted and made again while
        /// suspended is another store, whose sequences say nothing about this one's.
        let storeID: UUID
        let feeds: [ChangeFeed]

        func wants(_ key: [UInt8]) -> Bool {
            feeds.contains { $0.wants(key) }
        }
    }

    /// The commits after the request's floor that the WAL held, in commit order; only the
    /// keys some feed wants.
    let commits: [CommittedWrites]
    /// The WAL held every commit after this sequence (the manifest's last sequence).
    let keptAfter: UInt64
    /// The store's last commit after the reload.
    let lastSequence: UInt64
    /// The identity of the store the reload read.
    let storeID: UUID

    /// Hands each feed of `request` the commits after `request.floor`, or, when some of them
    /// are not kept one by one, ends it with an error naming them. On the thread resuming the
    /// store, before the new writer serves anything, so these come before its commits.
    func deliver(to request: Request) {
        let floor = request.floor
        let failure: StoreError?
        if storeID != request.storeID {
            failure = StoreError(
                .historyUnavailable,
                "the store was replaced by another one while suspended (its identity changed), so a change feed cannot go on; read the range again and start a new feed"
            )
        } else if lastSequence < floor {
            failure = StoreError(
                .historyUnavailable,
                "the store went back from version \(floor) to \(lastSequence) while suspended (another process replaced its files), so a change feed cannot go on; read the range again and start a new feed"
            )
        } else if keptAfter > floor {
            failure = StoreError(
                .historyUnavailable,
                "another process committed versions \(floor + 1) through \(lastSequence) while the store was suspended, and wrote versions \(floor + 1) through \(keptAfter) into segment files, which keep each key's latest value only, so the change feed cannot deliver those changes one by one; it ended after version \(floor). Read the range again and start a new feed"
            )
        } else {
            failure = nil
        }
        for feed in request.feeds {
            if let failure {
                feed.end(throwing: failure)
            } else {
                feed.committed(commits)
            }
        }
    }
}
