/// One fixture: a store directory and what checking it must report.
public struct FixtureCase: Sendable {
    /// The directory name under Fixtures/stores.
    public var name: String
    /// What was done to the clean store, as a sentence.
    public var damage: String
    /// The finding the verifier must report; nil for a clean store.
    public var expectedCode: String?
    /// `"info"`, `"warning"` or `"error"`; nil for a clean store.
    public var expectedSeverity: String?
    /// The file the finding is about.
    public var expectedFile: String?
    /// strata-fsck's exit status without `--repair`.
    public var exitStatus: Int32
    /// strata-fsck's exit status with `--repair`, when the damage is repairable (a second
    /// run then exits 0).
    public var exitStatusWithRepair: Int32?
    public var store: FixtureStore

    public init(
        name: String, damage: String, expectedCode: String?, expectedSeverity: String?, expectedFile: String?,
        exitStatus: Int32, exitStatusWithRepair: Int32? = nil, store: FixtureStore
    ) {
        self.name = name
        self.damage = damage
        self.expectedCode = expectedCode
        self.expectedSeverity = expectedSeverity
        self.expectedFile = expectedFile
        self.exitStatus = exitStatus
        self.exitStatusWithRepair = exitStatusWithRepair
        self.store = store
    }
}
