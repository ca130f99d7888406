import Foundation

// SendableMetatype, and the warning it answers, came with Swift 6.2; the package still builds
// with 6.1, where the protocol refines nothing.
#if compiler(>=6.2)
    /// A type whose values can be keys and values of a store. The store keeps bytes; `[UInt8]`,
    /// `Data` and `String` (as UTF-8) conform, so every method that takes a key, a value or a
    /// range bound takes any of them, and ``ReadableTransaction/get(_:as:)`` gives a value back
    /// as any of them:
    ///
    /// ```swift
    /// try store.write { tx in try tx.put("user/1", "Ada") }
    /// let name = try store.read { tx in try tx.get("user/1", as: String.self) }
    /// let raw = try store.read { tx in try tx.get("user/1", as: Data.self) }
    /// print(name ?? "no user/1", raw?.count ?? 0)
    /// ```
    ///
    /// Keys keep their byte order: `String` keys sort by their UTF-8 bytes, which is the order of
    /// their Unicode scalars, not a locale's collation.
    ///
    /// Conform your own types when their bytes are a stable encoding: a key must produce the same
    /// bytes every time, or it will not find what it stored. The conversion may not be isolated
    /// to an actor (the protocol refines `SendableMetatype`), because a ``StoreIO`` operation
    /// decodes on whatever thread runs it.
    public protocol StoreBytesConvertible: SendableMetatype {
        /// The bytes the store keeps for this value.
        var storeBytes: [UInt8] { get }

        /// Makes a value from bytes read from the store.
        ///
        /// - Throws: when the bytes do not encode a value of this type; `String` throws
        ///   `StoreError` with code `.invalidArgument` for bytes that are not UTF-8.
        init(storeBytes: [UInt8]) throws
    }
#else
    /// A type whose values can be keys and values of a store; see the Swift 6.2 declaration above.
    public protocol StoreBytesConvertible {
        /// The bytes the store keeps for this value.
        var storeBytes: [UInt8] { get }

        /// Makes a value from bytes read from the store.
        ///
        /// - Throws: when the bytes do not encode a value of this type; `String` throws
        ///   `StoreError` with code `.invalidArgument` for bytes that are not UTF-8.
        init(storeBytes: [UInt8]) throws
    }
#endif

extension Array: StoreBytesConvertible where Element == UInt8 {
    public var storeBytes: [UInt8] { self }

    public init(storeBytes: [UInt8]) {
        self = storeBytes
    }
}

extension Data: StoreBytesConvertible {
    public var storeBytes: [UInt8] { [UInt8](self) }

    public init(storeBytes: [UInt8]) {
        self.init(storeBytes)
    }
}

extension String: StoreBytesConvertible {
    /// The string's UTF-8 encoding, as is: no Unicode normalization, so two strings that
    /// look the same but are composed differently are different keys.
    public var storeBytes: [UInt8] { Array(utf8) }

    /// Decodes UTF-8, and refuses anything else rather than repairing it: a value read as a
    /// `String` either comes back byte for byte or not at all.
    ///
    /// - Throws: `StoreError` with code `.invalidArgument` when the bytes are not valid
    ///   UTF-8; read them as `[UInt8]` or `Data` instead.
    public init(storeBytes: [UInt8]) throws {
        guard let string = String(validating: storeBytes, as: UTF8.self) else {
            throw StoreError(
                .invalidArgument, "\(storeBytes.count) bytes read as a String are not valid UTF-8; read them as [UInt8] or Data instead")
        }
        self = string
    }
}
