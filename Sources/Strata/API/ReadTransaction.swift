/// A read of one consistent snapshot. Handed to the closure of ``Store/read(_:)-5aray`` and
/// ``Snapshot/read(_:)``; do not keep it after the closure returns.
public struct ReadTransaction: ReadableTransaction {
    let view: ReadView
    let errors: ReadErrors

    init(view: ReadView, errors: ReadErrors = ReadErrors()) {
        self.view = view
        self.errors = errors
    }

    /// Runs `body` on a transaction of `view` whose error record is this thread's spare
    /// (`ReadScratch`), handed back afterwards: a read then allocates nothing of its own.
    static func run<T>(on view: ReadView, _ body: (ReadTransaction) throws -> T) throws -> T {
        var errors = ReadScratch.takeErrors()
        defer { ReadScratch.giveBack(&errors) }
        return try ReadTransaction(view: view, errors: errors).run(body)
    }

    public var version: UInt64 { view.sequence }

    /// Runs `body`, then throws the first error a scan met while being iterated, if any: a
    /// scan whose file could not be read ends early, and its result must not be trusted.
    func run<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        let result = try body(self)
        try errors.check()
        return result
    }

    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try KeyValidation.checkKey(key)
        return try view.version.get(key, at: view.sequence)
    }

    @inlinable
    public func withUnsafeValue<R>(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> R) throws -> R {
        // Inlinable for the caller's `R`, as `Store.read` is; the work is `withValueBytes`.
        var result: R? = nil
        try withValueBytes(key) { result = try body($0) }
        guard let result else { preconditionFailure("withUnsafeValue: the read returned without running its body") }
        return result
    }

    /// The work of `withUnsafeValue`: `body` on the borrowed bytes of `key`'s value.
    @usableFromInline
    func withValueBytes(_ key: [UInt8], _ body: (_ value: UnsafeRawBufferPointer?) throws -> Void) throws {
        try KeyValidation.checkKey(key)
        try key.withUnsafeBytes { try view.version.borrowValue($0, at: view.sequence) }.withBytes(body)
    }

    public func scan(from: [UInt8], to: [UInt8]?, reverse: Bool) throws -> Scan {
        try KeyValidation.checkBound(from)
        if let to { try KeyValidation.checkBound(to) }
        return Scan(version: view.version, sequence: view.sequence, lower: from, upper: to, reverse: reverse, overlay: [], errors: errors)
    }
}

// Transactions stay on the thread that runs their closure.
@available(*, unavailable)
extension ReadTransaction: Sendable {}
