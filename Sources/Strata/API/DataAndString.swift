// Keys, values and range bounds as `Data`, `String` or any other StoreBytesConvertible type.
// Each method converts to bytes and calls the byte form, which stays the one implementation;
// the byte forms themselves are not generic, so a `[UInt8]` argument (and an array literal)
// still picks them.

extension ReadableTransaction {
    /// The value of `key`, or nil when it has none.
    public func get(_ key: some StoreBytesConvertible) throws -> [UInt8]? {
        try get(key.storeBytes)
    }

    /// The value of `key` as a `Value` (`String`, `Data`, `[UInt8]`), or nil when it has
    /// none.
    ///
    /// - Throws: what `Value.init(storeBytes:)` throws when the bytes are not a `Value`:
    ///   `StoreError` with code `.invalidArgument` for a `String` that is not UTF-8. A key
    ///   without a value is nil, never an error.
    public func get<Value: StoreBytesConvertible>(_ key: some StoreBytesConvertible, as type: Value.Type) throws -> Value? {
        try get(key.storeBytes).map { try Value(storeBytes: $0) }
    }

    /// Runs `body` on the value of `key` borrowed from the store, or on nil when it has none
    /// (the byte form's rules apply: the bytes are valid only during the call).
    public func withUnsafeValue<R>(_ key: some StoreBytesConvertible, _ body: (_ value: UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withUnsafeValue(key.storeBytes, body)
    }

    /// True when `key` has a value.
    public func contains(_ key: some StoreBytesConvertible) throws -> Bool {
        try contains(key.storeBytes)
    }

    /// Entries whose key starts with `prefix`, in key order, or from the last down when
    /// `reverse` is true.
    public func scan(prefix: some StoreBytesConvertible, reverse: Bool = false) throws -> Scan {
        try scan(prefix: prefix.storeBytes, reverse: reverse)
    }

    /// Entries with `from <= key < to` (no upper bound when `to` is nil), in key order, or
    /// from the last down when `reverse` is true. Both bounds are of one type.
    public func scan<Bound: StoreBytesConvertible>(from: Bound, to: Bound? = nil, reverse: Bool = false) throws -> Scan {
        try scan(from: from.storeBytes, to: to?.storeBytes, reverse: reverse)
    }

    /// ``forEachUnsafe(from:to:reverse:_:)-([UInt8],_,_,_)`` with bounds of any
    /// ``StoreBytesConvertible`` type; the entries are still handed over as borrowed bytes.
    public func forEachUnsafe<Bound: StoreBytesConvertible>(
        from: Bound, to: Bound? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try forEachUnsafe(from: from.storeBytes, to: to?.storeBytes, reverse: reverse, body)
    }

    /// A reference to `key` at this transaction's version (see ``reference(_:)-([UInt8])``).
    public func reference(_ key: some StoreBytesConvertible) throws -> KeyReference {
        try reference(key.storeBytes)
    }

    /// A reference to the entries whose key starts with `prefix`.
    public func reference(prefix: some StoreBytesConvertible) throws -> QueryReference {
        try reference(prefix: prefix.storeBytes)
    }

    /// A reference to the entries with `from <= key < to` (no upper bound when `to` is nil).
    public func reference<Bound: StoreBytesConvertible>(from: Bound, to: Bound? = nil) throws -> QueryReference {
        try reference(from: from.storeBytes, to: to?.storeBytes)
    }

    /// The referenced key's value as this transaction sees it, as a `Value`; nil when it has
    /// none. Throws as ``get(_:as:)`` does when the bytes are not a `Value`.
    public func resolve<Value: StoreBytesConvertible>(_ reference: KeyReference, as type: Value.Type) throws -> Value? {
        try resolve(reference).map { try Value(storeBytes: $0) }
    }
}

extension WriteTransaction {
    /// Sets `key` to `value`; either may be `[UInt8]`, `Data` or `String`, in any mix.
    public func put(_ key: some StoreBytesConvertible, _ value: some StoreBytesConvertible) throws {
        try put(key.storeBytes, value.storeBytes)
    }

    /// Removes `key`. Removing a key that has no value is not an error.
    public func delete(_ key: some StoreBytesConvertible) throws {
        try delete(key.storeBytes)
    }

    /// Removes every key with `from <= key < to` (to the end when `to` is nil) and returns how
    /// many had a value.
    @discardableResult
    public func deleteRange<Bound: StoreBytesConvertible>(from: Bound, to: Bound?) throws -> Int {
        try deleteRange(from: from.storeBytes, to: to?.storeBytes)
    }
}

extension Store {
    /// The change feed of ``changes(from:to:bufferSize:)-([UInt8],_,_)``, with bounds of any
    /// ``StoreBytesConvertible`` type.
    public func changes<Bound: StoreBytesConvertible>(from: Bound, to: Bound?, bufferSize: Int = 4096) -> AsyncThrowingStream<Change, any Error> {
        changes(from: from.storeBytes, to: to?.storeBytes, bufferSize: bufferSize)
    }

    /// The changes to keys that start with `prefix`.
    public func changes(prefix: some StoreBytesConvertible, bufferSize: Int = 4096) -> AsyncThrowingStream<Change, any Error> {
        changes(prefix: prefix.storeBytes, bufferSize: bufferSize)
    }
}

extension Entry {
    /// The key as a `Key` (`String`, `Data`, `[UInt8]`).
    ///
    /// - Throws: what `Key.init(storeBytes:)` throws: `StoreError` `.invalidArgument` for
    ///   a `String` that is not UTF-8.
    public func key<Key: StoreBytesConvertible>(as type: Key.Type) throws -> Key {
        try Key(storeBytes: key)
    }

    /// The value as a `Value` (`String`, `Data`, `[UInt8]`).
    ///
    /// - Throws: what `Value.init(storeBytes:)` throws: `StoreError` `.invalidArgument` for
    ///   a `String` that is not UTF-8.
    public func value<Value: StoreBytesConvertible>(as type: Value.Type) throws -> Value {
        try Value(storeBytes: value)
    }
}

extension Change {
    /// The key as a `Key` (`String`, `Data`, `[UInt8]`).
    public func key<Key: StoreBytesConvertible>(as type: Key.Type) throws -> Key {
        try Key(storeBytes: key)
    }

    /// The new value as a `Value`, nil when the commit deleted the key.
    public func value<Value: StoreBytesConvertible>(as type: Value.Type) throws -> Value? {
        try value.map { try Value(storeBytes: $0) }
    }
}

extension Store {
    /// The latest value of `key`, or nil when it has none: `Store/get(_:)-([UInt8])` for a key
    /// of any StoreBytesConvertible type.
    public func get(_ key: some StoreBytesConvertible) throws -> [UInt8]? {
        try get(key.storeBytes)
    }

    /// The latest value of `key` as a `Value` (`String`, `Data`, `[UInt8]`), or nil when it
    /// has none; throws as the transaction's `get(_:as:)` does.
    public func get<Value: StoreBytesConvertible>(_ key: some StoreBytesConvertible, as type: Value.Type) throws -> Value? {
        try get(key.storeBytes).map { try Value(storeBytes: $0) }
    }

    /// Runs `body` on the latest value of `key` borrowed from the store, or on nil when it
    /// has none (the byte form's rules apply: the bytes are valid only during the call).
    public func withUnsafeValue<R>(_ key: some StoreBytesConvertible, _ body: (_ value: UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withUnsafeValue(key.storeBytes, body)
    }
}
