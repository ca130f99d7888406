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

    /// A store path the system can hold with the store's file names appended (docs/limits.md).
    /// Checked before anything is created, so a refused path leaves nothing behind.
    static func checkStorePath(_ path: String, role: String = "store path") throws {
        // An empty path is refused where the store is opened or copied, with words for each.
        let bytes = path.utf8.count
        if bytes > StoreLimits.maxPathBytes {
            throw StoreError(
                .invalidArgument,
                "the \(role) is \(bytes) bytes, over the limit of \(StoreLimits.maxPathBytes) (the system's path limit less room for the store's file names); choose a shorter path",
                file: path)
        }
        for name in path.split(separator: "/") where name.utf8.count > StoreLimits.maxNameBytes {
            throw StoreError(
                .invalidArgument,
                "the \(role) has a name of \(name.utf8.count) bytes, over the system's limit of \(StoreLimits.maxNameBytes) for one name; choose a shorter name",
                file: path)
        }
    }
}
