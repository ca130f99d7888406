/// A description of work against the store, run later in one transaction: the composable
/// unit that lets app code build reads and writes out of smaller functions without each one
/// opening its own transaction.
///
/// ```swift
/// func addDog(_ name: String) -> StoreIO<ReadWrite, Void> { .put(dogKey(name), dogValue) }
/// let both = addDog("Rex").flatMap { addDog("Fido") }      // still one transaction
/// try store.run(both)
/// ```
///
/// Nothing runs until the operation is run: with ``Store/run(_:durability:)`` (a write
/// transaction for a ``ReadWrite`` operation), ``Store/run(_:)`` (a snapshot read for a
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
    // @unchecked Sendable: the node tree is immutable once built, and every closure in it was
    // either given @Sendable by the caller or built here around such closures and other
    // nodes. Closures that capture intermediate values are made while the operation runs, in
    // its one transaction on one thread, and never leave it.
    let node: IONode

    init(_ node: IONode) {
        self.node = node
    }

    init(primitive body: @escaping (IONode.Context) throws -> Value) {
        node = IONode(.primitive { context in try body(context) })
    }

    /// Runs the operation against an open transaction.
    func run(in context: IONode.Context) throws -> Value {
        // The tree's steps are built by this type's methods, which know each value's type.
        try IOInterpreter.run(node, in: context) as! Value
    }

    // MARK: Building

    /// An operation that reads nothing and gives `value`.
    public static func just(_ value: Value) -> StoreIO where Value: Sendable {
        StoreIO(IONode(.pure(value)))
    }

    /// Transforms the value.
    public func map<NewValue>(_ transform: @escaping @Sendable (Value) throws -> NewValue) -> StoreIO<Access, NewValue> {
        StoreIO<Access, NewValue>(IONode(.bind(node, { value in IONode(.pure(try transform(value as! Value))) })))
    }

    /// Runs the operation `next` makes of this one's value, in the same transaction.
    public func flatMap<NewValue>(_ next: @escaping @Sendable (Value) throws -> StoreIO<Access, NewValue>) -> StoreIO<Access, NewValue> {
        StoreIO<Access, NewValue>(IONode(.bind(node, { value in try next(value as! Value).node })))
    }

    /// Runs this operation, then `other`, and gives both values.
    public func zip<Other>(_ other: StoreIO<Access, Other>) -> StoreIO<Access, (Value, Other)> {
        StoreIO<Access, (Value, Other)>(Self.zipNode(node, other.node, Value.self, Other.self))
    }

    /// Runs each operation in order, in one transaction, and gives their values in order.
    public static func sequence(_ operations: [StoreIO<Access, Value>]) -> StoreIO<Access, [Value]> {
        StoreIO<Access, [Value]>(IONode(.sequence(operations.map(\.node), finish: { values in values.map { $0 as! Value } })))
    }

    static func zipNode<A, B>(_ first: IONode, _ second: IONode, _: A.Type, _: B.Type) -> IONode {
        IONode(.bind(first, { a in IONode(.bind(second, { b in IONode(.pure((a as! A, b as! B))) })) }))
    }
}

// MARK: Mixing read-only and writing operations

extension StoreIO where Access == ReadOnly {
    /// This read-only operation, typed as one that may write, to compose or run where a
    /// ``ReadWrite`` operation is expected.
    public var readWrite: StoreIO<ReadWrite, Value> { StoreIO<ReadWrite, Value>(node) }

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
