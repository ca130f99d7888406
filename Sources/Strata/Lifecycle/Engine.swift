/// The parts of an open store that belong to one loaded state of its directory: the version
/// set (persisted state), the block cache, the writer and the flush and compaction threads.
/// `resume()` after another process changed the store replaces the whole engine with one
/// loaded afresh from disk; the store's lock, published state and snapshot registry outlive
/// it.
final class Engine: Sendable {
    let versions: VersionSet
    let cache: BlockCache
    let maintenance: Maintenance
    let writer: Writer

    init(opened: OpenedStore, directory: String, options: StoreOptions, snapshots: SnapshotRegistry, listeners: CommitListeners) {
        versions = opened.versions
        cache = opened.cache
        let maintenance = Maintenance(
            directory: directory, options: options, versions: opened.versions, cache: opened.cache,
            oldestPinned: { snapshots.summary.oldest })
        self.maintenance = maintenance
        writer = Writer(
            memtable: opened.memtable, lastSequence: opened.lastSequence, wal: opened.wal,
            maintenance: maintenance, options: options, listeners: listeners)
        // Files left over from before the open may already call for a compaction.
        maintenance.schedule()
    }

    /// Stops this engine for good without writing to the directory: for a store suspended
    /// (everything durable already) that closes or reloads. Snapshots that still hold its
    /// versions go on reading them.
    func retire(with error: StoreError) {
        writer.retire(with: error)
        maintenance.shutdown(writingToDisk: false)
    }
}
