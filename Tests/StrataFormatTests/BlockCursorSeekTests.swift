@_spi(Engine) import StrataFormat
import Testing

/// The engine's block cursor (`BlockCursor`): its seek compares restart keys in place and its
/// steps take an entry's lengths from one load when they are short. Checked here on blocks
/// with one-byte and two-byte value lengths, and on a block whose restart entry is damaged.
struct BlockCursorSeekTests {
    private static func block(values valueLength: Int, count: Int = 100, restartInterval: Int = 16) -> (contents: [UInt8], keys: [[UInt8]]) {
        var builder = SegmentBlockBuilder(restartInterval: restartInterval)
        var keys: [[UInt8]] = []
        for i in 0..<count {
            let key = SegmentFormat.internalKey(userKey: Array("user-\(1000 + i)".utf8), sequence: UInt64(i + 1), kind: .value)
            keys.append(key)
            builder.add(key: key, value: [UInt8](repeating: UInt8(i), count: valueLength))
        }
        return (builder.finish(), keys)
    }

    private static func seek(_ contents: [UInt8], _ userKey: [UInt8], sequence: UInt64) throws -> (found: Bool, key: [UInt8], value: [UInt8]) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: contents.count, alignment: 8)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: contents)
        let name = BlockFileName("test")
        return try withExtendedLifetime(name) {
            let view = try BlockView(checking: UnsafeRawBufferPointer(buffer), mapping: KeyBuffer(), fileOffset: 0, name: name)
            var cursor = BlockCursor(block: view, keyBuffer: KeyBuffer())
            let found = try userKey.withUnsafeBytes { key in try cursor.seek(userKey: key, sequence: sequence) }
            guard found else { return (false, [], []) }
            return (true, Array(cursor.internalKey), Array(cursor.value))
        }
    }

    @Test(arguments: [1, 100, 127, 128, 300, 20_000])
    func seekFindsEveryKeyWhateverTheValueLength(valueLength: Int) throws {
        // The default spacing of restarts, the one files before 2026-11-26 have, and one apart.
        for interval in [SegmentFormat.restartInterval, 16, 3] {
            try Self.expectSeeksFindEveryKey(valueLength: valueLength, restartInterval: interval)
        }
    }

    private static func expectSeeksFindEveryKey(valueLength: Int, restartInterval: Int) throws {
        let (contents, keys) = Self.block(values: valueLength, count: valueLength > 1_000 ? 20 : 100, restartInterval: restartInterval)
        for (i, key) in keys.enumerated() {
            let userKey = Array(key.dropLast(8))
            let hit = try Self.seek(contents, userKey, sequence: UInt64(i + 1))
            #expect(hit.found && hit.key == key && hit.value == [UInt8](repeating: UInt8(i), count: valueLength), "entry \(i)")
            // Below the entry's sequence its key has no version: the seek lands on the next key.
            let next = try Self.seek(contents, userKey, sequence: UInt64(i))
            #expect(next.found == (i + 1 < keys.count) && (next.found ? next.key == keys[i + 1] : true), "past entry \(i)")
        }
        #expect(try Self.seek(contents, Array("user-2".utf8), sequence: .max).found == false)
    }

    /// The writer's spacing of restarts: every 8th entry, and every entry that would take the
    /// stretch since the last restart past a kilobyte, so that a block of 1,000-byte values
    /// is searched by its restarts rather than walked entry by entry.
    @Test func restartsComeEveryEighthEntryOrEveryKilobyte() {
        func restarts(values valueLength: Int, count: Int) -> Int {
            var builder = SegmentBlockBuilder()
            for i in 0..<count {
                let key = SegmentFormat.internalKey(userKey: Array("user-\(1000 + i)".utf8), sequence: UInt64(i + 1), kind: .value)
                builder.add(key: key, value: [UInt8](repeating: 7, count: valueLength))
            }
            let contents = builder.finish()
            return contents.suffix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        }
        #expect(restarts(values: 100, count: 32) == 4)
        #expect(restarts(values: 1000, count: 4) == 4)
        #expect(restarts(values: 400, count: 8) == 4)  // every second entry: 2 × ~420 bytes
        #expect(restarts(values: 1, count: 64) == 8)
    }

    /// A restart entry holds its whole key; one that claims to share bytes with the entry
    /// before is damage, reported as such by the seek that meets it.
    @Test func aRestartEntryThatSharesBytesIsDamage() throws {
        let (contents, _) = Self.block(values: 8)
        let restartCount = Int(contents[contents.count - 4])
        #expect(restartCount == 7)
        // Restart 3 (entry 48): its first byte is its shared length, 0.
        let restartArray = contents.count - 4 - 4 * restartCount
        let offset = Int(contents[restartArray + 12]) | Int(contents[restartArray + 13]) << 8
        #expect(contents[offset] == 0)
        var damaged = contents
        damaged[offset] = 3
        do {
            _ = try Self.seek(damaged, Array("user-1060".utf8), sequence: .max)
            Issue.record("the damaged restart was read as an entry")
        } catch {
            #expect((error as? FormatError)?.kind == .malformed)
        }
    }
}
