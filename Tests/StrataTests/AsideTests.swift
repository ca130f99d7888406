import Strata
import StrataIO
import StrataTestSupport
import StrataVerifier
import Testing

/// Files named like the store's leftovers whose contents are not the store's are set aside
/// in `aside/`, never removed (docs/format/store.md, "Files the store does not recognise").
@Suite struct AsideTests {
    static let garbage: [UInt8] = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// A closed store with 30 keys: 20 in a segment file, 10 in the WAL.
    static func makeStore(_ fs: SimulatedFileSystem) throws {
        let store = try APITestSimulated.open(fs)
        for index in 0..<20 { try store.write { tx in try tx.put(apiKey(index), apiValue(index)) } }
        try store.compact()
        for index in 20..<30 { try store.write { tx in try tx.put(apiKey(index), apiValue(index)) } }
        try store.close()
    }

    static func place(_ fs: SimulatedFileSystem, _ name: String, _ bytes: [UInt8]) throws {
        let handle = try fs.openFile(APITestSimulated.path + "/" + name, create: true)
        try handle.write(bytes, at: 0)
        try handle.sync()
        try handle.close()
    }

    static let expected = (0..<30).map { Entry(key: apiKey($0), value: apiValue($0)) }

    @Test(arguments: [
        "wal-0000000000.log",  // below the manifest's log number
        "wal-0000000099.log",  // the last WAL segment, taken for an interrupted creation by name
        "seg-0000000090.sst",  // a segment file nothing references
        "manifest-0000000000.log",  // an older manifest
        "manifest-0000000095.tmp"  // a manifest never installed
    ])
    func garbageIsSetAside(name: String) throws {
        let fs = SimulatedFileSystem()
        try Self.makeStore(fs)
        try Self.place(fs, name, Self.garbage)
        let before = try Verifier.verify(path: APITestSimulated.path, fileSystem: fs)
        #expect(before.findings.map(\.code).contains("file.foreign"), "\(before.findings)")
        #expect(!before.findings.contains { $0.repairable && $0.file == name })

        let store = try APITestSimulated.open(fs)
        #expect(store.recovery.movedAside.map(\.name) == [name])
        #expect(store.recovery.movedAside.first?.movedTo == "aside/" + name)
        #expect(store.recovery.removedUnreferencedFiles.isEmpty)
        #expect(try apiAllEntries(store) == Self.expected)
        try store.close()
        #expect(try fs.readWholeFile(APITestSimulated.path + "/aside/" + name) == Self.garbage)
        #expect(try fs.kind(of: APITestSimulated.path + "/" + name) == nil)

        let after = try Verifier.verify(path: APITestSimulated.path, fileSystem: fs)
        #expect(after.isClean, "\(after.findings)")
        #expect(after.findings.contains { $0.code == "file.asideDirectory" && $0.severity == .info })
        let again = try APITestSimulated.open(fs)
        #expect(again.recovery.movedAside.isEmpty)
        #expect(try apiAllEntries(again) == Self.expected)
        try again.close()
    }

    @Test func nameCollisionsGetASuffix() throws {
        let fs = SimulatedFileSystem()
        try Self.makeStore(fs)
        for round in 0..<3 {
            try Self.place(fs, "seg-0000000090.sst", Self.garbage + [UInt8(round)])
            let store = try APITestSimulated.open(fs)
            #expect(store.recovery.movedAside.map(\.movedTo) == [round == 0 ? "aside/seg-0000000090.sst" : "aside/seg-0000000090.sst.\(round)"])
            try store.close()
        }
        #expect(try fs.readWholeFile(APITestSimulated.path + "/aside/seg-0000000090.sst.2") == Self.garbage + [2])
    }

    @Test func realLeftoversAreStillRemoved() throws {
        let fs = SimulatedFileSystem()
        try Self.makeStore(fs)
        try Self.place(fs, "wal-0000000000.log", [UInt8](repeating: 0, count: 4096))  // interrupted creation
        try Self.place(fs, "seg-0000000090.sst", [])  // a flush that wrote nothing
        try Self.place(fs, "wal-0000000099.log", [UInt8](repeating: 0, count: 1 << 16))  // incomplete last segment
        let store = try APITestSimulated.open(fs)
        #expect(store.recovery.movedAside.isEmpty)
        #expect(store.recovery.removedUnreferencedFiles == ["seg-0000000090.sst", "wal-0000000000.log"])
        #expect(store.recovery.removedIncompleteSegments == ["wal-0000000099.log"])
        #expect(try apiAllEntries(store) == Self.expected)
        try store.close()
        #expect(try fs.kind(of: APITestSimulated.path + "/aside") == nil)
    }

    @Test func readOnlyOpenMovesNothing() throws {
        let fs = SimulatedFileSystem()
        try Self.makeStore(fs)
        try Self.place(fs, "seg-0000000090.sst", Self.garbage)
        try Self.place(fs, "wal-0000000099.log", Self.garbage)
        var options = APITestSimulated.options(fs)
        options.readOnly = true
        let store = try Store(path: APITestSimulated.path, options: options)
        #expect(store.recovery.movedAside.isEmpty)
        #expect(try apiAllEntries(store) == Self.expected)
        try store.close()
        #expect(try fs.readWholeFile(APITestSimulated.path + "/seg-0000000090.sst") == Self.garbage)
        #expect(try fs.kind(of: APITestSimulated.path + "/aside") == nil)
    }
}
