import Foundation

/// Decodes `Decodable` values from the record format (docs/format/records.md).
///
/// Decoding reads the stored bytes in place: a keyed container indexes its fields' positions
/// once, and values are read only when asked for.
///
/// A record written before a field existed lacks that field. An optional field then decodes
/// as `nil`, as `decodeIfPresent` does anywhere; for other fields the decoder can be given a
/// `defaults` record (the type's stored form of a value whose fields hold the defaults), and
/// a field missing from the stored record at any depth is read from the same place in it.
enum RecordDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], defaults: [UInt8]? = nil) throws -> T {
        let root = try RecordValue.root(of: bytes)
        let fallback = try defaults.map { try RecordValue.root(of: $0) }
        return try RecordDecodingImpl(value: root, fallback: fallback, codingPath: []).decodeValue(T.self)
    }
}

final class RecordDecodingImpl: Decoder {
    let value: RecordValue
    /// The same place in the defaults record, if it has one.
    let fallback: RecordValue?
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: RecordValue, fallback: RecordValue?, codingPath: [any CodingKey]) {
        self.value = value
        self.fallback = fallback
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let fields = try FieldTable(value, codingPath)
        let fallbackFields = try fallback.flatMap { $0.tag == .keyed ? try FieldTable($0, codingPath) : nil }
        return KeyedDecodingContainer(
            RecordKeyedDecoding<Key>(fields: fields, fallback: fallbackFields, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try RecordUnkeyedDecoding(value, codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        RecordSingleValueDecoding(decoder: self)
    }

    /// Decodes the value, reading the natively stored Foundation types from their own tags.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        guard codingPath.count <= RecordFormat.maxDepth else {
            throw RecordValue.corrupt("values nested more than \(RecordFormat.maxDepth) deep", at: codingPath)
        }
        if T.self == Data.self, value.tag == .bytes {
            return Data(try value.bytesValue(codingPath)) as! T
        }
        if T.self == UUID.self, value.tag == .uuid {
            return try value.uuidValue(codingPath) as! T
        }
        if T.self == Date.self, value.tag == .date {
            return try value.dateValue(codingPath) as! T
        }
        return try T(from: self)
    }
}

/// The fields of one stored keyed container, found once: key bytes and value positions.
struct FieldTable {
    let container: RecordValue
    private let fields: [(keyStart: Int, keyEnd: Int, value: RecordValue)]

    init(_ container: RecordValue, _ path: [any CodingKey]) throws {
        guard container.tag == .keyed else { throw container.mismatch([String: Int].self, path) }
        let (count, first) = try container.containerHeader(path)
        let bytes = container.bytes
        var fields: [(keyStart: Int, keyEnd: Int, value: RecordValue)] = []
        fields.reserveCapacity(count)
        var cursor = first
        for _ in 0..<count {
            let keyLength = try RecordValue.readVarint(bytes, &cursor, limit: container.end, path: path)
            guard keyLength <= UInt64(container.end - cursor) else {
                throw RecordValue.corrupt("a field name that runs past its container", at: path)
            }
            let keyStart = cursor
            cursor += Int(keyLength)
            let value = try RecordValue.parse(bytes, at: cursor, limit: container.end, path: path)
            fields.append((keyStart, cursor, value))
            cursor = value.end
        }
        guard cursor == container.end else {
            throw RecordValue.corrupt("a container whose fields do not fill it", at: path)
        }
        self.container = container
        self.fields = fields
    }

    /// The field's value; when a name repeats, the last one.
    func lookup(_ key: String) -> RecordValue? {
        var key = key
        return key.withUTF8 { name -> RecordValue? in
            container.bytes.withUnsafeBufferPointer { bytes in
                for field in fields.reversed() where field.keyEnd - field.keyStart == name.count {
                    if name.isEmpty || memcmp(bytes.baseAddress! + field.keyStart, name.baseAddress!, name.count) == 0 {
                        return field.value
                    }
                }
                return nil
            }
        }
    }

    /// Field names, for `allKeys`; a name that is not UTF-8 is left out.
    var names: [String] {
        fields.compactMap { String(validating: container.bytes[$0.keyStart..<$0.keyEnd], as: UTF8.self) }
    }
}

struct RecordKeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: FieldTable
    let fallback: FieldTable?
    let codingPath: [any CodingKey]

    /// The stored keys only. Types that list keys (dictionaries, enums with associated
    /// values) take their contents from the record as stored; merging in the defaults
    /// record's keys would add entries to a dictionary or a second case to an enum. Structs
    /// ask for their keys by name, and get the defaults through `contains` and `decode`.
    var allKeys: [Key] {
        fields.names.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        fields.lookup(key.stringValue) != nil || fallback?.lookup(key.stringValue) != nil
    }

    /// The stored value for `key`, or the defaults record's, with the defaults record's
    /// value at the same place for fields further down.
    private func find(_ key: Key) throws -> (value: RecordValue, fallback: RecordValue?) {
        let name = key.stringValue
        if let value = fields.lookup(name) { return (value, fallback?.lookup(name)) }
        if let value = fallback?.lookup(name) { return (value, nil) }
        throw DecodingError.keyNotFound(
            key,
            DecodingError.Context(
                codingPath: codingPath,
                debugDescription:
                    "the stored record has no field \"\(name)\"; make the property optional, or give the collection a defaults record that supplies it"
            ))
    }

    private func value(_ key: Key) throws -> RecordValue { try find(key).value }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key).tag == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key).boolValue(codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(key).stringValue(codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key).doubleValue(codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try value(key).doubleValue(codingPath + [key])) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(key).integer(type, codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key).integer(type, codingPath + [key]) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let (value, fallback) = try find(key)
        return try RecordDecodingImpl(value: value, fallback: fallback, codingPath: codingPath + [key]).decodeValue(T.self)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let (value, fallback) = try find(key)
        return try RecordDecodingImpl(value: value, fallback: fallback, codingPath: codingPath + [key])
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try RecordUnkeyedDecoding(try value(key), codingPath + [key])
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(named: "super", path: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(named: key.stringValue, path: codingPath + [key])
    }

    private func superDecoder(named name: String, path: [any CodingKey]) throws -> any Decoder {
        let fallbackValue = fallback?.lookup(name)
        let value = try fields.lookup(name) ?? fallbackValue ?? RecordValue.parse([0], at: 0, limit: 1, path: path)
        return RecordDecodingImpl(value: value, fallback: fallbackValue, codingPath: path)
    }
}

struct RecordUnkeyedDecoding: UnkeyedDecodingContainer {
    private let container: RecordValue
    let codingPath: [any CodingKey]
    let count: Int?
    private(set) var currentIndex = 0
    private var cursor: Int

    init(_ container: RecordValue, _ path: [any CodingKey]) throws {
        guard container.tag == .array else { throw container.mismatch([Int].self, path) }
        let (count, first) = try container.containerHeader(path)
        self.container = container
        self.codingPath = path
        self.count = count
        self.cursor = first
    }

    var isAtEnd: Bool { currentIndex >= count! }

    private var elementPath: [any CodingKey] { codingPath + [IndexKey(currentIndex)] }

    private mutating func next(_ type: Any.Type) throws -> RecordValue {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: elementPath, debugDescription: "the stored array has no more elements"))
        }
        let value = try RecordValue.parse(container.bytes, at: cursor, limit: container.end, path: elementPath)
        cursor = value.end
        currentIndex += 1
        if isAtEnd, cursor != container.end {
            throw RecordValue.corrupt("an array whose elements do not fill it", at: codingPath)
        }
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let value = try RecordValue.parse(container.bytes, at: cursor, limit: container.end, path: elementPath)
        guard value.tag == .null else { return false }
        _ = try next(Never.self)
        return true
    }

    private mutating func scalar<T>(_ type: T.Type, _ read: (RecordValue, [any CodingKey]) throws -> T) throws -> T {
        let path = elementPath
        return try read(try next(type), path)
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) { try $0.boolValue($1) } }
    mutating func decode(_ type: String.Type) throws -> String { try scalar(type) { try $0.stringValue($1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try scalar(type) { try $0.doubleValue($1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try scalar(type) { Float(try $0.doubleValue($1)) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type) { try $0.integer(type, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type) { try $0.integer(type, $1) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = elementPath
        return try RecordDecodingImpl(value: try next(type), fallback: nil, codingPath: path).decodeValue(T.self)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let path = elementPath
        return try RecordDecodingImpl(value: try next(type), fallback: nil, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = elementPath
        return try RecordUnkeyedDecoding(try next([Int].self), path)
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = elementPath
        return RecordDecodingImpl(value: try next(Never.self), fallback: nil, codingPath: path)
    }
}

struct RecordSingleValueDecoding: SingleValueDecodingContainer {
    let decoder: RecordDecodingImpl
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var value: RecordValue { decoder.value }

    func decodeNil() -> Bool { value.tag == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try value.boolValue(codingPath) }
    func decode(_ type: String.Type) throws -> String { try value.stringValue(codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try value.doubleValue(codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try value.doubleValue(codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try value.integer(type, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try value.integer(type, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try value.integer(type, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try value.integer(type, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try value.integer(type, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try value.integer(type, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try value.integer(type, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try value.integer(type, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try value.integer(type, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try value.integer(type, codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try RecordDecodingImpl(value: value, fallback: decoder.fallback, codingPath: codingPath).decodeValue(T.self)
    }
}
