/// One committed transaction for a fixture's WAL: `value` nil is a delete.
public struct FixtureTransaction: Sendable {
    public var sequence: UInt64
    public var operations: [(key: String, value: String?)]

    public init(sequence: UInt64, _ operations: [(key: String, value: String?)]) {
        self.sequence = sequence
        self.operations = operations
    }
}
