/// A description of work against the store, run later in one transaction: the composable
/// unit that lets app code build reads and writes out of smaller functions without each one
/// opening its own transaction.
///
/// ```swift
/// @Sendable func addDog(_ name: String) -> StoreIO<ReadWrite, Void> { .put(dogKey(name), dogValue) }
/// let both = addDog("Rex").flatMap { addDog("Fido") }      // still one transaction
/// try store.run(both)
/// ```
///
/// Nothing runs until the operation is run: with ``Store/run(_:durability:)-89mf5`` (a write
/// transaction for a ``ReadWrite`` operation), ``Store/run(_:)-2ojmr`` (a snapshot read for a
/// ``ReadOnly`` one), their async and callback forms, ``Snapshot/run(_:)``, or `tx.run`
/// inside a transaction that is already open. If any part throws, nothing of the whole
/// composition is applied and the error comes back unchanged.
///
/// `Access` is ``ReadOnly`` or ``ReadWrite``. Composing two read-only operations gives a
/// read-only one; anything with a writing part is `ReadWrite`; ``readWrite`` lifts a
/// read-only operation explicitly. Running a `ReadWrite` operation in a snapshot or a read
/// transaction does not compile.
///
/// A `StoreIO` is `Sendable`: build it on one thread, run it on another. Compositions of any
/// depth run without growing the stack.
public struct StoreIO<Access: StoreAccess, Value>: @unchecked Sendable {
    // @unchecked Sendable: the step and its node tree are immutable once built, and every
    // closure in them was either given @Sendable by the caller or built here around such
    // closures and other nodes. Closures that capture intermediate values are made while the
    // operation runs, in its one transaction on one thread, and never leave it.
    let step: IOStep<Value>

    init(_ node: IONode) {
        step = .node(node)
    }

    init(primitive body: @escaping (IONode.Context) throws -> Value) {
        step = .primitive(body)
    }

    init(step: IOStep<Value>) {
        self.step = step
    }

    /// The operation as a node, to compose: a primitive gets one here.
    var node: IONode {
        switch step {
        case .primitive(let body): IONode(.primitive { context in try body(context) })
        case .node(let node): node
        case .put(let key, let value): IONode(.primitive { context in try context.writableTransaction.put(key, value) })
        }
    }

    /// Runs the operation against an open transaction.
    func run(in context: IONode.Context) throws -> Value {
        switch step {
        case .primitive(let body):
            return try body(context)
        case .put(let key, let value):
            try context.writableTransaction.put(key, value)
            // Only `StoreIO.put` makes this step, and its value type is Void.
            return () as! Value
        case .node(let node):
            // The tree's steps are built by this type's methods, which know each value's type.
            return try IOInterpreter.run(node, in: context) as! Value
        }
    }

    /// What the interpreter does next with this operation, made by a continuation inside a
    /// running one: a primitive runs at once, in the same transaction, and needs no node.
    fileprivate func proceed(in context: IONode.Context) throws -> IONode.Next {
        switch step {
        case .primitive(let body):
            return .value(try body(context))
        case .node(let node):
            return .node(node)
        case .put(let key, let value):
            try context.writableTransaction.put(key, value)
            return .value(())
        }
    }

    // MARK: Building

    /// An operation that reads nothing and gives `value`.
    public static func just(_ value: Value) -> StoreIO where Value: Sendable {
        StoreIO(primitive: { _ in value })
    }

    /// Transforms the value.
    public func map<NewValue>(_ transform: @escaping @Sendable (Value) throws -> NewValue) -> StoreIO<Access, NewValue> {
        StoreIO<Access, NewValue>(IONode(.then(node, { value, _ in .value(try transform(value as! Value)) })))
    }

    /// Runs the operation `next` makes of this one's value, in the same transaction.
    public func flatMap<NewValue>(_ next: @escaping @Sendable (Value) throws -> StoreIO<Access, NewValue>) -> StoreIO<Access, NewValue> {
        StoreIO<Access, NewValue>(IONode(.then(node, { value, context in try next(value as! Value).proceed(in: context) })))
    }

    /// Runs this operation, then `other`, and gives both values.
    public func zip<Other>(_ other: StoreIO<Access, Other>) -> StoreIO<Access, (Value, Other)> {
        StoreIO<Access, (Value, Other)>(Self.zipNode(node, other.node, Value.self, Other.self))
    }

    /// Runs each operation in order, in one transaction, and gives their values in order.
    public static func sequence(_ operations: [StoreIO<Access, Value>]) -> StoreIO<Access, [Value]> {
        // The operations are kept as they are: a run calls the primitives among them directly
        // and collects their values typed, allocating nothing per element.
        StoreIO<Access, [Value]>(IONode(.elements(start: { SequenceRun(operations) })))
    }

    static func zipNode<A, B>(_ first: IONode, _ second: IONode, _: A.Type, _: B.Type) -> IONode {
        IONode(.then(first, { a, _ in .node(IONode(.then(second, { b, _ in .value((a as! A, b as! B)) }))) }))
    }
}

/// What a ``StoreIO`` holds: a primitive's closure, kept typed and called directly, or a node
/// of a composition.
enum IOStep<Value> {
    case primitive((IONode.Context) throws -> Value)
    case node(IONode)
    /// A put held as its key and value rather than as a closure: compositions of many puts
    /// (a bulk update) then cost one allocation fewer per put. Its value is Void.
    case put([UInt8], [UInt8])
}

/// One run of a `StoreIO.sequence`. Its loop makes no array call per element: this code is
/// not specialised for `Value`, and there each such call would look up the array's type in
/// the runtime, which cost more than the rest of the step. It reads the operations through a
/// buffer pointer and writes the values in place, into memory the run owns.
private final class SequenceRun<Access: StoreAccess, Value>: IOElementsRun {
    private let operations: [StoreIO<Access, Value>]
    private let values: UnsafeMutablePointer<Value>
    /// How many values are written: also the position of the next operation to run.
    private var count = 0

    init(_ operations: [StoreIO<Access, Value>]) {
        self.operations = operations
        values = .allocate(capacity: operations.count)
    }

    deinit {
        values.deinitialize(count: count)
        values.deallocate()
    }

    func advance(in context: IONode.Context) throws -> IONode.Next {
        var count = self.count
        defer { self.count = count }
        let values = self.values
        let waiting: IONode? = try operations.withUnsafeBufferPointer { operations in
            while count < operations.count {
                switch operations[count].step {
                case .primitive(let body):
                    (values + count).initialize(to: try body(context))
                    count += 1
                case .node(let node):
                    return node
                case .put(let key, let value):
                    try context.writableTransaction.put(key, value)
                    count += 1
                }
            }
            return nil
        }
        if let waiting { return .node(waiting) }
        let result = [Value](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress { base.moveInitialize(from: values, count: count) }
            initialized = count
        }
        count = 0
        return .value(result)
    }

    func receive(_ value: Any) {
        (values + count).initialize(to: value as! Value)
        count += 1
    }
}

// MARK: Mixing read-only and writing operations

extension StoreIO where Access == ReadOnly {
    /// This read-only operation, typed as one that may write, to compose or run where a
    /// ``ReadWrite`` operation is expected.
    public var readWrite: StoreIO<ReadWrite, Value> { StoreIO<ReadWrite, Value>(step: step) }

    /// Runs the writing operation `next` makes of this one's value: the composition writes.
    // Disfavoured, so a composition whose parts all have one access picks the same-access
    // form without ambiguity (`rw.flatMap { n in .just(n + 1) }`).
    @_disfavoredOverload
    public func flatMap<NewValue>(_ next: @escaping @Sendable (Value) throws -> StoreIO<ReadWrite, NewValue>) -> StoreIO<ReadWrite, NewValue> {
        readWrite.flatMap(next)
    }

    /// Runs this operation, then the writing `other`: the composition writes.
    @_disfavoredOverload
    public func zip<Other>(_ other: StoreIO<ReadWrite, Other>) -> StoreIO<ReadWrite, (Value, Other)> {
        readWrite.zip(other)
    }
}

extension StoreIO where Access == ReadWrite {
    /// Runs the read-only operation `next` makes of this one's value.
    @_disfavoredOverload
    public func flatMap<NewValue>(_ next: @escaping @Sendable (Value) throws -> StoreIO<ReadOnly, NewValue>) -> StoreIO<ReadWrite, NewValue> {
        flatMap { value in try next(value).readWrite }
    }

    /// Runs this operation, then the read-only `other`.
    @_disfavoredOverload
    public func zip<Other>(_ other: StoreIO<ReadOnly, Other>) -> StoreIO<ReadWrite, (Value, Other)> {
        zip(other.readWrite)
    }
}
