/// One thing the verifier found in a store directory: damage, an inconsistency between
/// files, a leftover file, or (as ``Severity/info``) something harmless worth knowing.
///
/// `code` is stable: tools may match on it. The message is for people and may change.
public struct VerifierFinding: Sendable, Equatable, Codable {
    /// How much a finding matters.
    public enum Severity: String, Sendable, Codable {
        /// Harmless: the store deals with it by itself when it opens (for example, a manifest
        /// append that a crash interrupted).
        case info
        /// Nothing is lost, but the directory is not as the store left it after a clean
        /// close: a torn WAL tail, a leftover file, a file the store does not know.
        case warning
        /// Damage or an inconsistency: the store may refuse to open, or may have lost data.
        case error
    }

    public var severity: Severity
    /// The file's name inside the store directory; empty for the directory itself.
    public var file: String
    /// The byte offset in `file` where the problem starts, when there is one.
    public var offset: Int64?
    /// A stable identifier such as `"segment.checksum"` or `"file.unreferenced"`; the
    /// catalog's "Finding codes" article lists them all.
    public var code: String
    /// What is wrong and what to do about it, as a sentence.
    public var message: String
    /// True only for the two things `repair` fixes: a torn WAL tail, and a file the store
    /// does not read (unreferenced, or a WAL segment after a torn write).
    public var repairable: Bool
    /// True once `repair` fixed it.
    public var repaired: Bool

    public init(
        severity: Severity, file: String, offset: Int64? = nil, code: String, message: String,
        repairable: Bool = false, repaired: Bool = false
    ) {
        self.severity = severity
        self.file = file
        self.offset = offset
        self.code = code
        self.message = message
        self.repairable = repairable
        self.repaired = repaired
    }

    /// A warning or an error that was not repaired.
    public var isProblemLeft: Bool { severity != .info && !repaired }
}
