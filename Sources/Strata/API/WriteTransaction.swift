@_spi(Engine) import StrataFormat

/// A write transaction, run on the store's writer queue. It sees every earlier commit and its
/// own writes; when its closure returns, all of its writes commit together, and if the closure
/// throws, none do. Do not keep it after the closure returns: every call then throws.
public final class WriteTransaction: ReadableTransaction {
    enum PendingWrite {
        case put([UInt8])
        case delete
    }

    /// One key's latest write in this transaction.
    struct PendingEntry {
        let key: [UInt8]
        var write: PendingWrite
    }

    private let head: Version
    // The mutable state below is used by the one thread that runs the transaction's closure,
    // so it skips the runtime's exclusivity check (a thread-local lookup per access, several
    // per put).
    /// Errors its scans met, made by the first scan: most transactions only write.
    @exclusivity(unchecked) private var scanErrors: ReadErrors? = nil
    /// The head sequence: the last commit the writer has run, durable or not yet.
    public let version: UInt64
    /// Each written key once, in the order first written, so a commit encodes
    /// deterministically and without hashing again.
    @exclusivity(unchecked) private(set) var entries: [PendingEntry] = []
    /// Where each key sits in `entries`: one hash per write, and reads of own writes. Nil
    /// while every write so far has a larger key than the one before (a bulk load in key
    /// order), when no key can repeat; built on the first read or out-of-order write.
    @exclusivity(unchecked) private var positions: TransactionKeyIndex? = nil
    @exclusivity(unchecked) private(set) var byteCount = 0
    @exclusivity(unchecked) private var ended = false

    init(head: Version, version: UInt64) {
        self.head = head
        self.version = version
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Ends the transaction: later calls throw.
    func end() { ended = true }

    /// Throws the first error a scan of this transaction met, if any: a body that iterated
    /// past damage must not commit as if it had read everything.
    func checkScanErrors() throws {
        try scanErrors?.check()
    }

    private func checkActive() throws {
        if ended {
            throw StoreError(.invalidArgument, "a write transaction was used after its closure returned; do all work inside the closure")
        }
    }

    // MARK: Reading

    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try checkActive()
        try KeyValidation.checkKey(key)
        if let write = ownWrite(key) {
            if case .put(let value) = write { return value }
            return nil
        }
        return try head.get(key, at: version)
    }

    @inlinable
    public func withUnsafeValue<R>(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> R) throws -> R {
        // Inlinable for the caller's `R`, as `Store.read` is; the work is `withValueBytes`.
        var result: R? = nil
        try withValueBytes(key) { result = try body($0) }
        guard let result else { preconditionFailure("withUnsafeValue: the read returned without running its body") }
        return result
    }

    /// The work of `withUnsafeValue`: `body` on the bytes of `key`'s value, this
    /// transaction's own write first.
    @usableFromInline
    func withValueBytes(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> Void) throws {
        try checkActive()
        try KeyValidation.checkKey(key)
        if let write = ownWrite(key) {
            guard case .put(let value) = write else { return try body(nil) }
            return try value.withUnsafeBytes { try body($0) }
        }
        try key.withUnsafeBytes { try head.borrowValue($0, at: version) }.withBytes(body)
    }

    /// This transaction's latest write of `key`, if it wrote it.
    private func ownWrite(_ key: [UInt8]) -> PendingWrite? {
        let index = indexPositions()
        let position = key.withUnsafeBytes { key in
            index.position(of: key, hash: hashKey(key), inserting: nil) { entries[$0].key }
        }
        return position.map { entries[$0].write }
    }

    public func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan {
        try checkActive()
        try KeyValidation.checkBound(from)
        if let to { try KeyValidation.checkBound(to) }
        var overlay: [VersionedEntry] = []
        for entry in entries where keyIsIn(entry.key, lower: from, upper: to) {
            switch entry.write {
            case .put(let value): overlay.append(VersionedEntry(key: entry.key, value: value))
            case .delete: overlay.append(VersionedEntry(key: entry.key, value: nil))
            }
        }
        overlay.sort { reverse ? $1.key.lexicographicallyPrecedes($0.key) : $0.key.lexicographicallyPrecedes($1.key) }
        let errors = scanErrors ?? ReadErrors()
        scanErrors = errors
        return Scan(version: head, sequence: version, lower: from, upper: to, reverse: reverse, overlay: overlay, errors: errors)
    }

    // MARK: Writing

    /// Sets `key` to `value`.
    public func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try checkActive()
        try KeyValidation.checkKey(key)
        try KeyValidation.checkValue(value)
        try record(key, .put(value), bytes: key.count + value.count)
    }

    /// Removes `key`. Removing a key that has no value is not an error.
    public func delete(_ key: [UInt8]) throws {
        try checkActive()
        try KeyValidation.checkKey(key)
        try record(key, .delete, bytes: key.count)
    }

    /// Removes every key with `from <= key < to` (to the end when `to` is nil) and returns how
    /// many had a value. Costs time in proportion to the keys in the range.
    @discardableResult
    public func deleteRange(from: [UInt8], to: [UInt8]?) throws -> Int {
        let doomed = try scan(from: from, to: to, reverse: false).map(\.key)
        for key in doomed { try delete(key) }
        return doomed.count
    }

    private func record(_ key: [UInt8], _ write: PendingWrite, bytes: Int) throws {
        if byteCount + bytes > StoreLimits.maxTransactionBytes {
            throw StoreError(
                .invalidArgument, "the transaction holds over \(StoreLimits.maxTransactionBytes) bytes of keys and values; commit in smaller transactions")
        }
        byteCount += bytes
        if positions == nil {
            let ascending =
                entries.last.map { last in
                    last.key.withUnsafeBytes { a in key.withUnsafeBytes { compareKeys(a, $0) < 0 } }
                } ?? true
            if ascending {
                entries.append(PendingEntry(key: key, write: write))
                return
            }
        }
        let index = indexPositions()
        // One probe for lookup and insert: a new key is added at the position it takes.
        let next = entries.count
        let existing = key.withUnsafeBytes { key in
            index.position(of: key, hash: hashKey(key), inserting: next) { entries[$0].key }
        }
        if let existing {
            entries[existing].write = write
        } else {
            entries.append(PendingEntry(key: key, write: write))
        }
    }

    /// The key-to-position index (`positions`), built from `entries` the first time it is
    /// needed, with room for as many keys again (a transaction that wrote out of order once
    /// usually goes on doing so).
    private func indexPositions() -> TransactionKeyIndex {
        if let positions { return positions }
        let built = TransactionKeyIndex(capacity: max(2 * entries.count, 64))
        for (position, entry) in entries.enumerated() {
            // Keys written in ascending order are distinct: each is added, none is found.
            _ = entry.key.withUnsafeBytes { key in
                built.position(of: key, hash: hashKey(key), inserting: position) { entries[$0].key }
            }
        }
        positions = built
        return built
    }
}

// Transactions stay on the writer queue that runs their closure.
@available(*, unavailable)
extension WriteTransaction: Sendable {}

/// A key as a dictionary key. `[UInt8]`'s own hashing feeds the hasher one byte at a time;
/// this feeds it one word, the memtable's fast hash of the bytes, which is seeded per process
/// so crafted keys cannot be made to collide.
struct HashedKey: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.withUnsafeBytes(hashKey))
    }
}

extension WriteTransaction: CommittedStateReading {
    /// Every commit the writer has run, without this transaction's own writes.
    func committedView() throws -> ReadView {
        try checkActive()
        return ReadView(version: head, sequence: version)
    }
}
