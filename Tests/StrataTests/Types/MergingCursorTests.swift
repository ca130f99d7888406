@_spi(Engine) import StrataFormat
import Testing

@testable import Strata

/// `MergingCursor` on its own, over sources made of plain entry lists.
@Suite struct MergingCursorTests {
    /// A source over (key, sequence, value or nil for a tombstone), in scan order.
    private final class ListSource: MergeSource {
        private let entries: [(key: [UInt8], sequence: UInt64, value: [UInt8]?)]
        private var index = -1
        private let keyBuffer = KeyBuffer()
        private let valueBuffer = KeyBuffer()

        init(_ entries: [(String, UInt64, String?)]) {
            self.entries = entries.map { (Array($0.0.utf8), $0.1, $0.2.map { Array($0.utf8) }) }
        }

        override func advance() throws -> Bool {
            index += 1
            guard index < entries.count else { return false }
            entries[index].key.withUnsafeBytes { keyBuffer.set($0) }
            (entries[index].value ?? []).withUnsafeBytes { valueBuffer.set($0) }
            return true
        }

        override var key: UnsafeRawBufferPointer { keyBuffer.bytes }
        override var value: UnsafeRawBufferPointer { valueBuffer.bytes }
        override var sequence: UInt64 { entries[index].sequence }
        override var isTombstone: Bool { entries[index].value == nil }
    }

    private static func walk(_ sources: [[(String, UInt64, String?)]], reverse: Bool = false) throws -> [String] {
        let cursor = MergingCursor(sources: sources.map { ListSource($0) }, reverse: reverse)
        var seen: [String] = []
        while try cursor.next() {
            seen.append(String(decoding: cursor.key, as: UTF8.self) + "=" + String(decoding: cursor.value, as: UTF8.self))
        }
        return seen
    }

    @Test func theNewestVersionOfEachKeyWins() throws {
        let newer: [(String, UInt64, String?)] = [("b", 9, "b9"), ("d", 8, "d8")]
        let older: [(String, UInt64, String?)] = [("a", 1, "a1"), ("b", 2, "b2"), ("c", 3, "c3"), ("d", 4, "d4")]
        #expect(try Self.walk([newer, older]) == ["a=a1", "b=b9", "c=c3", "d=d8"])
        #expect(try Self.walk([older, newer]) == ["a=a1", "b=b9", "c=c3", "d=d8"], "the sequence decides, not the source order")
    }

    @Test func aTombstoneHidesOlderVersions() throws {
        let newer: [(String, UInt64, String?)] = [("b", 9, nil)]
        let older: [(String, UInt64, String?)] = [("a", 1, "a1"), ("b", 2, "b2"), ("c", 3, "c3")]
        #expect(try Self.walk([newer, older]) == ["a=a1", "c=c3"])
    }

    @Test func reverseWalksKeysDescending() throws {
        let newer: [(String, UInt64, String?)] = [("c", 9, "c9"), ("a", 8, nil)]
        let older: [(String, UInt64, String?)] = [("c", 3, "c3"), ("b", 2, "b2"), ("a", 1, "a1")]
        #expect(try Self.walk([newer, older], reverse: true) == ["c=c9", "b=b2"])
    }

    @Test func noSourcesAndEmptySourcesGiveNothing() throws {
        #expect(try Self.walk([]) == [])
        #expect(try Self.walk([[], []]) == [])
    }
}
