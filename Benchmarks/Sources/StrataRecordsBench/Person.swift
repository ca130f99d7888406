// The record every row writes and reads, the seeded data, and a hand-packed byte layout of
// the same fields: what a careful user of the byte API would write instead of a codec.
import StrataBenchmarkKit

struct Person: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var name: String
    var email: String
    var age: Int
}

enum People {
    /// Records with ids `0..<count`: a 10-letter name, a 20-character address
    /// (8 letters, "@", 7 letters, ".com") and an age in 18...89, all from `seed`.
    static func make(count: Int, seed: UInt64) -> [Person] {
        var random = BenchmarkRandom(seed: seed)
        func letters(_ n: Int) -> String {
            String(decoding: (0..<n).map { _ in UInt8(ascii: "a") + UInt8(random.next(below: 26)) }, as: UTF8.self)
        }
        return (0..<count).map { id in
            Person(id: id, name: letters(10), email: letters(8) + "@" + letters(7) + ".com", age: 18 + random.next(below: 72))
        }
    }

    /// `count` ids picked uniformly from `0..<bound`.
    static func randomIDs(count: Int, bound: Int, seed: UInt64) -> [Int] {
        var random = BenchmarkRandom(seed: seed)
        return (0..<count).map { _ in random.next(below: bound) }
    }
}

/// name and email as a varint length and UTF-8, then age as a zigzag varint; the id is the
/// key's. No version byte, no field names: nothing a later version of the type could read
/// without knowing this exact layout.
enum HandPacked {
    static func encode(_ person: Person) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(person.name.utf8.count + person.email.utf8.count + 12)
        append(person.name, to: &bytes)
        append(person.email, to: &bytes)
        let age = Int64(person.age)
        appendVarint(UInt64(bitPattern: (age << 1) ^ (age >> 63)), to: &bytes)
        return bytes
    }

    /// The record with identifier `id` from `bytes`, or nil when they are not this layout.
    static func decode(_ bytes: [UInt8], id: Int) -> Person? {
        bytes.withUnsafeBufferPointer { buffer -> Person? in
            var offset = 0
            guard let name = string(buffer, &offset), let email = string(buffer, &offset),
                let zigzag = varint(buffer, &offset), offset == buffer.count
            else { return nil }
            let age = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            return Person(id: id, name: name, email: email, age: Int(age))
        }
    }

    private static func append(_ string: String, to bytes: inout [UInt8]) {
        appendVarint(UInt64(string.utf8.count), to: &bytes)
        bytes.append(contentsOf: string.utf8)
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func varint(_ buffer: UnsafeBufferPointer<UInt8>, _ offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < buffer.count, shift < 64 {
            let byte = buffer[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    private static func string(_ buffer: UnsafeBufferPointer<UInt8>, _ offset: inout Int) -> String? {
        guard let length = varint(buffer, &offset), length <= UInt64(buffer.count - offset) else { return nil }
        let end = offset + Int(length)
        defer { offset = end }
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[offset..<end]), as: UTF8.self)
    }
}
