import Foundation

/// A value that can be an element of a ``KeyTuple``.
///
/// The standard integer types, `Bool`, `Double`, `String`, `Substring`, `[UInt8]`, `UUID`,
/// `Date` and ``KeyElement`` itself adopt it, so keys can be written from plain values:
///
/// ```swift
/// let key = KeyTuple("orders", customerID, placedAt.descending)   // an Int and a Date
/// print(key.bytes)
/// ```
///
/// Signed integers of every width become ``KeyElement/int(_:)`` and unsigned ones
/// ``KeyElement/uint(_:)``, so an `Int32` and an `Int` with the same value make the same key.
public protocol KeyElementConvertible {
    /// The element this value is stored as.
    var keyElement: KeyElement { get }
}

extension KeyElementConvertible {
    /// This value as a descending element: it sorts in reverse order inside a key.
    public var descending: KeyElement { .descending(keyElement) }
}

extension KeyElement: KeyElementConvertible {
    public var keyElement: KeyElement { self }
}

extension Int: KeyElementConvertible {
    public var keyElement: KeyElement { .int(Int64(self)) }
}

extension Int64: KeyElementConvertible {
    public var keyElement: KeyElement { .int(self) }
}

extension Int32: KeyElementConvertible {
    public var keyElement: KeyElement { .int(Int64(self)) }
}

extension Int16: KeyElementConvertible {
    public var keyElement: KeyElement { .int(Int64(self)) }
}

extension Int8: KeyElementConvertible {
    public var keyElement: KeyElement { .int(Int64(self)) }
}

extension UInt: KeyElementConvertible {
    public var keyElement: KeyElement { .uint(UInt64(self)) }
}

extension UInt64: KeyElementConvertible {
    public var keyElement: KeyElement { .uint(self) }
}

extension UInt32: KeyElementConvertible {
    public var keyElement: KeyElement { .uint(UInt64(self)) }
}

extension UInt16: KeyElementConvertible {
    public var keyElement: KeyElement { .uint(UInt64(self)) }
}

extension UInt8: KeyElementConvertible {
    public var keyElement: KeyElement { .uint(UInt64(self)) }
}

extension Bool: KeyElementConvertible {
    public var keyElement: KeyElement { .bool(self) }
}

extension Double: KeyElementConvertible {
    public var keyElement: KeyElement { .double(self) }
}

extension String: KeyElementConvertible {
    public var keyElement: KeyElement { .string(self) }
}

extension Substring: KeyElementConvertible {
    public var keyElement: KeyElement { .string(String(self)) }
}

extension Array: KeyElementConvertible where Element == UInt8 {
    public var keyElement: KeyElement { .bytes(self) }
}

extension UUID: KeyElementConvertible {
    public var keyElement: KeyElement { .uuid(self) }
}

extension Date: KeyElementConvertible {
    public var keyElement: KeyElement { .date(self) }
}
