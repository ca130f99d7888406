import Testing

@testable import Strata

/// The memtable's arena: pieces 8-byte aligned and apart, a large node in a chunk of its own,
/// and on Linux chunks aligned to 2 MiB, which transparent huge pages need.
struct ArenaTests {
    @Test func piecesAreAlignedApartAndCounted() {
        let arena = Arena()
        var pieces: [(start: UInt, size: Int)] = []
        for size in [1, 7, 8, 9, 100, 4_000, 70_000, Arena.chunkBytes / 4 + 1, 3, 1_000_000] {
            let pointer = arena.allocate(size)
            pointer.initializeMemory(as: UInt8.self, repeating: 0xAB, count: size)
            pieces.append((UInt(bitPattern: pointer), size))
            #expect(UInt(bitPattern: pointer) % 8 == 0)
        }
        let sorted = pieces.sorted { $0.start < $1.start }
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            #expect(a.start + UInt(a.size) <= b.start, "pieces overlap")
        }
        #expect(arena.reservedBytes >= pieces.reduce(0) { $0 + $1.size })
        #if os(Linux)
            // The first piece opened the first chunk.
            #expect(pieces[0].start % UInt(Arena.chunkBytes) == 0)
        #endif
    }
}
