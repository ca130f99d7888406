import StrataIO

/// Writes fixtures to disk.
public enum FixtureWriter {
    /// Writes every case into its own directory under `directory` (which must exist or have
    /// an existing parent), and the README that lists them. A file in a case directory that
    /// the case does not hold is deleted, so the tree matches the catalog exactly.
    public static func write(_ cases: [FixtureCase], to directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws {
        try fileSystem.createDirectory(directory)
        for fixture in cases {
            let caseDirectory = fileSystem.path(directory, fixture.name)
            try fileSystem.createDirectory(caseDirectory)
            for stale in try fileSystem.listDirectory(caseDirectory) where fixture.store.files[stale] == nil {
                try fileSystem.removeFile(fileSystem.path(caseDirectory, stale))
            }
            for (name, bytes) in fixture.store.files.sorted(by: { $0.key < $1.key }) {
                try writeFile(fileSystem.path(caseDirectory, name), bytes, fileSystem)
            }
        }
        try writeFile(fileSystem.path(directory, FixtureReadme.fileName), Array(FixtureReadme.text(cases).utf8), fileSystem)
    }

    private static func writeFile(_ path: String, _ bytes: [UInt8], _ fileSystem: any FileSystem) throws {
        let handle = try fileSystem.openFile(path, create: true)
        defer { try? handle.close() }
        try handle.truncate(to: 0)
        try handle.write(bytes, at: 0)
    }
}
