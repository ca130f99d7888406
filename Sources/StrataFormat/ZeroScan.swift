// Fast checks for zero-filled regions: recovery looks at the preallocated tail of a log file
// on every open, so these hand the scan to the C library's vectorised comparison
// (CStrata/zero_scan.c), whatever the build's optimisation.
import CStrata

/// True when every byte of `bytes` from `offset` to the end is zero.
public func isAllZero(_ bytes: [UInt8], from offset: Int) -> Bool {
    let start = max(0, offset)
    guard start < bytes.count else { return true }
    return bytes.withUnsafeBytes { raw in
        strata_is_all_zero(raw.baseAddress! + start, raw.count - start) != 0
    }
}

/// The index of the last non-zero byte, or nil when all are zero.
public func lastNonZeroIndex(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBytes { raw -> Int? in
        guard let base = raw.baseAddress else { return nil }
        let index = strata_last_nonzero(base, raw.count)
        return index < 0 ? nil : index
    }
}
