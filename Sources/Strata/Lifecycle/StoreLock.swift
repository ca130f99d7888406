import StrataIO

/// The one place that knows which file locks a store holds: today the `LOCK` file in the
/// store directory, taken with `flock` (not `fcntl`: an `fcntl` lock belongs to the process,
/// so a second open in the same process would succeed, and closing any descriptor of the
/// file would drop it). Opening takes it, `suspend()` releases it, `resume()` takes it
/// again, `close()` releases it for good.
///
/// A suspended app that holds a file lock in a shared container is killed by the system
/// (0xdead10cc), which is why suspension must be able to find and release every lock here.
///
/// Invariants:
/// 1. At most one `FileLock` is held at a time; `isHeld` is true exactly while it is.
/// 2. After `releaseForGood()` the lock is never taken again.
final class StoreLock: Sendable {
    static let fileName = "LOCK"

    private struct State {
        var held: (any FileLock)? = nil
        var finished = false
    }

    let directory: String
    private let fileSystem: any FileSystem
    private let state = Locked(State())

    init(directory: String, fileSystem: any FileSystem) {
        self.directory = directory
        self.fileSystem = fileSystem
    }

    var path: String { fileSystem.path(directory, StoreLock.fileName) }

    var isHeld: Bool { state.withLock { $0.held != nil } }

    /// Takes the lock without waiting. Throws `.locked`, naming the lock file, when another
    /// `Store` (in this process or another) holds it.
    func acquire() throws {
        try state.withLock { state in
            guard !state.finished else { throw StoreError.closed() }
            guard state.held == nil else { return }
            do {
                state.held = try fileSystem.lockFile(path)
            } catch let error as IOError where error.code == .wouldBlock {
                throw StoreError(
                    .locked,
                    "the store at \(directory) is in use by another Store, in this process or another (it holds the lock file \(path)); close or suspend that Store first",
                    file: path)
            } catch let error as IOError {
                throw StoreError(error, while: "locking the store")
            }
        }
    }

    /// Releases the lock if held; it can be taken again.
    func release() {
        let lock = state.withLock { state -> (any FileLock)? in
            defer { state.held = nil }
            return state.held
        }
        try? lock?.unlock()
    }

    /// Releases the lock and refuses to take it again (close).
    func releaseForGood() {
        let lock = state.withLock { state -> (any FileLock)? in
            defer {
                state.held = nil
                state.finished = true
            }
            return state.held
        }
        try? lock?.unlock()
    }

    func checkInvariants() {
        #if STRATA_INTERNAL_CHECKS
            state.withLock { state in
                precondition(!(state.finished && state.held != nil), "StoreLock invariant 2: a closed store holds its lock")
            }
        #endif
    }
}
