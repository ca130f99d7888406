import Strata
import StrataIO
import StrataTestSupport
import Testing

/// What opening a path that is not a store leaves behind.
struct OpenPathTests {
    /// Refusing someone else's directory must not leave a LOCK file in it.
    @Test func refusingAForeignDirectoryLeavesItUntouched() throws {
        let fileSystem = SimulatedFileSystem()
        try fileSystem.createDirectory("/photos")
        let handle = try fileSystem.openFile("/photos/cat.jpg", create: true)
        try handle.write(Array("meow".utf8), at: 0)
        try handle.close()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        #expect {
            _ = try Store(path: "/photos", options: options)
        } throws: { ($0 as? StoreError)?.code == .notAStore }
        #expect(try fileSystem.listDirectory("/photos") == ["cat.jpg"])
    }
}
