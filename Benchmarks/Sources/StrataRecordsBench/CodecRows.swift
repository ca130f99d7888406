// The value codecs alone, in memory with no store: encode every record, then decode every
// encoding, for the codecs the raw rows use. StrataRecords' own codec is internal to the
// module; its cost shows as the typed rows' time over the raw rows' with the same bytes.
import Dispatch
import Foundation

struct ValueCodec {
    let name: String
    let encode: (Person) throws -> [UInt8]
    /// The record with the given id from its encoding.
    let decode: ([UInt8], Int) throws -> Person?

    static func hand() -> ValueCodec {
        ValueCodec(name: "hand", encode: HandPacked.encode, decode: HandPacked.decode)
    }

    /// JSONEncoder's Data, copied to bytes as the byte API takes them (and back for decoding).
    static func json() -> ValueCodec {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        return ValueCodec(
            name: "json", encode: { [UInt8](try encoder.encode($0)) },
            decode: { bytes, _ in try decoder.decode(Person.self, from: Data(bytes)) })
    }

    /// A binary property list, copied to and from bytes as JSON's is.
    static func propertyList() -> ValueCodec {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let decoder = PropertyListDecoder()
        return ValueCodec(
            name: "plist", encode: { [UInt8](try encoder.encode($0)) },
            decode: { bytes, _ in try decoder.decode(Person.self, from: Data(bytes)) })
    }

    /// Seconds to encode every record, the encodings, and seconds to decode them all (each
    /// decoded record compared with the original, as the get rows compare theirs).
    func timed(_ people: [Person]) throws -> (encode: Double, encodings: [[UInt8]], decode: Double) {
        var encodings: [[UInt8]] = []
        encodings.reserveCapacity(people.count)
        let encodeStart = DispatchTime.now().uptimeNanoseconds
        for person in people { encodings.append(try encode(person)) }
        let encodeSeconds = elapsed(since: encodeStart)
        var wrong = 0
        let decodeStart = DispatchTime.now().uptimeNanoseconds
        for (id, bytes) in encodings.enumerated() {
            if try decode(bytes, id) != people[id] { wrong += 1 }
        }
        let decodeSeconds = elapsed(since: decodeStart)
        guard wrong == 0 else { throw WrongAnswer("\(wrong) of \(people.count) \(name) decodings differ from the records encoded") }
        return (encodeSeconds, encodings, decodeSeconds)
    }
}
