@_spi(Engine) import StrataFormat

/// A write transaction, run on the store's writer queue. It sees every earlier commit and its
/// own writes; when its closure returns, all of its writes commit together, and if the closure
/// throws, none do. Do not keep it after the closure returns: every call then throws.
public final class WriteTransaction: ReadableTransaction {
    /// One key's latest write in this transaction: where its key and value sit in `batch`.
    struct PendingEntry {
        var keyOffset: UInt32
        var keyLength: UInt32
        var valueOffset: UInt32
        /// `PendingEntry.deleted` for a delete.
        var valueLength: UInt32

        static let deleted = UInt32.max
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
    /// Every write made, in order, as the operations the commit logs (BatchBuffer): each key
    /// and value is copied here from the caller's array when it is written.
    let batch: BatchBuffer
    /// Writes replaced by a later write of the same key: still in `batch`, where the commit
    /// drops them (`finishBatch`), so the log holds each key once per commit, as the
    /// memtable does (MemTable invariant 4).
    @exclusivity(unchecked) private var superseded = 0
    /// True while every key written so far is larger than the one written before it.
    @exclusivity(unchecked) private(set) var writtenInKeyOrder = true
    /// Where each key sits in `entries`: one hash per write, and reads of own writes. Nil
    /// while every write so far has a larger key than the one before (a bulk load in key
    /// order), when no key can repeat; built on the first read or out-of-order write.
    @exclusivity(unchecked) private var positions: TransactionKeyIndex? = nil
    @exclusivity(unchecked) private(set) var byteCount = 0
    @exclusivity(unchecked) private var ended = false
    /// How many `savepoint` calls are under way (nested).
    @exclusivity(unchecked) private var openSavepoints = 0
    /// While a savepoint is open: each entry a later write of its key replaced, with its
    /// position, in the order replaced, so an undo can put them back. Empty otherwise.
    @exclusivity(unchecked) private var replaced: [(position: Int, entry: PendingEntry)] = []

    /// `batch`: an empty buffer to build the batch in (the writer passes back the last one).
    init(head: Version, version: UInt64, batch: BatchBuffer = BatchBuffer()) {
        assert(batch.count == BatchFormat.headerSize, "WriteTransaction: its batch buffer must start empty")
        self.head = head
        self.version = version
        self.batch = batch
    }

    /// The key of `entry`, in `batch`: valid until the next write.
    @inline(__always)
    func key(of entry: PendingEntry) -> UnsafeRawBufferPointer {
        batch.bytes(at: Int(entry.keyOffset), count: Int(entry.keyLength))
    }

    /// The value of `entry`, nil for a delete: valid until the next write.
    @inline(__always)
    func value(of entry: PendingEntry) -> UnsafeRawBufferPointer? {
        entry.valueLength == PendingEntry.deleted ? nil : batch.bytes(at: Int(entry.valueOffset), count: Int(entry.valueLength))
    }

    /// The batch to log as commit `sequence`, its header written; writes a later one
    /// replaced are dropped from it first. For the writer, after `end()`.
    func finishBatch(sequence: UInt64, syncedThrough: UInt64) -> BatchBuffer {
        if superseded > 0 {
            let rebuilt = BatchBuffer(capacity: batch.count)
            for i in entries.indices {
                let entry = entries[i]
                let stored = rebuilt.append(key: key(of: entry), value: value(of: entry))
                entries[i].keyOffset = UInt32(stored.key)
                entries[i].valueOffset = UInt32(stored.value)
            }
            batch.take(rebuilt)
            superseded = 0
        }
        batch.finish(sequence: sequence, syncedThrough: syncedThrough, operations: entries.count)
        return batch
    }

    /// The positions in `entries` in key order, for the memtable to insert them by (nil when
    /// they were written in key order): each insert then starts its skiplist search at the
    /// one before it, a few nodes away, instead of at the head, about log n cache misses away.
    /// Sorted by the eight key bytes after the prefix every key shares, so most comparisons
    /// are one of two integers.
    func keyOrder() -> [Int]? {
        guard !writtenInKeyOrder, entries.count > 1 else { return nil }
        var lowest = key(of: entries[0])
        var highest = lowest
        for entry in entries.dropFirst() {
            let key = key(of: entry)
            if compareKeys(key, lowest) < 0 { lowest = key } else if compareKeys(key, highest) > 0 { highest = key }
        }
        // Every key between the lowest and the highest starts with the prefix those two share.
        var shared = 0
        while shared < lowest.count && shared < highest.count && lowest[shared] == highest[shared] { shared += 1 }
        @inline(__always)
        func eightBytes(_ position: Int) -> UInt64 {
            let key = key(of: entries[position])
            var bytes: UInt64 = 0
            for offset in shared..<(shared + 8) {
                bytes = bytes << 8 | UInt64(offset < key.count ? key[offset] : 0)
            }
            return bytes
        }
        let byKey: (Int, Int) -> Bool = { compareKeys(self.key(of: self.entries[$0]), self.key(of: self.entries[$1])) < 0 }
        guard entries.count <= 1 << 16 else {
            return entries.indices.map { (eightBytes($0), $0) }.sorted { a, b in a.0 != b.0 ? a.0 < b.0 : byKey(a.1, b.1) }.map(\.1)
        }
        // Up to 65,536 writes: six of the eight bytes and the position packed in one word, so
        // the sort compares plain integers; only keys equal in those six bytes are compared
        // again, whole, afterwards.
        var packed = entries.indices.map { eightBytes($0) & ~0xFFFF | UInt64($0) }
        packed.sort()
        var order = packed.map { Int($0 & 0xFFFF) }
        var start = 0
        while start < packed.count {
            var end = start + 1
            while end < packed.count && packed[end] & ~0xFFFF == packed[start] & ~0xFFFF { end += 1 }
            if end - start > 1 { order[start..<end].sort(by: byKey) }
            start = end
        }
        return order
    }

    /// The writes as observers get them: copies, kept after the buffer is reused.
    func committedEntries() -> [CommittedWrites.Entry] {
        entries.map { CommittedWrites.Entry(key: copyBytes(key(of: $0)), value: value(of: $0).map(copyBytes)) }
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
        if let write = ownWrite(key) { return value(of: write).map(copyBytes) }
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
            // A copy: `body` may write to this transaction, which can move `batch`.
            guard let value = value(of: write).map(copyBytes) else { return try body(nil) }
            return try value.withUnsafeBytes { try body($0) }
        }
        try key.withUnsafeBytes { try head.borrowValue($0, at: version) }.withBytes(body)
    }

    /// This transaction's latest write of `key`, if it wrote it.
    private func ownWrite(_ key: [UInt8]) -> PendingEntry? {
        let index = indexPositions()
        let position = key.withUnsafeBytes { key in
            index.position(of: key, hash: hashKey(key), inserting: nil) { compareKeys(self.key(of: entries[$0]), key) == 0 }
        }
        return position.map { entries[$0] }
    }

    public func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan {
        try checkActive()
        try KeyValidation.checkBound(from)
        if let to { try KeyValidation.checkBound(to) }
        var overlay: [VersionedEntry] = []
        for entry in entries {
            let key = copyBytes(key(of: entry))
            if keyIsIn(key, lower: from, upper: to) { overlay.append(VersionedEntry(key: key, value: value(of: entry).map(copyBytes))) }
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
        try key.withUnsafeBytes { key in try value.withUnsafeBytes { try record(key, $0) } }
    }

    /// Removes `key`. Removing a key that has no value is not an error.
    public func delete(_ key: [UInt8]) throws {
        try checkActive()
        try KeyValidation.checkKey(key)
        try key.withUnsafeBytes { try record($0, nil) }
    }

    /// Removes every key with `from <= key < to` (to the end when `to` is nil) and returns how
    /// many had a value. Costs time in proportion to the keys in the range.
    @discardableResult
    public func deleteRange(from: [UInt8], to: [UInt8]?) throws -> Int {
        let doomed = try scan(from: from, to: to, reverse: false).map(\.key)
        // One step: a delete the transaction's size limit refuses midway undoes the others.
        try savepoint { for key in doomed { try delete(key) } }
        return doomed.count
    }

    /// Runs `body` as one step of the transaction: if it throws, every write it made is
    /// undone, so the transaction is exactly as it was before the call, and the error is
    /// rethrown. The transaction goes on, and commits what was written outside the failed
    /// step. Savepoints nest; one that returns keeps its writes (an enclosing savepoint that
    /// throws still undoes them).
    ///
    /// Each call (`put`, `delete`, `deleteRange`) already writes all or nothing. A savepoint
    /// makes a group of calls so: a record and its index entries, or a step an app may catch
    /// and skip.
    ///
    /// ```swift
    /// try store.write { tx in
    ///     try tx.put("inbox/count", "2")
    ///     do {
    ///         try tx.savepoint {
    ///             try tx.put("inbox/2", "draft")
    ///             throw CancellationError()   // undoes inbox/2, keeps inbox/count
    ///         }
    ///     } catch is CancellationError {}
    /// }
    /// ```
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        try checkActive()
        let entryCount = entries.count
        let batchCount = batch.count
        let replacedCount = replaced.count
        let (savedSuperseded, savedByteCount, savedInKeyOrder) = (superseded, byteCount, writtenInKeyOrder)
        openSavepoints += 1
        defer {
            openSavepoints -= 1
            if openSavepoints == 0 { replaced.removeAll(keepingCapacity: true) }
        }
        do {
            return try body()
        } catch {
            // Latest first, so a key replaced twice gets its first entry back.
            while replaced.count > replacedCount {
                let undo = replaced.removeLast()
                entries[undo.position] = undo.entry
            }
            entries.removeSubrange(entryCount...)
            // The key index may hold keys written in the step: rebuilt from `entries` when
            // next needed.
            if batch.count != batchCount { positions = nil }
            batch.truncate(to: batchCount)
            (superseded, byteCount, writtenInKeyOrder) = (savedSuperseded, savedByteCount, savedInKeyOrder)
            throw error
        }
    }

    private func record(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws {
        let bytes = key.count + (value?.count ?? 0)
        if byteCount + bytes > StoreLimits.maxTransactionBytes {
            throw StoreError(
                .invalidArgument, "the transaction holds over \(StoreLimits.maxTransactionBytes) bytes of keys and values; commit in smaller transactions")
        }
        byteCount += bytes
        if writtenInKeyOrder {
            writtenInKeyOrder = entries.last.map { compareKeys(self.key(of: $0), key) < 0 } ?? true
            if writtenInKeyOrder && positions == nil {
                entries.append(append(key, value))
                return
            }
        }
        let index = indexPositions()
        // One probe for lookup and insert: a new key is added at the position it takes.
        let next = entries.count
        let existing = index.position(of: key, hash: hashKey(key), inserting: next) { compareKeys(self.key(of: entries[$0]), key) == 0 }
        let entry = append(key, value)
        if let existing {
            if openSavepoints > 0 { replaced.append((existing, entries[existing])) }
            entries[existing] = entry
            superseded += 1
        } else {
            entries.append(entry)
        }
    }

    /// Appends the write to `batch` and returns where it put it.
    @inline(__always)
    private func append(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) -> PendingEntry {
        let stored = batch.append(key: key, value: value)
        return PendingEntry(
            keyOffset: UInt32(stored.key), keyLength: UInt32(key.count), valueOffset: UInt32(stored.value),
            valueLength: value.map { UInt32($0.count) } ?? PendingEntry.deleted)
    }

    /// The key-to-position index (`positions`), built from `entries` the first time it is
    /// needed, with room for as many keys again (a transaction that wrote out of order once
    /// usually goes on doing so).
    private func indexPositions() -> TransactionKeyIndex {
        if let positions { return positions }
        let built = TransactionKeyIndex(capacity: max(2 * entries.count, 64))
        for position in entries.indices {
            // Keys written in ascending order are distinct: each is added, none is found.
            let key = self.key(of: entries[position])
            _ = built.position(of: key, hash: hashKey(key), inserting: position) { _ in false }
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
