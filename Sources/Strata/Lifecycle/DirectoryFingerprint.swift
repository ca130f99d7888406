@_spi(Engine) import StrataFormat
import StrataIO

/// What `resume()` compares to tell whether another process changed the store while it was
/// suspended: the directory's file names, the sizes of the files that grow in place (WAL
/// segments, manifests) and the identity file's bytes. Together with the writer's check that
/// nothing follows its last WAL record (`WALWriter.isUntouchedPastEnd`), any change a
/// Strata process makes shows: every open installs a manifest under a new name, every
/// commit appends to the WAL, a flush or compaction adds segment files, and a store
/// deleted and created again has another identity.
struct DirectoryFingerprint: Equatable {
    private var names: [String]
    private var sizes: [String: Int64]
    private var identity: [UInt8]

    static func capture(directory: String, fileSystem fs: any FileSystem) throws -> DirectoryFingerprint {
        let names = try fs.listDirectory(directory).filter { $0 != StoreLock.fileName }.sorted()
        var sizes: [String: Int64] = [:]
        var identity: [UInt8] = []
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
            if isIdentity {
                identity = try handle.readAll()
            } else {
                sizes[name] = try handle.size()
            }
        }
        return DirectoryFingerprint(names: names, sizes: sizes, identity: identity)
    }
}
