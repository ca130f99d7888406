@_spi(Engine) import StrataFormat
import StrataIO

/// Appends version edits to the current manifest (format: docs/format/manifest.md) and
/// installs new manifests.
///
/// Used under the maintenance install lock (and by recovery before maintenance starts).
///
/// Invariants:
/// 1. An edit counts only once `append` returns: its record is written and synced. The
///    engine acts on an edit (installs a Version, deletes files) only after that.
/// 2. A manifest is installed whole: written under a temporary name with a full snapshot as
///    its first record, synced, renamed into place, and the directory synced. Older
///    manifests are removed only after that.
/// 3. After a failed append or sync nothing more is appended to that file (its tail may be
///    torn); the next edit goes into a new manifest.
/// 4. When `lastRecordProven`, damage to any record of the file can never be taken for a torn
///    append: the last record is the snapshot (always corruption when damaged) or a close
///    mark (an empty edit) written after it (docs/format/manifest.md, "Damage" and "The close mark").
final class ManifestWriter {
    /// A manifest past this size is replaced by a fresh snapshot at the next edit, unless
    /// `StoreOptions.manifestRollBytes` (a test hook) says otherwise.
    static let rollBytes = 4 << 20

    let fileSystem: any FileSystem
    let directory: String
    private var handle: (any FileHandle)?
    private(set) var number: UInt64
    private var offset: Int
    private var broken = false
    private(set) var lastRecordProven = true
    /// The size past which the next edit starts a new manifest.
    private let rollLimitBytes: Int

    private init(fileSystem: any FileSystem, directory: String, handle: any FileHandle, number: UInt64, offset: Int, rollLimitBytes: Int) {
        self.fileSystem = fileSystem
        self.directory = directory
        self.handle = handle
        self.number = number
        self.offset = offset
        self.rollLimitBytes = rollLimitBytes
    }

    /// True when the next edit must start a new manifest (invariant 3, or size).
    var needsNewFile: Bool { broken || handle == nil || offset >= rollLimitBytes }

    /// Installs manifest `number` holding `snapshot` (invariant 2) and removes the manifests
    /// numbered below it. The new manifest rolls past `rollBytes`.
    static func install(
        number: UInt64, snapshot: VersionEdit, fileSystem fs: any FileSystem, directory: String, rollBytes: Int = ManifestWriter.rollBytes
    ) throws -> ManifestWriter {
        var bytes = ManifestFormat.Header(fileNumber: number).encoded()
        var record = [UInt8]()
        snapshot.encoded().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &record, fileOffset: bytes.count) }
        bytes.append(contentsOf: record)
        let temporary = fs.path(directory, ManifestFormat.temporaryName(number))
        let final = fs.path(directory, ManifestFormat.fileName(number))
        let scratch = try fs.openFile(temporary, create: true)
        do {
            try scratch.truncate(to: 0)
            try scratch.write(bytes, at: 0)
            try scratch.sync()
            try scratch.close()
        } catch {
            try? scratch.close()
            try? fs.removeFile(temporary)
            throw error
        }
        try fs.rename(temporary, to: final)
        try fs.syncDirectory(directory)
        let handle = try fs.openFile(final, create: false)
        // The new manifest is durable: older ones (and stray temporaries) are no longer needed.
        // No directory sync for the removals: one a crash undoes leaves an older manifest,
        // which the highest-numbered one outranks and the next open removes.
        for name in try fs.listDirectory(directory) {
            let older = ManifestFormat.number(fromManifestName: name).map { $0 < number } ?? false
            let stray = ManifestFormat.number(fromTemporaryName: name) != nil
            if older || stray { try? fs.removeFile(fs.path(directory, name)) }
        }
        return ManifestWriter(fileSystem: fs, directory: directory, handle: handle, number: number, offset: bytes.count, rollLimitBytes: rollBytes)
    }

    /// Appends one edit and syncs it (invariant 1). On failure the file is abandoned.
    func append(_ edit: VersionEdit) throws {
        guard let handle, !broken else {
            throw StoreError(.io, "the manifest cannot take more edits after an earlier failure")
        }
        var record = [UInt8]()
        edit.encoded().withUnsafeBytes { _ = WALFormat.appendRecord($0, to: &record, fileOffset: offset) }
        do {
            try handle.write(record, at: Int64(offset))
            try handle.sync()
        } catch {
            broken = true
            throw error
        }
        offset += record.count
        lastRecordProven = false
    }

    /// Closes the file, first appending an empty edit (a close mark) when the last record is
    /// an edit nothing follows, so that bit rot in it is later seen as corruption rather than
    /// taken for a torn append and dropped (invariant 4). A failed mark changes nothing the
    /// store relies on: every edit before it was already synced.
    func closeWithMark() {
        writeMarkIfNeeded()
        close()
    }

    /// Appends the close mark when the last record is an edit, keeping the file open: a
    /// suspension, after which this store may go on appending.
    func writeMarkIfNeeded() {
        if handle != nil, !broken, !lastRecordProven {
            do {
                try append(VersionEdit())
                lastRecordProven = true
            } catch {
                // The file is abandoned (invariant 3); the next open installs a new one.
            }
        }
    }

    /// Moves to `replacement`, closing this writer's file.
    func close() {
        try? handle?.close()
        handle = nil
    }
}
