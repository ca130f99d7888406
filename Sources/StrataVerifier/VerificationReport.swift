/// Everything one ``Verifier/verify(path:fileSystem:repair:)`` run found.
///
/// Encodes to JSON with the stored properties plus the three summaries (`problemsLeft`,
/// `repairedCount`, `isClean`), so tools need not recompute them.
public struct VerificationReport: Sendable, Codable {
    /// The store directory, as given.
    public var path: String
    /// In the order they were found: identity file, manifest, segment files, WAL, leftovers.
    public var findings: [VerifierFinding]
    /// Files whose contents were read and checked.
    public var filesChecked: Int

    public init(path: String, findings: [VerifierFinding] = [], filesChecked: Int = 0) {
        self.path = path
        self.findings = findings
        self.filesChecked = filesChecked
    }

    /// Warnings and errors that were not repaired.
    public var problemsLeft: Int { findings.count(where: \.isProblemLeft) }
    /// Findings that `repair` fixed.
    public var repairedCount: Int { findings.count(where: \.repaired) }
    /// True when nothing is left to fix (info findings do not count).
    public var isClean: Bool { problemsLeft == 0 }

    private enum CodingKeys: String, CodingKey {
        case path, findings, filesChecked, problemsLeft, repairedCount, isClean
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
        findings = try container.decode([VerifierFinding].self, forKey: .findings)
        filesChecked = try container.decode(Int.self, forKey: .filesChecked)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(findings, forKey: .findings)
        try container.encode(filesChecked, forKey: .filesChecked)
        try container.encode(problemsLeft, forKey: .problemsLeft)
        try container.encode(repairedCount, forKey: .repairedCount)
        try container.encode(isClean, forKey: .isClean)
    }
}
