import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import Strata

/// `ManifestWriter` on its own: installing, appending, the close mark, and refusing to append
/// after a failure.
@Suite struct ManifestWriterTests {
    private static let directory = "/m"

    private static func edits(_ fs: SimulatedFileSystem, _ number: UInt64) throws -> [VersionEdit] {
        var edits: [VersionEdit] = []
        _ = try ManifestRecordReader.read(fs.contents(of: directory + "/" + ManifestFormat.fileName(number))!) { payload, offset in
            edits.append(try payload.withUnsafeBytes { try VersionEdit.decode($0, baseOffset: offset) })
        }
        return edits
    }

    @Test func installWritesTheSnapshotAndRemovesOlderManifests() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory(Self.directory)
        let first = try ManifestWriter.install(
            number: 3, snapshot: VersionEdit(logNumber: 1, lastSequence: 0, nextFileNumber: 4),
            fileSystem: fs, directory: Self.directory)
        first.close()
        let second = try ManifestWriter.install(
            number: 5, snapshot: VersionEdit(logNumber: 2, lastSequence: 9, nextFileNumber: 6),
            fileSystem: fs, directory: Self.directory)
        defer { second.close() }
        #expect(try fs.listDirectory(Self.directory).sorted() == [ManifestFormat.fileName(5)])
        #expect(try Self.edits(fs, 5) == [VersionEdit(logNumber: 2, lastSequence: 9, nextFileNumber: 6)])
    }

    @Test func theCloseMarkFollowsAnEditButNotASnapshotAlone() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory(Self.directory)
        let snapshot = VersionEdit(logNumber: 1, lastSequence: 0, nextFileNumber: 2)
        let quiet = try ManifestWriter.install(number: 1, snapshot: snapshot, fileSystem: fs, directory: Self.directory)
        quiet.closeWithMark()
        #expect(try Self.edits(fs, 1).count == 1)

        let busy = try ManifestWriter.install(number: 2, snapshot: snapshot, fileSystem: fs, directory: Self.directory)
        try busy.append(VersionEdit(logNumber: 2, lastSequence: 5))
        busy.closeWithMark()
        #expect(try Self.edits(fs, 2) == [snapshot, VersionEdit(logNumber: 2, lastSequence: 5), VersionEdit()])
    }

    @Test func afterAFailedAppendNothingMoreIsAppended() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory(Self.directory)
        let writer = try ManifestWriter.install(
            number: 1, snapshot: VersionEdit(logNumber: 1, lastSequence: 0, nextFileNumber: 2),
            fileSystem: fs, directory: Self.directory)
        fs.failNext(.sync, code: .other)
        #expect(throws: (any Error).self) { try writer.append(VersionEdit(lastSequence: 3)) }
        #expect(writer.needsNewFile)
        #expect(throws: StoreError.self) { try writer.append(VersionEdit(lastSequence: 4)) }
        writer.closeWithMark()
        #expect(try Self.edits(fs, 1).count <= 2, "no close mark after a failure")
    }
}
