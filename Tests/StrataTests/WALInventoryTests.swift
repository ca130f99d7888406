import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import Strata

/// The inventory's counts for stats: the segment being appended to keeps its size apart from
/// the others (an atomic word per commit), and the totals must still add up across a switch
/// to a new segment and the removal of the old ones.
@Suite struct WALInventoryTests {
    @Test func totalsFollowTheOpenSegmentAcrossSwitchesAndRetirement() throws {
        let fileSystem = SimulatedFileSystem()
        try fileSystem.createDirectory("/db")
        for number: UInt64 in [3, 4, 5] {
            try fileSystem.openFile(fileSystem.path("/db", WALFormat.fileName(number)), create: true).close()
        }
        let inventory = WALInventory([3: 1_000])
        #expect(inventory.segmentCount == 1)
        #expect(inventory.totalBytes == 1_000)

        // Segment 3 goes on growing, then the writer moves to 4 and 5.
        inventory.update(3, bytes: 1_200)
        inventory.update(3, bytes: 1_500)
        #expect(inventory.totalBytes == 1_500)
        inventory.update(4, bytes: 10)
        inventory.update(4, bytes: 700)
        #expect(inventory.segmentCount == 2)
        #expect(inventory.totalBytes == 1_500 + 700)
        inventory.update(5, bytes: 40)
        #expect(inventory.segmentCount == 3)
        #expect(inventory.totalBytes == 1_500 + 700 + 40)

        // A flush covered 3 and 4: the open segment's later growth still counts.
        inventory.retire(below: 5, fileSystem: fileSystem, directory: "/db")
        inventory.update(5, bytes: 90)
        #expect(inventory.segmentCount == 1)
        #expect(inventory.totalBytes == 90)
    }
}
