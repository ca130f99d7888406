import Foundation
import StrataRecords
import Testing

// The properties keys.md promises, on random keys: bytewise order of the encodings is the
// order of the values, decoding gives back the values (and re-encoding the same bytes), and
// a key's encoding is a prefix of its extensions and bounds them with `prefixRange`.
//
// The value order is checked two ways: against `KeyElement`'s `<` for whole keys of every
// shape, and, so that the test does not only compare the library with itself, against the
// standard types' own orders (`Int64`, `String`, `Double.isTotallyOrdered`, ...) for single
// elements.

struct KeyOrderPropertyTests {
    /// Keys of one random shape, compared pairwise: same-shape keys are what an index holds.
    @Test func byteOrderIsValueOrderForKeysOfOneShape() {
        let seed = KeyTestEnvironment.seed(0x5EED_0001, test: "keys/same-shape order")
        var generator = KeyGenerator(seed: seed)
        var failures = 0
        for round in 0..<KeyTestEnvironment.scaled(1_500) {
            let shapes = generator.shapes(count: Int.random(in: 1...4, using: &generator.random))
            let keys = (0..<8).map { _ in generator.values(of: shapes) }
            failures += checkPairs(keys, seed: seed, round: round, failures: failures)
            if failures >= 5 { return }
        }
    }

    /// Keys of unrelated shapes and lengths: the order holds across types, directions and
    /// lengths too.
    @Test func byteOrderIsValueOrderForKeysOfAnyShape() {
        let seed = KeyTestEnvironment.seed(0x5EED_0002, test: "keys/any-shape order")
        var generator = KeyGenerator(seed: seed)
        var failures = 0
        for round in 0..<KeyTestEnvironment.scaled(1_500) {
            var keys = (0..<6).map { _ in generator.key() }
            // Shorter copies, so that prefixes meet their extensions.
            keys += keys.map { Array($0.prefix(Int.random(in: 0...$0.count, using: &generator.random))) }
            failures += checkPairs(keys, seed: seed, round: round, failures: failures)
            if failures >= 5 { return }
        }
    }

    /// Records an issue for each pair whose byte order differs from its value order; returns
    /// how many, stopping once `failures` reaches 5.
    private func checkPairs(_ keys: [[KeyElement]], seed: UInt64, round: Int, failures: Int) -> Int {
        let encoded = keys.map { KeyTuple($0) }
        var found = 0
        for i in keys.indices {
            for j in keys.indices where i < j {
                let byBytes = KeyTestEnvironment.compareBytes(encoded[i].bytes, encoded[j].bytes)
                let byValue = KeyElement.tuple(keys[i]) == .tuple(keys[j]) ? 0 : (KeyElement.tuple(keys[i]) < .tuple(keys[j]) ? -1 : 1)
                if byBytes != byValue {
                    Issue.record(
                        """
                        seed \(seed) round \(round): value order \(byValue) but byte order \(byBytes) for
                        \(encoded[i]) = \(KeyTestEnvironment.hex(encoded[i].bytes))
                        \(encoded[j]) = \(KeyTestEnvironment.hex(encoded[j].bytes))
                        """
                    )
                    found += 1
                    if failures + found >= 5 { return found }
                }
            }
        }
        return found
    }

    @Test func decodingInvertsEncoding() throws {
        let seed = KeyTestEnvironment.seed(0x5EED_0003, test: "keys/round trip")
        var generator = KeyGenerator(seed: seed)
        for round in 0..<KeyTestEnvironment.scaled(10_000) {
            let elements = generator.key(maxCount: 5)
            let key = KeyTuple(elements)
            let decoded: KeyTuple
            do {
                decoded = try KeyTuple(decoding: key.bytes)
            } catch {
                Issue.record("seed \(seed) round \(round): \(key) = \(KeyTestEnvironment.hex(key.bytes)) does not decode: \(error)")
                return
            }
            guard decoded.elements == elements, KeyTuple(decoded.elements).bytes == key.bytes else {
                Issue.record("seed \(seed) round \(round): \(key) = \(KeyTestEnvironment.hex(key.bytes)) decodes to \(decoded)")
                return
            }
        }
    }

    @Test func keysArePrefixesOfTheirExtensions() {
        let seed = KeyTestEnvironment.seed(0x5EED_0004, test: "keys/prefixes")
        var generator = KeyGenerator(seed: seed)
        for round in 0..<KeyTestEnvironment.scaled(5_000) {
            let elements = generator.key(maxCount: 5)
            let bytes = KeyTuple(elements).bytes
            for count in 0...elements.count {
                let prefix = KeyTuple(Array(elements.prefix(count)))
                let range = prefix.prefixRange
                let inside = !bytes.lexicographicallyPrecedes(range.from) && bytes.lexicographicallyPrecedes(range.to)
                guard bytes.starts(with: prefix.bytes), inside else {
                    Issue.record("seed \(seed) round \(round): \(prefix) is not a prefix of \(KeyTuple(elements)), or its range misses it")
                    return
                }
            }
        }
    }

    /// `prefixRange` holds a key's extensions and nothing else, including the strings that
    /// continue with a zero byte and so share the key's bytes.
    @Test func prefixRangeHoldsExactlyTheExtensions() {
        let seed = KeyTestEnvironment.seed(0x5EED_0005, test: "keys/prefix range")
        var generator = KeyGenerator(seed: seed)
        for round in 0..<KeyTestEnvironment.scaled(1_500) {
            let shapes = generator.shapes(count: Int.random(in: 1...4, using: &generator.random))
            let keys = (0..<8).map { _ in generator.values(of: shapes) }
            let prefixes = keys.map { Array($0.prefix(Int.random(in: 0...$0.count, using: &generator.random))) }
            for prefix in prefixes {
                let range = KeyTuple(prefix).prefixRange
                for key in keys {
                    let bytes = KeyTuple(key).bytes
                    let extends = key.count >= prefix.count && zip(prefix, key).allSatisfy { $0 == $1 }
                    let inside = !bytes.lexicographicallyPrecedes(range.from) && bytes.lexicographicallyPrecedes(range.to)
                    guard extends == inside else {
                        Issue.record(
                            "seed \(seed) round \(round): \(KeyTuple(key)) extends \(KeyTuple(prefix)): \(extends), inside its range: \(inside)"
                        )
                        return
                    }
                }
            }
        }
    }

    // MARK: Single elements against the standard types' own orders

    /// Checks that `a` and `b` order, and are equal, by their bytes exactly as `order` says,
    /// and the other way round when both are marked descending.
    private func checkElements(
        _ a: KeyElement,
        _ b: KeyElement,
        order: Int,
        seed: UInt64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let ascending = KeyTestEnvironment.compareBytes(KeyTuple([a]).bytes, KeyTuple([b]).bytes)
        let descending = KeyTestEnvironment.compareBytes(KeyTuple([.descending(a)]).bytes, KeyTuple([.descending(b)]).bytes)
        let library = a == b ? 0 : (a < b ? -1 : 1)
        guard ascending == order, descending == -order, library == order else {
            Issue.record(
                "seed \(seed): \(a) vs \(b): expected \(order), bytes \(ascending), descending bytes \(descending), KeyElement \(library)",
                sourceLocation: sourceLocation
            )
            return false
        }
        return true
    }

    private func sign<T: Comparable>(_ a: T, _ b: T) -> Int {
        a == b ? 0 : (a < b ? -1 : 1)
    }

    @Test func integersOrderNumerically() {
        let seed = KeyTestEnvironment.seed(0x5EED_0006, test: "keys/integers")
        var generator = KeyGenerator(seed: seed)
        for _ in 0..<KeyTestEnvironment.scaled(20_000) {
            let (a, b) = (generator.int(), generator.int())
            guard checkElements(.int(a), .int(b), order: sign(a, b), seed: seed) else { return }
            let (c, d) = (generator.uint(), generator.uint())
            guard checkElements(.uint(c), .uint(d), order: sign(c, d), seed: seed) else { return }
        }
    }

    @Test func doublesFollowIEEETotalOrder() {
        let seed = KeyTestEnvironment.seed(0x5EED_0007, test: "keys/doubles")
        var generator = KeyGenerator(seed: seed)
        for _ in 0..<KeyTestEnvironment.scaled(20_000) {
            let (a, b) = (generator.double(), generator.double())
            let order = a.bitPattern == b.bitPattern ? 0 : (a.isTotallyOrdered(belowOrEqualTo: b) ? -1 : 1)
            guard checkElements(.double(a), .double(b), order: order, seed: seed) else { return }
        }
    }

    @Test func datesOrderChronologically() {
        let seed = KeyTestEnvironment.seed(0x5EED_0008, test: "keys/dates")
        var generator = KeyGenerator(seed: seed)
        for _ in 0..<KeyTestEnvironment.scaled(20_000) {
            let (a, b) = (generator.date(), generator.date())
            // `Date`'s own order, with NaN (which it leaves unordered) after every other date.
            let (aNaN, bNaN) = (a.timeIntervalSinceReferenceDate.isNaN, b.timeIntervalSinceReferenceDate.isNaN)
            let order = aNaN || bNaN ? sign(aNaN ? 1 : 0, bNaN ? 1 : 0) : sign(a, b)
            guard checkElements(.date(a), .date(b), order: order, seed: seed) else { return }
        }
    }

    /// Strings Swift calls equal (`==`) encode the same, and the encodings sort by the
    /// scalars of the NFC forms, computed here by another route than the library's
    /// (Foundation's normalisation plus the Hangul step it misses on Linux).
    @Test func stringsFollowNFCScalarOrder() {
        let seed = KeyTestEnvironment.seed(0x5EED_0009, test: "keys/strings")
        var generator = KeyGenerator(seed: seed)
        for _ in 0..<KeyTestEnvironment.scaled(20_000) {
            let (a, b) = (generator.string(), generator.string())
            let (x, y) = (Self.nfcScalars(a), Self.nfcScalars(b))
            guard (a == b) == (x == y) else {
                Issue.record("seed \(seed): the test's normalisation disagrees with Swift's == on \(a.debugDescription), \(b.debugDescription)")
                return
            }
            let order = x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
            guard checkElements(.string(a), .string(b), order: order, seed: seed) else { return }
        }
    }

    /// The pairs where the standard library's `String.<` is wrong: the encoding must still
    /// sort the prefix first.
    @Test(arguments: [("\u{1100}\u{1161}", "\u{AC00}\0"), ("\u{C3D8}\u{11C1}", "\u{C3F2}\0"), ("\u{C3D8}\u{11C1}", "\u{C3F2}a")])
    func hangulPrefixSortsFirst(_ shorter: String, _ longer: String) {
        #expect(KeyTuple(shorter) < KeyTuple(longer))
        #expect(KeyElement.string(shorter) < .string(longer))
        #expect(KeyTuple(longer).bytes.starts(with: KeyTuple(shorter).bytes.dropLast()))
    }

    /// The NFC scalars of `text` by Foundation, then composing Hangul syllables with trailing
    /// consonants, which Foundation's normalisation leaves apart on Linux (a no-op elsewhere).
    static func nfcScalars(_ text: String) -> [UInt32] {
        let (syllableBase, leadBase, vowelBase, trailBase): (UInt32, UInt32, UInt32, UInt32) = (0xAC00, 0x1100, 0x1161, 0x11A7)
        let (leadCount, vowelCount, trailCount, syllableCount): (UInt32, UInt32, UInt32, UInt32) = (19, 21, 28, 11_172)
        var result: [UInt32] = []
        for scalar in text.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value) {
            if let last = result.last {
                if (leadBase..<leadBase + leadCount).contains(last), (vowelBase..<vowelBase + vowelCount).contains(scalar) {
                    result[result.count - 1] = syllableBase + ((last - leadBase) * vowelCount + (scalar - vowelBase)) * trailCount
                    continue
                }
                if (syllableBase..<syllableBase + syllableCount).contains(last), (last - syllableBase) % trailCount == 0,
                    (trailBase + 1..<trailBase + trailCount).contains(scalar)
                {
                    result[result.count - 1] = last + (scalar - trailBase)
                    continue
                }
            }
            result.append(scalar)
        }
        return result
    }

    @Test func byteStringsAndUUIDsOrderBytewise() {
        let seed = KeyTestEnvironment.seed(0x5EED_000A, test: "keys/bytes and UUIDs")
        var generator = KeyGenerator(seed: seed)
        for _ in 0..<KeyTestEnvironment.scaled(20_000) {
            let (a, b) = (generator.byteString(), generator.byteString())
            guard checkElements(.bytes(a), .bytes(b), order: KeyTestEnvironment.compareBytes(a, b), seed: seed) else { return }
            let (c, d) = (generator.uuid(), generator.uuid())
            let order = KeyTestEnvironment.compareBytes(withUnsafeBytes(of: c.uuid) { Array($0) }, withUnsafeBytes(of: d.uuid) { Array($0) })
            guard checkElements(.uuid(c), .uuid(d), order: order, seed: seed) else { return }
        }
    }

    @Test func booleansOrderFalseFirst() {
        #expect(checkElements(.bool(false), .bool(true), order: -1, seed: 0))
        #expect(checkElements(.bool(true), .bool(true), order: 0, seed: 0))
    }
}
