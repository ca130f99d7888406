import Foundation

/// Encodes `Encodable` values in the record format (docs/format/records.md).
///
/// `Encodable` lets a type open a nested container, write to its parent, and come back to
/// the nested one later, so the encoder first builds a small tree of the value, then writes
/// it out in one pass, each container's byte length written once its body is.
struct RecordEncoder {
    /// The record's stored bytes: the format version, then the value.
    static func encode(_ value: some Encodable) throws -> [UInt8] {
        let root = EncodingNode.Box()
        let encoder = RecordEncodingImpl(box: root, codingPath: [])
        try encoder.encodeValue(value)
        let node = root.node ?? .null
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        bytes.append(RecordFormat.version)
        node.write(into: &bytes)
        return bytes
    }
}

/// One value of the tree the encoder builds.
enum EncodingNode {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case uuid(UUID)
    case date(Date)
    case array(ArrayBox)
    case keyed(KeyedBox)
    /// A value a nested encoder (a `superEncoder`) fills in later.
    case deferred(Box)

    final class Box {
        var node: EncodingNode?
    }

    final class ArrayBox {
        var items: [EncodingNode] = []
    }

    final class KeyedBox {
        var fields: [(key: String, node: EncodingNode)] = []

        init() {
            // Most records have a handful of fields: one allocation instead of growing
            // through 1, 2, 4 and 8.
            fields.reserveCapacity(8)
        }
    }

    /// Reserves one byte for a container's body length and returns where the body starts.
    /// Writing the body first and its length after saves measuring every container before
    /// writing it (which, nested, measures the inner ones again at each level).
    private static func startBody(_ bytes: inout [UInt8]) -> Int {
        bytes.append(0)
        return bytes.count
    }

    /// Writes the body length into the reserved byte, moving the body along when the length
    /// needs more than one byte (bodies of 128 bytes or more).
    private static func finishBody(_ bytes: inout [UInt8], _ bodyStart: Int) {
        let length = UInt64(bytes.count - bodyStart)
        guard length >= 0x80 else {
            bytes[bodyStart - 1] = UInt8(length)
            return
        }
        var varint: [UInt8] = []
        varint.appendVarint(length)
        bytes.replaceSubrange((bodyStart - 1)..<bodyStart, with: varint)
    }

    func write(into bytes: inout [UInt8]) {
        switch self {
        case .null:
            bytes.append(RecordFormat.Tag.null.rawValue)
        case .bool(let value):
            bytes.append(RecordFormat.Tag.bool.rawValue)
            bytes.append(value ? 1 : 0)
        case .int(let value):
            bytes.append(RecordFormat.Tag.int.rawValue)
            bytes.appendVarint(zigzag(value))
        case .uint(let value):
            bytes.append(RecordFormat.Tag.uint.rawValue)
            bytes.appendVarint(value)
        case .double(let value):
            bytes.append(RecordFormat.Tag.double.rawValue)
            bytes.appendLittleEndian(value.bitPattern)
        case .string(let value):
            bytes.append(RecordFormat.Tag.string.rawValue)
            bytes.appendVarint(UInt64(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
        case .bytes(let value):
            bytes.append(RecordFormat.Tag.bytes.rawValue)
            bytes.appendVarint(UInt64(value.count))
            bytes.append(contentsOf: value)
        case .uuid(let value):
            bytes.append(RecordFormat.Tag.uuid.rawValue)
            withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
        case .date(let value):
            bytes.append(RecordFormat.Tag.date.rawValue)
            bytes.appendLittleEndian(value.timeIntervalSinceReferenceDate.bitPattern)
        case .array(let box):
            bytes.append(RecordFormat.Tag.array.rawValue)
            let body = Self.startBody(&bytes)
            bytes.appendVarint(UInt64(box.items.count))
            for item in box.items { item.write(into: &bytes) }
            Self.finishBody(&bytes, body)
        case .keyed(let box):
            bytes.append(RecordFormat.Tag.keyed.rawValue)
            let body = Self.startBody(&bytes)
            bytes.appendVarint(UInt64(box.fields.count))
            for field in box.fields {
                bytes.appendVarint(UInt64(field.key.utf8.count))
                bytes.append(contentsOf: field.key.utf8)
                field.node.write(into: &bytes)
            }
            Self.finishBody(&bytes, body)
        case .deferred(let box):
            (box.node ?? .null).write(into: &bytes)
        }
    }
}

/// The `Encoder` the record format hands to `encode(to:)`; it fills one box of the tree.
final class RecordEncodingImpl: Encoder {
    let box: EncodingNode.Box
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(box: EncodingNode.Box, codingPath: [any CodingKey]) {
        self.box = box
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let keyed: EncodingNode.KeyedBox
        if case .keyed(let existing)? = box.node {
            keyed = existing  // a subclass's and its superclass's fields share one container
        } else {
            keyed = EncodingNode.KeyedBox()
            box.node = .keyed(keyed)
        }
        return KeyedEncodingContainer(RecordKeyedEncoding<Key>(box: keyed, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: EncodingNode.ArrayBox
        if case .array(let existing)? = box.node {
            array = existing
        } else {
            array = EncodingNode.ArrayBox()
            box.node = .array(array)
        }
        return RecordUnkeyedEncoding(box: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        RecordSingleValueEncoding(encoder: self)
    }

    /// Encodes `value` into this encoder's box, with the types the format stores natively
    /// taken directly rather than through their own `Encodable` conformance.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if let node = EncodingNode.native(value) {
            box.node = node
        } else {
            try value.encode(to: self)
        }
    }

    /// The node for `value`, through a fresh encoder when it is not a native type.
    static func node<T: Encodable>(for value: T, codingPath: [any CodingKey]) throws -> EncodingNode {
        // The decoder refuses deeper values (a recursion limit), so they are not written.
        guard codingPath.count <= RecordFormat.maxDepth else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "values nested more than \(RecordFormat.maxDepth) deep cannot be stored in a record"))
        }
        if let node = EncodingNode.native(value) { return node }
        let box = EncodingNode.Box()
        try value.encode(to: RecordEncodingImpl(box: box, codingPath: codingPath))
        // A value that encoded nothing (an empty `encode(to:)`) is stored as an empty
        // keyed container, as JSON stores `{}`.
        return box.node ?? .keyed(EncodingNode.KeyedBox())
    }
}

extension EncodingNode {
    /// The node for the Foundation types the format stores in their own tags.
    static func native<T: Encodable>(_ value: T) -> EncodingNode? {
        switch value {
        case let data as Data: return .bytes([UInt8](data))
        case let uuid as UUID: return .uuid(uuid)
        case let date as Date: return .date(date)
        default: return nil
        }
    }
}

struct RecordKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: EncodingNode.KeyedBox
    let codingPath: [any CodingKey]

    private func set(_ node: EncodingNode, _ key: Key) {
        box.fields.append((key.stringValue, node))
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.uint(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try RecordEncodingImpl.node(for: value, codingPath: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodingNode.KeyedBox()
        set(.keyed(nested), key)
        return KeyedEncodingContainer(RecordKeyedEncoding<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodingNode.ArrayBox()
        set(.array(nested), key)
        return RecordUnkeyedEncoding(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: "super", key: nil)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key.stringValue, key: key)
    }

    private func superEncoder(named name: String, key: Key?) -> any Encoder {
        let deferred = EncodingNode.Box()
        box.fields.append((name, .deferred(deferred)))
        return RecordEncodingImpl(box: deferred, codingPath: codingPath + (key.map { [$0] } ?? []))
    }
}

struct RecordUnkeyedEncoding: UnkeyedEncodingContainer {
    let box: EncodingNode.ArrayBox
    let codingPath: [any CodingKey]
    var count: Int { box.items.count }

    private func append(_ node: EncodingNode) { box.items.append(node) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode(_ value: UInt) throws { append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { append(.uint(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try RecordEncodingImpl.node(for: value, codingPath: codingPath + [IndexKey(count)]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodingNode.KeyedBox()
        let path = codingPath + [IndexKey(count)]
        append(.keyed(nested))
        return KeyedEncodingContainer(RecordKeyedEncoding<NestedKey>(box: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodingNode.ArrayBox()
        let path = codingPath + [IndexKey(count)]
        append(.array(nested))
        return RecordUnkeyedEncoding(box: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let deferred = EncodingNode.Box()
        let path = codingPath + [IndexKey(count)]
        append(.deferred(deferred))
        return RecordEncodingImpl(box: deferred, codingPath: path)
    }
}

struct RecordSingleValueEncoding: SingleValueEncodingContainer {
    let encoder: RecordEncodingImpl
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ node: EncodingNode) { encoder.box.node = node }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(.double(value)) }
    mutating func encode(_ value: Float) throws { set(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.int(value)) }
    mutating func encode(_ value: UInt) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { set(.uint(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        set(try RecordEncodingImpl.node(for: value, codingPath: codingPath))
    }
}

/// The coding key of an array element: its position.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { intValue.map(String.init) ?? "" }

    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
