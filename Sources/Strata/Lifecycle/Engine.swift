/// The parts of an open store that belong to one loaded state of its directory: the version
/// set (persisted state), the block cache, the writer and the flush and compaction threads.
/// `resume()` after another process changed the store replaces the whole engine with one
/// loaded afresh from disk; the store's lock, published state and snapshot registry outlive
/// it.
final class Engine: Sendable {
    /// What only a store that may change its directory has.
    struct Writing: Sendable {
        let writer: Writer
        let maintenance: Maintenance
    }

    let versions: VersionSet
    let cache: BlockCache
    /// Nil for a store opened read-only (`StoreOptions.readOnly`): without a writer and
    /// maintenance threads, nothing can write to its directory.
    let writing: Writing?

    init(opened: OpenedStore, directory: String, options: StoreOptions, snapshots: SnapshotRegistry, listeners: CommitListeners) {
        versions = opened.versions
        cache = opened.cache
        guard let wal = opened.wal else {
            writing = nil
            return
        }
        let maintenance = Maintenance(
            directory: directory, options: options, versions: opened.versions, cache: opened.cache,
            oldestPinned: { snapshots.summary.oldest })
        let writer = Writer(
            memtable: opened.memtable, lastSequence: opened.lastSequence, wal: wal,
            maintenance: maintenance, options: options, listeners: listeners)
        writing = Writing(writer: writer, maintenance: maintenance)
        // Files left over from before the open may already call for a compaction.
        maintenance.schedule()
    }

    /// True when the calling code runs inside this engine's writer queue (a transaction body).
    var isCurrentThreadWriter: Bool { writing?.writer.isCurrentThreadWriter ?? false }

    /// Stops this engine for good without writing to the directory: for a store suspended
    /// (everything durable already) that closes or reloads. Snapshots that still hold its
    /// versions go on reading them.
    func retire(with error: StoreError) {
        writing?.writer.retire(with: error)
        writing?.maintenance.shutdown(writingToDisk: false)
    }
}
