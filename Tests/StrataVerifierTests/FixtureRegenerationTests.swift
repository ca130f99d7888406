import Foundation
import StrataFixtureKit
import StrataTestSupport
import Testing

/// The checked-in fixtures are exactly what the generator writes, so neither can drift.
@Suite("fixture generation")
struct FixtureRegenerationTests {
    @Test func regeneratedFixturesMatchTheCheckedInFilesByteForByte() async throws {
        try await withTestDirectory { directory in
            let generated = directory.path("stores")
            try FixtureWriter.write(FixtureCatalog.all(), to: generated)
            let checkedIn = FixturePaths.stores.path
            let names = try FileManager.default.contentsOfDirectory(atPath: generated).sorted()
            #expect(
                names == (try FileManager.default.contentsOfDirectory(atPath: checkedIn).sorted()),
                "Fixtures/stores holds other cases than the catalog; run `swift run strata-fixtures Fixtures/stores` and delete stale directories")
            for name in names {
                let generatedPath = directory.path("stores/\(name)")
                let checkedInPath = checkedIn + "/" + name
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: generatedPath, isDirectory: &isDirectory)
                if isDirectory.boolValue {
                    let expected = try directoryContents(generatedPath)
                    let actual = try directoryContents(checkedInPath)
                    #expect(expected.keys.sorted() == actual.keys.sorted(), "files of \(name)")
                    for (file, bytes) in expected {
                        #expect(
                            actual[file] == bytes, "\(name)/\(file) differs from what the generator writes; run `swift run strata-fixtures Fixtures/stores`")
                    }
                } else {
                    let expected = try fileBytes(atPath: generatedPath)
                    #expect((try? fileBytes(atPath: checkedInPath)) == expected, "\(name) differs from what the generator writes")
                }
            }
        }
    }

    @Test func generatingTwiceGivesTheSameBytes() {
        let first = FixtureCatalog.all()
        let second = FixtureCatalog.all()
        #expect(first.map(\.name) == second.map(\.name))
        for (a, b) in zip(first, second) {
            #expect(a.store == b.store, "\(a.name)")
        }
    }

    @Test func fixturesStaySmall() {
        for fixture in FixtureCatalog.all() {
            let bytes = fixture.store.files.values.reduce(0) { $0 + $1.count }
            #expect(bytes < 4096, "\(fixture.name) is \(bytes) bytes")
        }
    }
}
