/// What a ``StoreIO`` operation may do to the store: ``ReadOnly`` or ``ReadWrite``. The
/// access is part of the operation's type, so running a writing operation where only reads
/// are allowed (a snapshot, a read transaction) does not compile.
public protocol StoreAccess: Sendable {}

/// The access of an operation that only reads. Composed with `ReadOnly` it stays `ReadOnly`;
/// composed with ``ReadWrite`` it becomes `ReadWrite`.
public enum ReadOnly: StoreAccess {}

/// The access of an operation that may write. It runs only in a write transaction.
public enum ReadWrite: StoreAccess {}
