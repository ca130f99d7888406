/// What every transaction can do: read one key, or scan a range. Both
/// ``ReadTransaction`` and ``WriteTransaction`` conform.
public protocol ReadableTransaction {
    /// The commit sequence the transaction reads at: every commit up to it is visible.
    var version: UInt64 { get }

    /// The value of `key`, or nil when it has none.
    func get(_ key: [UInt8]) throws -> [UInt8]?

    /// Entries with `from <= key < to` (no upper bound when `to` is nil), in key order, or
    /// from the last down when `reverse` is true.
    func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan
}

extension ReadableTransaction {
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
