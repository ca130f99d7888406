/// How durable a commit is when the write call returns.
public enum Durability: Sendable, Hashable {
    /// The commit is on stable storage: its WAL record has been written and `fdatasync` has
    /// returned. Concurrent synced writers share one sync (group commit). The default.
    case synced
    /// The commit's WAL record has been handed to the operating system. It survives the
    /// process crashing, but not the machine losing power. `Store.sync()` makes every such
    /// commit durable.
    case buffered
}
