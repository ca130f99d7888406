/// Argument checks shared by every transaction type, so every entry point refuses the same
/// inputs with the same words.
enum KeyValidation {
    static func checkKey(_ key: [UInt8]) throws {
        if key.isEmpty {
            throw StoreError(.invalidArgument, "keys must be at least 1 byte long; the empty key is reserved")
        }
        if key.count > StoreLimits.maxKeyBytes {
            throw StoreError(.invalidArgument, "key is \(key.count) bytes, over the limit of \(StoreLimits.maxKeyBytes); store large data in the value")
        }
    }

    static func checkValue(_ value: [UInt8]) throws {
        if value.count > StoreLimits.maxValueBytes {
            throw StoreError(.invalidArgument, "value is \(value.count) bytes, over the limit of \(StoreLimits.maxValueBytes); split it over several keys")
        }
    }

    /// Range bounds may be empty (the start of the key space) but not oversized.
    static func checkBound(_ key: [UInt8]) throws {
        if key.count > StoreLimits.maxKeyBytes {
            throw StoreError(.invalidArgument, "range bound is \(key.count) bytes, over the key limit of \(StoreLimits.maxKeyBytes)")
        }
    }
}
