// "Two background edits of the same record", the scenario behind Core Data's merge
// conflicts: two background contexts each fetch a contact, one changes the name, the other the
// phone number, and both save. With Core Data's default merge policy the second save fails
// with a merge conflict; with an overwrite policy it silently replaces the first.
//
// Strata has one writer queue, so two saves never fail for running at the same time: the
// second commits after the first, and each writes what its task computed. When a task
// computed its value from a read made before the other save, the second save overwrites the
// first edit. (a) shows that; (b) adds one line to the save, `require(unchanged: reference)`,
// which turns the silent overwrite into a `.conflict` the task handles by reading again.
import Foundation
import Strata

/// One task's change to the contact.
public struct Edit: Sendable {
    /// Who makes it, for the output: "name task".
    public var task: String
    /// What it does, for the output.
    public var summary: String
    let apply: @Sendable (inout Contact) -> Void
    let isIn: @Sendable (Contact) -> Bool

    /// The first task corrects the name.
    public static let rename = Edit(
        task: "name task", summary: "sets the name to \"Ada King\"", apply: { $0.name = "Ada King" }, isIn: { $0.name == "Ada King" })
    /// The second task, at the same time, corrects the phone number.
    public static let renumber = Edit(
        task: "phone task", summary: "sets the phone to \"555-0199\"", apply: { $0.phone = "555-0199" }, isIn: { $0.phone == "555-0199" })
}

/// Thrown when the contact is not in the store.
public struct ContactMissing: Error {}

/// What one round (both tasks editing once) ended with.
public struct EditRound: Sendable {
    /// The tasks, in the order their saves committed.
    public var saveOrder: [String] = []
    /// How many times each task's save failed with `.conflict` before one committed.
    public var conflicts: [String: Int] = [:]
    /// The contact after both saves.
    public var contact = Contact(name: "", phone: "")
    /// The tasks whose change is not in `contact`.
    public var lostEdits: [String] = []

    public var totalConflicts: Int { conflicts.values.reduce(0, +) }
}

/// What the scenario saw; `failures` is empty when every check passed.
public struct TwoEditsReport: Sendable {
    public static let original = Contact(name: "Ada Lovelace", phone: "555-0100")
    public static let edits: [Edit] = [.rename, .renumber]

    /// (a) Plain saves: read, change one field, put the record.
    public var plain = EditRound()
    /// (b) The same, with `require(unchanged:)` in the save and a retry on `.conflict`.
    public var checked = EditRound()
    public var failures: [String] = []
}

/// Runs both rounds against a store in `directory` and checks what they promised: (a) loses
/// one edit without any error, (b) keeps both after exactly one conflict.
public func runTwoEditsScenario(directory: String) async throws -> TwoEditsReport {
    let store = try Store(path: directory + "/contacts.strata")
    defer { try? store.close() }
    var report = TwoEditsReport()

    report.plain = try await runRound(store: store, checked: false)
    if report.plain.lostEdits.count != 1 { report.failures.append("plain saves lost \(report.plain.lostEdits), not exactly one edit") }
    if report.plain.totalConflicts != 0 { report.failures.append("plain saves saw \(report.plain.totalConflicts) conflicts") }

    report.checked = try await runRound(store: store, checked: true)
    if !report.checked.lostEdits.isEmpty { report.failures.append("checked saves lost \(report.checked.lostEdits)") }
    if report.checked.totalConflicts != 1 { report.failures.append("checked saves saw \(report.checked.totalConflicts) conflicts, not one") }
    return report
}

/// Puts the original contact, then runs both tasks at once and reads what they left.
private func runRound(store: Store, checked: Bool) async throws -> EditRound {
    let key = Contact.key(id: "ada")
    let original = try TwoEditsReport.original.encoded()
    try await store.write { tx in try tx.put(key, original) }

    // Both tasks read, then wait here for each other, then save: both saves are based on the
    // same version of the contact, as when two background contexts fetch it at once.
    let bothHaveRead = Rendezvous(parties: 2)
    async let first = edit(.rename, checked: checked, store: store, key: key, bothHaveRead: bothHaveRead)
    async let second = edit(.renumber, checked: checked, store: store, key: key, bothHaveRead: bothHaveRead)
    let saves = try await [first, second].sorted { $0.committedAfter < $1.committedAfter }

    var round = EditRound()
    round.saveOrder = saves.map(\.edit.task)
    round.conflicts = Dictionary(uniqueKeysWithValues: saves.map { ($0.edit.task, $0.conflicts) })
    round.contact = try await store.read { tx in try load(tx, key) }
    round.lostEdits = TwoEditsReport.edits.filter { !$0.isIn(round.contact) }.map(\.task)
    return round
}

/// How one task's save went.
private struct Save: Sendable {
    var edit: Edit
    /// The version the save's transaction saw: the later save has the higher one.
    var committedAfter: UInt64
    var conflicts: Int
}

private func edit(_ edit: Edit, checked: Bool, store: Store, key: [UInt8], bothHaveRead: Rendezvous) async throws -> Save {
    checked
        ? try await checkedEdit(edit, store: store, key: key, bothHaveRead: bothHaveRead)
        : try await plainEdit(edit, store: store, key: key, bothHaveRead: bothHaveRead)
}

private func load(_ tx: some ReadableTransaction, _ key: [UInt8]) throws -> Contact {
    guard let bytes = try tx.get(key) else { throw ContactMissing() }
    return try Contact(decoding: bytes)
}

// MARK: (a) Plain saves

/// Reads the contact, changes one field and puts the whole record back. Nothing checks that
/// the contact is still as it was read: Strata runs the put after the other task's, without
/// an error, and whichever commits second wins.
private func plainEdit(_ edit: Edit, store: Store, key: [UInt8], bothHaveRead: Rendezvous) async throws -> Save {
    var contact = try await store.read { tx in try load(tx, key) }
    await bothHaveRead.arrive()

    edit.apply(&contact)
    let value = try contact.encoded()
    let version = try await store.write { tx in
        try tx.put(key, value)
        return tx.version
    }
    return Save(edit: edit, committedAfter: version, conflicts: 0)
}

// MARK: (b) Saves that check what they read

/// Reads the contact together with a reference to it, changes one field, and saves only if
/// no commit touched the contact since the reference was taken. On `.conflict` it starts
/// over from a fresh read, so its change is applied to what the other task saved.
private func checkedEdit(_ edit: Edit, store: Store, key: [UInt8], bothHaveRead: Rendezvous) async throws -> Save {
    var conflicts = 0
    while true {
        // One read transaction for both, so the reference's version is the version read.
        let (read, reference) = try await store.read { tx in (try load(tx, key), try tx.reference(key)) }
        if conflicts == 0 { await bothHaveRead.arrive() }

        var contact = read
        edit.apply(&contact)
        let value = try contact.encoded()
        do {
            let version = try await store.write { tx in
                // The check runs inside the write transaction, on the one writer queue:
                // nothing can commit between it and the put.
                try tx.require(unchanged: reference)
                try tx.put(key, value)
                return tx.version
            }
            return Save(edit: edit, committedAfter: version, conflicts: conflicts)
        } catch let error as StoreError where error.code == .conflict {
            // The other task saved first. Nothing of this transaction was applied; read
            // again and redo the change. (A bound, so a bug cannot loop forever.)
            conflicts += 1
            if conflicts == 5 { throw error }
        }
    }
}
