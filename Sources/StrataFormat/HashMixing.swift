/// The 64-bit finalizer of MurmurHash3 (fmix64): spreads every input bit over the whole
/// word, so hashes of similar keys land far apart. The bloom filter's hash (stored on disk,
/// so it must never change) and the memtable's in-memory index both finish with it.
@inlinable
public func avalanche64(_ value: UInt64) -> UInt64 {
    var h = value
    h ^= h >> 33
    h = h &* 0xFF51_AFD7_ED55_8CCD
    h ^= h >> 33
    h = h &* 0xC4CE_B9FE_1A85_EC53
    h ^= h >> 33
    return h
}
