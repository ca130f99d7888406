/// The data a reader can see: the memtable (later also sealed memtables and segment files).
/// Published versions never change; a new one replaces the old when the set of structures
/// changes. Readers hold a version (ARC keeps it alive) plus the commit sequence they read at.
final class Version: Sendable {
    let memtable: MemTable

    init(memtable: MemTable) {
        self.memtable = memtable
    }
}

/// What one read sees: a version and a commit sequence inside it.
struct ReadView: Sendable {
    let version: Version
    let sequence: UInt64
}
