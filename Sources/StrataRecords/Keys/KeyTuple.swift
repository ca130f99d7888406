/// A store key made of typed elements, encoded so that byte order is element order.
///
/// Build a key from values and store its ``bytes``; read a stored key back with
/// ``init(decoding:)``:
///
/// ```swift
/// let key = KeyTuple("orders", customerID, placedAt.descending)
/// try store.write { tx in try tx.put(key.bytes, value) }
/// let elements = try KeyTuple(decoding: storedKey).elements   // [.string("orders"), ...]
/// print(elements)
/// ```
///
/// Three properties make such keys work in an ordered store (the byte layout is in
/// docs/format/keys.md):
///
/// - **Order.** Keys compare element by element in ``KeyElement``'s value order, a key that
///   is a prefix of another first, and their bytes compare the same way:
///   `a < b` exactly when `a.bytes` is lexicographically less than `b.bytes`.
/// - **Prefixes.** A key's bytes begin with the bytes of every shorter key made of its first
///   elements, so the keys that extend a given key are one range of the store; see
///   ``prefixRange``.
/// - **Round trip.** `KeyTuple(decoding: key.bytes)` gives back elements equal to
///   `key.elements` (strings in their NFC form, `.descending` pairs removed), and decoding
///   any other byte string throws a ``KeyDecodingError`` instead of trapping.
public struct KeyTuple: Sendable {
    /// The elements, as given or as decoded.
    public let elements: [KeyElement]
    /// The encoded key, to store.
    public let bytes: [UInt8]

    /// A key of the given elements.
    ///
    /// - Precondition: tuples nest at most 64 deep.
    public init(_ elements: [KeyElement]) {
        var encoder = KeyEncoder()
        for element in elements { encoder.append(element) }
        self.elements = elements
        self.bytes = encoder.bytes
    }

    /// A key of the given values, in order: `KeyTuple("users", 42, createdAt.descending)`.
    public init(_ values: any KeyElementConvertible...) {
        self.init(values.map(\.keyElement))
    }

    /// Decodes a key from its bytes.
    ///
    /// - Throws: ``KeyDecodingError`` when `bytes` are not, exactly, the encoding of some
    ///   key; the error gives the offset of the first byte found wrong.
    public init(decoding bytes: some Sequence<UInt8>) throws(KeyDecodingError) {
        let bytes = Array(bytes)
        var decoder = KeyDecoder(bytes)
        self.elements = try decoder.decodeKey()
        self.bytes = bytes
    }

    /// Bounds for a scan over this key and every longer key that starts with its elements,
    /// for `scan(from:to:)`: `from` is this key's bytes and `to`, excluded, is those bytes
    /// followed by 0xFF.
    ///
    /// Prefer it to a scan by byte prefix: when the last element is a string or byte string,
    /// a longer string that continues with a zero byte shares the prefix too (`("a")` is
    /// `02 61 00` and `("a\0")` is `02 61 00 ff 00`), but is not an extension of the key,
    /// and it sorts at or after `to`.
    public var prefixRange: (from: [UInt8], to: [UInt8]) {
        (bytes, bytes + [0xFF])
    }
}

extension KeyTuple: Hashable, Comparable {
    /// Keys are equal when their bytes are, which is when their elements are.
    public static func == (lhs: KeyTuple, rhs: KeyTuple) -> Bool {
        lhs.bytes == rhs.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }

    /// Byte order, which is element order.
    public static func < (lhs: KeyTuple, rhs: KeyTuple) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

extension KeyTuple: CustomStringConvertible {
    /// The elements, as `("users", 42)`.
    public var description: String {
        KeyElement.tuple(elements).description
    }
}
