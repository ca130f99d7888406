/// The error the records layer throws for problems with records themselves. Problems of the
/// store underneath (a closed store, a full disk, a suspension) come as `StoreError`.
///
/// Thrown inside a write transaction, it aborts the transaction like any other error: none
/// of the transaction's writes are applied.
public struct RecordError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is. New codes may be added later, so a `switch` over codes
    /// needs a `default:` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case duplicateID, notFound, uniqueViolation, decoding, encoding, invalidKey, migration
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// `insert` found a record with the same identifier already there.
        public static let duplicateID = Code(.duplicateID)
        /// `update` found no record with the identifier.
        public static let notFound = Code(.notFound)
        /// A write would give two records the same value in a unique index.
        public static let uniqueViolation = Code(.uniqueViolation)
        /// A stored record could not be decoded as the collection's type: damaged bytes, or
        /// a field the type requires that the record lacks (give the collection a defaults
        /// record, or make the property optional).
        public static let decoding = Code(.decoding)
        /// The record's `encode(to:)` threw.
        public static let encoding = Code(.encoding)
        /// A key in the collection's range is not one the records layer wrote: another
        /// writer put raw bytes there.
        public static let invalidKey = Code(.invalidKey)
        /// The store's recorded migrations do not match the ones the app registered.
        public static let migration = Code(.migration)

        public var description: String { value.rawValue }
    }

    public var code: Code
    /// What happened and what to do about it.
    public var message: String
    /// The collection concerned, when there is one.
    public var collection: String?

    public init(_ code: Code, _ message: String, collection: String? = nil) {
        self.code = code
        self.message = message
        self.collection = collection
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let collection { text += " [collection \"\(collection)\"]" }
        return text
    }
}
