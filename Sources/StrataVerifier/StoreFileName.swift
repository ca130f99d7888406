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
    /// Where the store puts files it will not delete (docs/format/store.md).
    static let asideDirectoryName = "aside"

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

    static func walName(_ number: UInt64) -> String { WALFormat.fileName(number) }

    static func walNumber(fromName name: String) -> UInt64? { WALFormat.number(fromName: name) }
}
