// The reference primitives: the transaction methods of ReadableTransaction+References.swift
// as operations. All of them only read, so they compose at either access.

extension StoreIO {
    /// A reference to `key` at the version the operation runs at.
    public static func reference(_ key: [UInt8]) -> StoreIO where Value == KeyReference {
        StoreIO(primitive: { context in try context.readable.reference(key) })
    }

    /// A reference to the entries whose key starts with `prefix`.
    public static func reference(prefix: [UInt8]) -> StoreIO where Value == QueryReference {
        StoreIO(primitive: { context in try context.readable.reference(prefix: prefix) })
    }

    /// A reference to the entries with `from <= key < to` (no upper bound when `to` is nil).
    public static func reference(from: [UInt8], to: [UInt8]? = nil) -> StoreIO where Value == QueryReference {
        StoreIO(primitive: { context in try context.readable.reference(from: from, to: to) })
    }

    /// The referenced key's value now.
    public static func resolve(_ reference: KeyReference) -> StoreIO where Value == [UInt8]? {
        StoreIO(primitive: { context in try context.readable.resolve(reference) })
    }

    /// The referenced query run again now.
    public static func resolve(_ reference: QueryReference) -> StoreIO where Value == [Entry] {
        StoreIO(primitive: { context in try context.readable.resolve(reference) })
    }

    /// Whether a commit after the reference's version touched the key.
    public static func changedSince(_ reference: KeyReference) -> StoreIO where Value == Bool {
        StoreIO(primitive: { context in try context.readable.changedSince(reference) })
    }

    /// Whether a commit after the reference's version touched the range.
    public static func changedSince(_ reference: QueryReference) -> StoreIO where Value == Bool {
        StoreIO(primitive: { context in try context.readable.changedSince(reference) })
    }

    /// Fails with `.conflict` when a commit after the reference's version touched the key,
    /// and with it the whole composition: nothing of it is applied.
    public static func require(unchanged reference: KeyReference) -> StoreIO where Value == Void {
        StoreIO(primitive: { context in try context.readable.require(unchanged: reference) })
    }

    /// Fails with `.conflict` when a commit after the reference's version touched the range.
    public static func require(unchanged reference: QueryReference) -> StoreIO where Value == Void {
        StoreIO(primitive: { context in try context.readable.require(unchanged: reference) })
    }
}
