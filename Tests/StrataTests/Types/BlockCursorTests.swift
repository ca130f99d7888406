@_spi(Engine) import StrataFormat
import Testing

@testable import Strata

/// `BlockCursor` on its own, over blocks built by the format module's block builder.
@Suite struct BlockCursorTests {
    /// A block of `count` keys "key/0000".."key/NNNN", each with versions at sequences 2 and 1.
    private static func block(count: Int, restartInterval: Int = 4) throws -> DataBlock {
        var builder = SegmentBlockBuilder(restartInterval: restartInterval)
        for index in 0..<count {
            let key = Array("key/\(String(format: "%04d", index))".utf8)
            for sequence in [UInt64(2), 1] {
                builder.add(
                    key: SegmentFormat.internalKey(userKey: key, sequence: sequence, kind: .value),
                    value: Array("v\(index).\(sequence)".utf8))
            }
        }
        return try DataBlock(contents: builder.finish(), fileOffset: 0, fileName: "test")
    }

    @Test func nextVisitsEveryEntryInOrder() throws {
        var cursor = BlockCursor(block: try Self.block(count: 20).view, keyBuffer: KeyBuffer())
        var seen: [(String, UInt64, String)] = []
        while try cursor.next() {
            seen.append((String(decoding: cursor.userKey, as: UTF8.self), cursor.sequence, String(decoding: cursor.value, as: UTF8.self)))
        }
        #expect(seen.count == 40)
        #expect(seen.first! == ("key/0000", 2, "v0.2"))
        #expect(seen.last! == ("key/0019", 1, "v19.1"))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 > $1.1) })
    }

    @Test func seekFindsTheNewestVersionAtOrBelowTheSequence() throws {
        let block = try Self.block(count: 20)
        for index in [0, 7, 19] {
            let key = Array("key/\(String(format: "%04d", index))".utf8)
            var cursor = BlockCursor(block: block.view, keyBuffer: KeyBuffer())
            #expect(try key.withUnsafeBytes { try cursor.seek(userKey: $0, sequence: 5) })
            #expect(String(decoding: cursor.value, as: UTF8.self) == "v\(index).2")
            var older = BlockCursor(block: block.view, keyBuffer: KeyBuffer())
            #expect(try key.withUnsafeBytes { try older.seek(userKey: $0, sequence: 1) })
            #expect(String(decoding: older.value, as: UTF8.self) == "v\(index).1")
        }
        var past = BlockCursor(block: block.view, keyBuffer: KeyBuffer())
        #expect(try Array("zzz".utf8).withUnsafeBytes { try past.seek(userKey: $0, sequence: 5) } == false)
        var between = BlockCursor(block: block.view, keyBuffer: KeyBuffer())
        #expect(try Array("key/0003x".utf8).withUnsafeBytes { try between.seek(userKey: $0, sequence: 5) })
        #expect(String(decoding: between.userKey, as: UTF8.self) == "key/0004")
    }

    @Test func aDamagedEntryIsCorruptionNotACrash() throws {
        var bytes = try Self.block(count: 4).contents.map { $0 }
        bytes[1] = 0xFF  // the first entry's unshared length, far past the block
        let damaged = try DataBlock(contents: bytes, fileOffset: 4096, fileName: "seg")
        var cursor = BlockCursor(block: damaged.view, keyBuffer: KeyBuffer())
        let error = #expect(throws: FormatError.self) { while try cursor.next() {} }
        #expect(error?.file == "seg")
        #expect(error?.offset == 4096)
        #expect(error.map { StoreError.wrapping($0, while: "reading").code } == .corruption)
    }

    @Test func copiesOfTheStrictCursorAreIndependent() throws {
        // A copy left behind while the original walks on must still decode its own next
        // entry: prefix-compressed keys are rebuilt from that copy's previous key.
        let block = try Self.block(count: 20, restartInterval: 16)
        let reader = try SegmentBlockReader(block.contents.map { $0 }, blockOffset: 0)
        var original = reader.makeCursor()
        _ = try original.next()
        let copy = original
        for _ in 0..<5 { _ = try original.next() }
        var stepped = copy
        let entry = try #require(try stepped.next())
        #expect(entry.key == SegmentFormat.internalKey(userKey: Array("key/0000".utf8), sequence: 1, kind: .value))
        #expect(entry.value == Array("v0.1".utf8))
    }
}
