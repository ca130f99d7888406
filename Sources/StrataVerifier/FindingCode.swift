import StrataFormat

/// Every code the verifier reports, in one place. Tools match on these strings: add new
/// ones freely, never rename or reuse one. Documented in StrataVerifier.docc/FindingCodes.md;
/// keep the two in step.
enum FindingCode {
    static let identityDamaged = "identity.damaged"

    static let manifestHeader = "manifest.header"
    static let manifestUnsupportedVersion = "manifest.unsupportedVersion"
    static let manifestNumberMismatch = "manifest.numberMismatch"
    static let manifestEmpty = "manifest.empty"
    static let manifestCorruptRecord = "manifest.corruptRecord"
    static let manifestTornRecord = "manifest.tornRecord"
    static let manifestBadEdit = "manifest.badEdit"
    static let manifestIncompleteSnapshot = "manifest.incompleteSnapshot"
    static let manifestNumberDecreased = "manifest.numberDecreased"
    static let manifestRemoveNotLive = "manifest.removeNotLive"
    static let manifestDuplicateFile = "manifest.duplicateFile"
    static let manifestFileNumberTooLarge = "manifest.fileNumberTooLarge"
    static let manifestOverlap = "manifest.overlap"
    static let manifestMissingSegment = "manifest.missingSegment"

    static let segmentTruncated = "segment.truncated"
    static let segmentKeyOrder = "segment.keyOrder"
    static let segmentSequenceRange = "segment.sequenceRange"
    static let segmentEntryCount = "segment.entryCount"
    static let segmentMetadataMismatch = "segment.metadataMismatch"
    static let segmentSequenceAboveManifest = "segment.sequenceAboveManifest"

    static let walHeader = "wal.header"
    static let walUnsupportedVersion = "wal.unsupportedVersion"
    static let walNumberMismatch = "wal.numberMismatch"
    static let walCorruption = "wal.corruption"
    static let walTornTail = "wal.tornTail"
    static let walBadBatch = "wal.badBatch"
    static let walSequenceGap = "wal.sequenceGap"
    static let walIncompleteSegment = "wal.incompleteSegment"
    static let walUnsyncedSegment = "wal.unsyncedSegment"

    static let fileUnreferenced = "file.unreferenced"
    static let fileUnknown = "file.unknown"
    static let fileUnreadable = "file.unreadable"
    static let fileForeign = "file.foreign"
    static let asideDirectory = "file.asideDirectory"

    static let repairFailed = "repair.failed"

    /// `segment.checksum`, `segment.truncated`, ...: a decoding failure, named by its kind.
    static func segment(_ kind: FormatError.Kind) -> String {
        switch kind {
        case .truncated: "segment.truncated"
        case .checksumMismatch: "segment.checksum"
        case .badMagic: "segment.badMagic"
        case .unsupportedVersion: "segment.unsupportedVersion"
        case .malformed: "segment.malformed"
        }
    }
}
