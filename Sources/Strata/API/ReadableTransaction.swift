/// What every transaction can do: read one key, or scan a range. Both
/// ``ReadTransaction`` and ``WriteTransaction`` conform.
public protocol ReadableTransaction {
    /// The commit sequence the transaction reads at: every commit up to it is visible.
    var version: UInt64 { get }

    /// The value of `key`, or nil when it has none.
    func get(_ key: [UInt8]) throws -> [UInt8]?

    /// Runs `body` on the value of `key`, or on nil when it has none, and returns what `body`
    /// returns. The bytes are borrowed from the store: nothing is copied or allocated, so
    /// this is the fastest way to read one value. They are valid only during the call; copy
    /// what you keep.
    ///
    /// - Throws: what ``get(_:)`` throws, and what `body` throws.
    func withUnsafeValue<R>(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> R) throws -> R

    /// Entries with `from <= key < to` (no upper bound when `to` is nil), in key order, or
    /// from the last down when `reverse` is true.
    func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan
}

extension ReadableTransaction {
    /// For a conforming type of your own: runs `body` on a copy from ``get(_:)``.
    public func withUnsafeValue<R>(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> R) throws -> R {
        guard let value = try get(key) else { return try body(nil) }
        return try value.withUnsafeBytes { try body($0) }
    }

    public func scan(from: [UInt8], to: [UInt8]? = nil) throws -> Scan {
        try scan(from: from, to: to, reverse: false)
    }

    /// Entries whose key starts with `prefix`.
    public func scan(prefix: [UInt8], reverse: Bool = false) throws -> Scan {
        try scan(from: prefix, to: Scan.upperBound(forPrefix: prefix), reverse: reverse)
    }

    /// True when `key` has a value.
    public func contains(_ key: [UInt8]) throws -> Bool {
        try get(key) != nil
    }

    /// Visits the entries with `from <= key < to` (no upper bound when `to` is nil), in key
    /// order or reverse, handing `body` each key and value as bytes borrowed from the store:
    /// nothing is copied, so this is the fastest way to read many entries. The buffers are
    /// valid only during the call; copy what you keep. Return false from `body` to stop.
    public func forEachUnsafe(
        from: [UInt8], to: [UInt8]? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scan(from: from, to: to, reverse: reverse).forEachBorrowed(body)
    }
}
