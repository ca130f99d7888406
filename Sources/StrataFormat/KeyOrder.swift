// The order of user keys, shared by the format code and the engine.

/// Unsigned lexicographic byte order, a shorter key before any longer key it prefixes.
/// Returns a negative number, zero or a positive number. Compares eight bytes at a time as
/// big-endian words: keys are short, and a call to memcmp per node visited costs more than
/// the comparison itself.
@inlinable @inline(__always)
public func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    var index = 0
    while index + 8 <= common {
        let x = a.loadUnaligned(fromByteOffset: index, as: UInt64.self).bigEndian
        let y = b.loadUnaligned(fromByteOffset: index, as: UInt64.self).bigEndian
        if x != y { return x < y ? -1 : 1 }
        index += 8
    }
    while index < common {
        let x = a[index]
        let y = b[index]
        if x != y { return x < y ? -1 : 1 }
        index += 1
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
