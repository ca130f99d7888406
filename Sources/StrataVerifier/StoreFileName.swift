import StrataFormat

/// What a name in a store directory is, by its name alone (docs/format/store.md,
/// docs/format/manifest.md).
enum StoreFileName: Equatable {
    case identity
    case lock
    case wal(UInt64)
    case segment(UInt64)
    case manifest(UInt64)
    /// `STRATA.tmp`, `manifest-N.tmp` or any other `*.tmp`: written before a rename that a
    /// crash prevented. The store owns its directory and never reads a `.tmp` file back.
    case temporary
    case unknown

    static let lockFileName = "LOCK"

    init(_ name: String) {
        if name == StoreIdentityFormat.fileName {
            self = .identity
        } else if name == Self.lockFileName {
            self = .lock
        } else if let number = Self.walNumber(fromName: name) {
            self = .wal(number)
        } else if let number = ManifestFormat.number(fromSegmentName: name) {
            self = .segment(number)
        } else if let number = ManifestFormat.number(fromManifestName: name) {
            self = .manifest(number)
        } else if name.hasSuffix(".tmp") {
            self = .temporary
        } else {
            self = .unknown
        }
    }

    /// `wal-0000000003.log`. The engine names WAL segments the same way; the format module
    /// has no helper for them yet.
    static func walName(_ number: UInt64) -> String {
        let digits = String(number)
        return "wal-" + String(repeating: "0", count: max(0, 10 - digits.count)) + digits + ".log"
    }

    static func walNumber(fromName name: String) -> UInt64? {
        guard name.hasPrefix("wal-"), name.hasSuffix(".log") else { return nil }
        let digits = name.dropFirst(4).dropLast(4)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(digits)
    }
}
