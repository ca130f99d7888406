// Keys, values and range bounds as Data and String (API/DataAndString.swift,
// Composition/StoreIO+DataAndString.swift): each form stores exactly the bytes of its
// [UInt8] counterpart, and literals still resolve without ambiguity.
import Foundation
import Strata
import StrataTestSupport
import Testing

private func data(_ text: String) -> Data { Data(text.utf8) }

/// Bytes that are not UTF-8: a lone continuation byte and an invalid lead byte.
private let notUTF8: [UInt8] = [0x80, 0xFF, 0x61]

@Suite("Data and String keys and values")
struct DataAndStringTests {
    @Test("String and Data keys and values store the bytes of their [UInt8] form, in any mix")
    func putGetContainsDelete() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put("s/string", "text ✓")
            try tx.put(data("s/data"), data("bytes"))
            try tx.put("s/mixed1", data("from data"))
            try tx.put(data("s/mixed2"), "from string")
            try tx.put(apiBytes("s/mixed3"), "array key")
            try tx.put("s/mixed4", apiBytes("array value"))
            try tx.put("s/gone", "soon")
            try tx.delete("s/gone")
            try tx.put(data("s/gone2"), data("soon"))
            try tx.delete(data("s/gone2"))
            // A write transaction reads its own writes through every form.
            #expect(try tx.get("s/string", as: String.self) == "text ✓")
            #expect(try tx.contains(data("s/data")))
        }
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.get(apiBytes("s/string")) == apiBytes("text ✓"))
            #expect(try tx.get(apiBytes("s/data")) == apiBytes("bytes"))
            #expect(try tx.get(apiBytes("s/mixed1")) == apiBytes("from data"))
            #expect(try tx.get(apiBytes("s/mixed2")) == apiBytes("from string"))
            #expect(try tx.get(apiBytes("s/mixed3")) == apiBytes("array key"))
            #expect(try tx.get(apiBytes("s/mixed4")) == apiBytes("array value"))
            #expect(try tx.get("s/string") == apiBytes("text ✓"))
            #expect(try tx.get(data("s/data")) == apiBytes("bytes"))
            #expect(try tx.contains("s/string"))
            #expect(try tx.contains(data("s/data")))
            #expect(try !tx.contains("s/gone"))
            #expect(try !tx.contains(data("s/gone2")))
            #expect(try tx.get("missing") == nil)
        }
    }

    @Test("get(_:as:) gives String, Data or bytes; a missing key is nil, not an error")
    func typedValues() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put("k", "värde")
            try tx.put("empty", "")
        }
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.get("k", as: String.self) == "värde")
            #expect(try tx.get("k", as: Data.self) == data("värde"))
            #expect(try tx.get(data("k"), as: [UInt8].self) == apiBytes("värde"))
            #expect(try tx.get(apiBytes("k"), as: String.self) == "värde")
            #expect(try tx.get("empty", as: String.self) == "")
            #expect(try tx.get("missing", as: String.self) == nil)
            #expect(try tx.get("missing", as: Data.self) == nil)
        }
    }

    @Test("a value that is not UTF-8 read as a String throws .invalidArgument; as Data it reads")
    func invalidUTF8() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put("binary", notUTF8)
            try tx.put(notUTF8, "binary key")
        }
        let error = #expect(throws: StoreError.self) {
            _ = try store.read { tx in try tx.get("binary", as: String.self) }
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("UTF-8") == true)
        #expect(try store.read { tx in try tx.get("binary", as: Data.self) } == Data(notUTF8))
        // Entry conveniences decode the same way.
        let entries = try store.read { tx in Array(try tx.scan(from: notUTF8, to: notUTF8 + [0])) }
        #expect(entries.count == 1)
        #expect(throws: StoreError.self) { _ = try entries[0].key(as: String.self) }
        #expect(try entries[0].key(as: Data.self) == Data(notUTF8))
        #expect(try entries[0].value(as: String.self) == "binary key")
        #expect(throws: StoreError.self) { _ = try String(storeBytes: notUTF8) }
    }

    @Test("String keys are their UTF-8 bytes, without normalization, and keep key validation")
    func stringKeysAreBytes() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // equal as Strings, different as bytes
        try store.write { tx in
            try tx.put(composed, "one")
            try tx.put(decomposed, "two")
        }
        #expect(try store.read { tx in try tx.get(composed, as: String.self) } == "one")
        #expect(try store.read { tx in try tx.get(decomposed, as: String.self) } == "two")
        #expect(try store.read { tx in try tx.scan(prefix: "caf").count } == 2)
        #expect(composed.storeBytes == Array(composed.utf8))
        #expect(data("x").storeBytes == [0x78])
        #expect(try String(storeBytes: Array("ключ".utf8)) == "ключ")
        #expect(Data(storeBytes: [1, 2]) == Data([1, 2]))
        #expect([UInt8](storeBytes: [1, 2]) == [1, 2])

        let empty = #expect(throws: StoreError.self) { try store.write { tx in try tx.put("", "v") } }
        #expect(empty?.code == .invalidArgument)
        let emptyData = #expect(throws: StoreError.self) { try store.write { tx in try tx.put(Data(), "v") } }
        #expect(emptyData?.code == .invalidArgument)
    }

    @Test("scans by String and Data prefix and bounds, forward and reverse, and forEachUnsafe")
    func scans() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            for name in ["a", "b/1", "b/2", "b/3", "c"] { try tx.put(name, "v-" + name) }
        }
        try store.read { (tx: ReadTransaction) throws in
            let keys = { (scan: Scan) in scan.map { String(decoding: $0.key, as: UTF8.self) } }
            #expect(try keys(tx.scan(prefix: "b/")) == ["b/1", "b/2", "b/3"])
            #expect(try keys(tx.scan(prefix: data("b/"), reverse: true)) == ["b/3", "b/2", "b/1"])
            #expect(try keys(tx.scan(from: "b/2")) == ["b/2", "b/3", "c"])
            #expect(try keys(tx.scan(from: "b/2", to: "c")) == ["b/2", "b/3"])
            #expect(try keys(tx.scan(from: "b/2", to: nil, reverse: true)) == ["c", "b/3", "b/2"])
            #expect(try keys(tx.scan(from: data("a"), to: data("b/2"))) == ["a", "b/1"])
            #expect(try keys(tx.scan(from: apiBytes("b/3"), reverse: true)) == ["c", "b/3"])

            var visited: [String] = []
            try tx.forEachUnsafe(from: "b/", to: "b/3") { key, _ in
                visited.append(String(decoding: key, as: UTF8.self))
                return true
            }
            #expect(visited == ["b/1", "b/2"])

            let entries = Array(try tx.scan(prefix: "b/"))
            #expect(try entries.map { try $0.key(as: String.self) } == ["b/1", "b/2", "b/3"])
            #expect(try entries.map { try $0.value(as: String.self) } == ["v-b/1", "v-b/2", "v-b/3"])
            #expect(try entries[0].value(as: Data.self) == data("v-b/1"))
            #expect(try entries[0].key(as: [UInt8].self) == apiBytes("b/1"))
        }
    }

    @Test("deleteRange with String and Data bounds removes the range and counts what had a value")
    func deleteRanges() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            for name in ["a", "b", "c", "d", "e"] { try tx.put(name, name) }
        }
        let removed = try store.write { tx in try tx.deleteRange(from: "b", to: "d") }
        #expect(removed == 2)
        let removedToEnd = try store.write { tx in try tx.deleteRange(from: data("d"), to: nil) }
        #expect(removedToEnd == 2)
        #expect(try store.read { tx in try tx.scan(from: "a").map(\.key) } == [apiBytes("a")])
    }

    @Test("references by String and Data resolve as the byte forms do, and resolve(_:as:) decodes")
    func references() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put("mail/1", "hello")
            try tx.put("mail/2", "world")
        }
        let (ref, byData, prefix, range) = try store.read { tx in
            (try tx.reference("mail/1"), try tx.reference(data("mail/2")), try tx.reference(prefix: "mail/"), try tx.reference(from: "mail/2"))
        }
        #expect(ref.key == apiBytes("mail/1"))
        #expect(byData.key == apiBytes("mail/2"))
        #expect(prefix.lower == apiBytes("mail/") && prefix.upper == apiBytes("mail0"))
        #expect(range.lower == apiBytes("mail/2") && range.upper == nil)
        try store.write { tx in try tx.put("mail/1", "changed") }
        try store.read { (tx: ReadTransaction) throws in
            #expect(try tx.resolve(ref, as: String.self) == "changed")
            #expect(try tx.resolve(byData, as: Data.self) == data("world"))
            #expect(try tx.changedSince(ref))
            #expect(try !tx.changedSince(byData))
            #expect(try tx.resolve(prefix).count == 2)
            #expect(try tx.resolve(range).count == 1)
        }
        let unchangedByPrefix = try store.read { tx in try tx.reference(prefix: data("mail/")) }
        #expect(try store.read { tx in try !tx.changedSince(unchangedByPrefix) })
    }

    @Test("StoreIO primitives take String and Data keys, values and bounds")
    func storeIOPrimitives() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        let put: StoreIO<ReadWrite, Void> = .put("io/a", "1")
        let putMixed: StoreIO<ReadWrite, Void> = .put(data("io/b"), "2")
        let putBytes: StoreIO<ReadWrite, Void> = .put("io/c", apiBytes("3"))
        let putMore = StoreIO.sequence([StoreIO<ReadWrite, Void>.put("io/d", "4"), .put("io/e", data("5"))])
        try store.run(put.flatMap { putMixed }.flatMap { putBytes }.flatMap { putMore.map { _ in () } })

        let raw: StoreIO<ReadOnly, [UInt8]?> = .get("io/a")
        let text: StoreIO<ReadOnly, String?> = .get(data("io/b"), as: String.self)
        let asData: StoreIO<ReadOnly, Data?> = .get("io/c", as: Data.self)
        let byPrefix: StoreIO<ReadOnly, [Entry]> = .scan(prefix: "io/")
        let byRange: StoreIO<ReadOnly, [Entry]> = .scan(from: "io/b", to: "io/d")
        let openRange: StoreIO<ReadOnly, [Entry]> = .scan(from: data("io/d"))
        #expect(try store.run(raw) == apiBytes("1"))
        #expect(try store.run(text) == "2")
        #expect(try store.run(asData) == data("3"))
        #expect(try store.run(byPrefix).count == 5)
        #expect(try store.run(byRange).map(\.key) == [apiBytes("io/b"), apiBytes("io/c")])
        #expect(try store.run(openRange).count == 2)

        let ref = try store.run(StoreIO<ReadOnly, KeyReference>.reference("io/a"))
        let prefixRef = try store.run(StoreIO<ReadOnly, QueryReference>.reference(prefix: data("io/")))
        let rangeRef = try store.run(StoreIO<ReadOnly, QueryReference>.reference(from: "io/d", to: nil))
        #expect(try store.run(StoreIO<ReadOnly, String?>.resolve(ref, as: String.self)) == "1")
        #expect(rangeRef.lower == apiBytes("io/d"))

        let removed = try store.run(
            StoreIO<ReadWrite, Void>.delete("io/a").flatMap { StoreIO<ReadWrite, Int>.deleteRange(from: "io/d", to: nil) })
        #expect(removed == 2)
        #expect(try store.run(StoreIO<ReadOnly, [Entry]>.resolve(prefixRef)).count == 2)
        #expect(try store.run(StoreIO<ReadOnly, Bool>.changedSince(prefixRef)))

        let notText: StoreIO<ReadWrite, Void> = .put("io/binary", notUTF8)
        try store.run(notText)
        let failing = #expect(throws: StoreError.self) { try store.run(StoreIO<ReadOnly, String?>.get("io/binary", as: String.self)) }
        #expect(failing?.code == .invalidArgument)
    }

    @Test("change feeds take String and Data ranges; Change decodes its key and value")
    func changeFeeds() async throws {
        let store = try APITestSimulated.open()
        var byPrefix = store.changes(prefix: "user/").makeAsyncIterator()
        var byRange = store.changes(from: data("user/2"), to: data("user/3")).makeAsyncIterator()
        try await store.write { tx in
            try tx.put("user/1", "Ada")
            try tx.put("other", "x")
            try tx.put("user/2", "Grace")
        }
        try await store.write { tx in try tx.delete("user/2") }
        var changes: [Change] = []
        for _ in 0..<3 { if let change = try await byPrefix.next() { changes.append(change) } }
        #expect(try changes.map { try $0.key(as: String.self) } == ["user/1", "user/2", "user/2"])
        #expect(try changes.map { try $0.value(as: String.self) } == ["Ada", "Grace", nil])
        #expect(try changes[0].value(as: Data.self) == data("Ada"))
        let first = try await byRange.next()
        let second = try await byRange.next()
        #expect(try first?.key(as: String.self) == "user/2")
        #expect(try second?.value(as: String.self) == nil)
        try store.close()
    }

    @Test("literals resolve without ambiguity: a string literal is a String, an array literal the byte form")
    func literalsResolve() throws {
        let store = try APITestSimulated.open()
        defer { try? store.close() }
        try store.write { tx in
            try tx.put("a", "1")  // String, String
            try tx.put([0x62], [0x32])  // [UInt8], [UInt8]: the byte form
            try tx.put("c", [0x33])  // String key, array-literal value
            try tx.put([0x64], "4")  // array-literal key, String value
            try tx.delete([0x7A])
            try tx.delete("z")
            try tx.deleteRange(from: "y", to: "yy")  // discardable result; nothing there
        }
        try store.read { (tx: ReadTransaction) throws in
            let fromString = try tx.get("a")
            let fromArray = try tx.get([0x62])
            #expect(type(of: fromString) == [UInt8]?.self)
            #expect(type(of: fromArray) == [UInt8]?.self)
            #expect(fromString == apiBytes("1") && fromArray == apiBytes("2"))
            #expect(try tx.get("c", as: String.self) == "3")
            #expect(try tx.get([0x64], as: String.self) == "4")
            #expect(try tx.contains("a") && tx.contains([0x62]))
            #expect(try tx.scan(prefix: "a").count == 1 && tx.scan(prefix: [0x62]).count == 1)
            #expect(try tx.scan(from: "a", to: "c").count == 2 && tx.scan(from: [0x61], to: [0x63]).count == 2)
            #expect(try tx.scan(from: "a", to: nil).count == 4 && tx.scan(from: [0x61], to: nil).count == 4)
            #expect(try tx.reference("a").key == [0x61] && tx.reference([0x61]).key == [0x61])
        }
        let literalIO: StoreIO<ReadOnly, [UInt8]?> = .get("a")
        let arrayIO: StoreIO<ReadOnly, [UInt8]?> = .get([0x61])
        let putLiterals: StoreIO<ReadWrite, Void> = .put("e", [0x35])
        try store.run(putLiterals)
        #expect(try store.run(literalIO) == store.run(arrayIO))
    }
}
