// Fast checks for zero-filled regions: recovery looks at the preallocated tail of a log file
// on every open, so these run a word at a time rather than a byte at a time.

/// True when every byte of `bytes` from `offset` to the end is zero.
public func isAllZero(_ bytes: [UInt8], from offset: Int) -> Bool {
    guard offset < bytes.count else { return true }
    return bytes.withUnsafeBytes { raw in
        var index = max(0, offset)
        while index < raw.count && index % 8 != 0 {
            if raw[index] != 0 { return false }
            index += 1
        }
        while index + 8 <= raw.count {
            if raw.load(fromByteOffset: index, as: UInt64.self) != 0 { return false }
            index += 8
        }
        while index < raw.count {
            if raw[index] != 0 { return false }
            index += 1
        }
        return true
    }
}

/// The index of the last non-zero byte, or nil when all are zero.
public func lastNonZeroIndex(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBytes { raw in
        var index = raw.count
        while index > 0 && index % 8 != 0 {
            index -= 1
            if raw[index] != 0 { return index }
        }
        while index >= 8 {
            if raw.load(fromByteOffset: index - 8, as: UInt64.self) != 0 {
                for i in stride(from: index - 1, through: index - 8, by: -1) where raw[i] != 0 { return i }
            }
            index -= 8
        }
        return nil
    }
}
