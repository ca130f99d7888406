@_spi(Engine) import StrataFormat
import StrataIO

/// What `resume()` compares to tell whether another process changed the store while it was
/// suspended: the directory's file names, and for the files that grow in place (WAL segments,
/// manifests) and the identity file, the size and a checksum of the first bytes. Together
/// with the writer's check that nothing follows its last WAL record in the file now at that
/// path (`WALWriter.isUntouchedPastEnd`), any change a Strata process makes shows: every open
/// installs a manifest under a new name, every commit appends to the WAL (whose preallocated
/// size does not change, hence the probe), a flush or compaction adds segment files, and a
/// store deleted and created again under the same names starts with other bytes.
///
/// Segment files the store's current version does not hold are left out: a snapshot of this
/// process released while the store is suspended removes its obsolete file by itself, which
/// is no sign of another writer (another process's open would also install a manifest).
struct DirectoryFingerprint: Equatable {
    /// Bytes at the start of each file that the checksum covers: a WAL segment's header and
    /// first records, a manifest's snapshot of the levels.
    static let leadingBytes = 64 << 10

    private var names: [String]
    private var files: [String: FileMark]

    private struct FileMark: Equatable {
        var size: Int64
        var leadingChecksum: UInt32
    }

    /// - Parameter liveSegments: the numbers of the segment files the current version holds.
    static func capture(directory: String, fileSystem fs: any FileSystem, liveSegments: Set<UInt64>) throws -> DirectoryFingerprint {
        let names = try fs.listDirectory(directory).filter { name in
            if name == StoreLock.fileName { return false }
            guard let segment = ManifestFormat.number(fromSegmentName: name) else { return true }
            return liveSegments.contains(segment)
        }.sorted()
        var files: [String: FileMark] = [:]
        for name in names {
            let growsInPlace = WALFormat.number(fromName: name) != nil || ManifestFormat.number(fromManifestName: name) != nil
            let isIdentity = name == StoreIdentityFormat.fileName
            guard growsInPlace || isIdentity else { continue }
            let handle: any FileHandle
            do {
                handle = try fs.openFile(fs.path(directory, name), create: false)
            } catch let error as IOError where error.code == .notFound {
                continue  // removed while listing: the names of the next capture differ anyway
            }
            defer { try? handle.close() }
            let size = try handle.size()
            let leading = try handle.read(at: 0, count: Int(min(size, Int64(leadingBytes))))
            files[name] = FileMark(size: size, leadingChecksum: Checksum.crc32(leading))
        }
        return DirectoryFingerprint(names: names, files: files)
    }
}
