import Dispatch
import Foundation
import StrataIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A serial queue of jobs run by one thread of its own, at a lower CPU priority than the
/// threads that read and write: flushes and compactions are work the store can defer, and on
/// a machine with few cores a merge that runs at full priority takes its time slices from the
/// readers. Lowering a thread of the shared dispatch pool instead would be unsafe, since an
/// unprivileged process cannot raise a thread's priority back.
///
/// Invariants:
/// 1. Jobs run one at a time, in the order they were queued, on this object's thread only.
/// 2. The thread holds the job list, not this object; when this object goes, the thread runs
///    the jobs already queued and ends.
final class BackgroundThread: Sendable {
    /// The nice value the thread runs at on Linux (0 is normal, 19 the lowest). At 10 the
    /// scheduler gives it about a tenth of a core that a normal thread also wants, and all of
    /// a core nobody else wants.
    static let linuxNiceness: Int32 = 10

    private enum Job {
        case run(@Sendable () -> Void)
        case stop
    }

    private final class Jobs: Sendable {
        let queue = Locked<[Job]>([])
        let ready = DispatchSemaphore(value: 0)
        let threadID = Locked<UInt64?>(nil)
        /// Signalled once, when the thread's loop ends.
        let ended = DispatchSemaphore(value: 0)

        func push(_ job: Job) {
            queue.withLock { $0.append(job) }
            ready.signal()
        }

        /// The thread's loop (invariant 1).
        func drain() {
            threadID.withLock { $0 = BackgroundThread.currentThreadID() }
            while true {
                ready.wait()
                guard let job = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                switch job {
                case .run(let body): body()
                case .stop:
                    ended.signal()
                    return
                }
            }
        }
    }

    private let jobs = Jobs()

    init(name: String) {
        let jobs = self.jobs
        let thread = Thread {
            #if os(Linux)
                // Per thread on Linux: `who` 0 is the calling thread. Failure leaves the normal
                // priority, which is only slower for readers.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, BackgroundThread.linuxNiceness)
            #endif
            jobs.drain()
        }
        thread.name = name
        #if !os(Linux)
            thread.qualityOfService = .utility
        #endif
        thread.start()
    }

    deinit {
        jobs.push(.stop)
    }

    /// Queues `body` and returns at once.
    func async(_ body: @escaping @Sendable () -> Void) {
        jobs.push(.run(body))
    }

    /// Runs `body` on the thread and waits for it; on the thread itself, runs it directly.
    func sync<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if isCurrent { return try body() }
        let done = DispatchSemaphore(value: 0)
        let result = withoutActuallyEscaping(body) { escapable -> Result<T, E> in
            let call = SyncCall(escapable)
            jobs.push(
                .run {
                    call.run()
                    done.signal()
                })
            done.wait()
            return call.result!
        }
        return try result.get()
    }

    /// Signalled when the thread ends (after this object is gone and the jobs queued before
    /// that have run). Holding it does not keep this object alive; for tests.
    var ended: DispatchSemaphore { jobs.ended }

    /// Whether the caller runs on this object's thread.
    var isCurrent: Bool {
        jobs.threadID.withLock { $0 } == BackgroundThread.currentThreadID()
    }

    private static func currentThreadID() -> UInt64 {
        #if os(Linux)
            return UInt64(pthread_self())
        #else
            return UInt64(UInt(bitPattern: pthread_self()))
        #endif
    }
}

/// One `sync` call handed to the thread. The body is dropped before the caller is woken:
/// `withoutActuallyEscaping` requires that nothing holds it once the caller returns. The
/// caller waits on a semaphore the thread signals after `run`, which orders the accesses.
private final class SyncCall<T, E: Error>: @unchecked Sendable {
    private var body: (() throws(E) -> T)?
    var result: Result<T, E>?

    init(_ body: @escaping () throws(E) -> T) {
        self.body = body
    }

    func run() {
        guard let body else { return }
        self.body = nil
        result = Result { () throws(E) -> T in try body() }
    }
}
