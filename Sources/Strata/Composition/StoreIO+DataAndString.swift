// The primitives with keys, values and range bounds of any StoreBytesConvertible type, as
// the transactions take them (API/DataAndString.swift). The bytes are taken when the
// operation is built, so an operation holds no reference to the caller's values.

extension StoreIO {
    /// The value of `key`, or nil.
    public static func get(_ key: some StoreBytesConvertible) -> StoreIO where Value == [UInt8]? {
        get(key.storeBytes)
    }

    /// The value of `key` as a `Decoded` (`String`, `Data`, `[UInt8]`), or nil. Running it
    /// throws as ``ReadableTransaction/get(_:as:)`` does.
    public static func get<Decoded: StoreBytesConvertible>(_ key: some StoreBytesConvertible, as type: Decoded.Type) -> StoreIO
    where Value == Decoded? {
        StoreIO<Access, [UInt8]?>.get(key.storeBytes).map { bytes in try bytes.map { try Decoded(storeBytes: $0) } }
    }

    /// The entries whose key starts with `prefix`, in key order.
    public static func scan(prefix: some StoreBytesConvertible) -> StoreIO where Value == [Entry] {
        scan(prefix: prefix.storeBytes)
    }

    /// The entries with `from <= key < to` (no upper bound when `to` is nil), in key order.
    public static func scan<Bound: StoreBytesConvertible>(from: Bound, to: Bound? = nil) -> StoreIO where Value == [Entry] {
        scan(from: from.storeBytes, to: to?.storeBytes)
    }

    /// A reference to `key` at the version the operation runs at.
    public static func reference(_ key: some StoreBytesConvertible) -> StoreIO where Value == KeyReference {
        reference(key.storeBytes)
    }

    /// A reference to the entries whose key starts with `prefix`.
    public static func reference(prefix: some StoreBytesConvertible) -> StoreIO where Value == QueryReference {
        reference(prefix: prefix.storeBytes)
    }

    /// A reference to the entries with `from <= key < to` (no upper bound when `to` is nil).
    public static func reference<Bound: StoreBytesConvertible>(from: Bound, to: Bound? = nil) -> StoreIO where Value == QueryReference {
        reference(from: from.storeBytes, to: to?.storeBytes)
    }

    /// The referenced key's value now, as a `Decoded`, or nil. Running it throws as
    /// ``ReadableTransaction/get(_:as:)`` does when the bytes are not a `Decoded`.
    public static func resolve<Decoded: StoreBytesConvertible>(_ reference: KeyReference, as type: Decoded.Type) -> StoreIO where Value == Decoded? {
        StoreIO<Access, [UInt8]?>.resolve(reference).map { bytes in try bytes.map { try Decoded(storeBytes: $0) } }
    }
}

extension StoreIO where Access == ReadWrite {
    /// Sets `key` to `value`; either may be `[UInt8]`, `Data` or `String`, in any mix.
    public static func put(_ key: some StoreBytesConvertible, _ value: some StoreBytesConvertible) -> StoreIO where Value == Void {
        put(key.storeBytes, value.storeBytes)
    }

    /// Removes `key`.
    public static func delete(_ key: some StoreBytesConvertible) -> StoreIO where Value == Void {
        delete(key.storeBytes)
    }

    /// Removes every key with `from <= key < to` (no upper bound when `to` is nil); gives how
    /// many were removed.
    public static func deleteRange<Bound: StoreBytesConvertible>(from: Bound, to: Bound?) -> StoreIO where Value == Int {
        deleteRange(from: from.storeBytes, to: to?.storeBytes)
    }
}
