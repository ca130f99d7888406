// Fault injection by position: "fail the k-th operation with fault F". A dry run records the
// operations a workload makes (`recordOperations`), and a test then runs the workload again
// once per operation and per fault that operation can have, the fault aimed by index. The
// workload must make the same operations in the same order on every run (a store with its
// maintenance inline), so index k names the same moment each time; `faultOutcome` tells
// whether the fault met the operation it was aimed at.
//
// A fault takes no effect besides its error, as with the one-shot `failNext(_:code:)`, except
// a short write, which writes the first half of its bytes before failing, as a write the disk
// filled up during does (a POSIX `pwrite` loop gets a short count, then ENOSPC). A failed
// fdatasync keeps the file's unsynced changes pending: reads still see them, and a crash
// image may or may not keep them, as a page cache that still holds the dirty pages behaves;
// `syncErrorLosingPages` is the harsher Linux behaviour, where they are never synced.
import StrataIO

extension SimulatedFileSystem {
    /// A failure an operation can be made to have (`injectFault(_:atOperation:countingOnly:)`).
    /// EIO is reported as `IOError.Code.other`, as `IOError(errno:)` maps it; ENOSPC as
    /// `.noSpace`.
    public enum Fault: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// EIO from a read.
        case readError
        /// EIO from a write; nothing is written.
        case writeError
        /// ENOSPC from a write, a preallocation, or an open that creates its file; nothing
        /// happens.
        case diskFull
        /// A write that stores the first half of its bytes (rounded down), then fails with ENOSPC.
        case shortWrite
        /// EIO from fdatasync; nothing becomes durable, the changes stay pending.
        case syncError
        /// EIO from fdatasync, the changes then taken for written, as Linux does after a
        /// writeback error (it marks the pages clean): reads still see them, a crash that
        /// keeps the page cache keeps them, but no later sync makes them durable; only
        /// writing them again does.
        case syncErrorLosingPages
        /// EIO from the fsync of a directory; no entry becomes durable.
        case directorySyncError
        /// EIO from rename; nothing moves.
        case renameError
        /// EIO from unlink (`removeFile`); the file stays.
        case unlinkError
        /// EIO from an open, for reading or writing, creating or not.
        case openError
        /// EIO from a truncation or a preallocation.
        case resizeError
        /// EIO from an operation on names and sizes: stat (`kind`), a listing, fstat (`size`),
        /// mkdir, flock.
        case metadataError

        public var description: String { rawValue }

        /// The faults an operation of `kind` can have; `creates` tells whether an open made
        /// its file (only such an open can find the disk full).
        public static func applicable(to kind: OperationKind, creates: Bool = false) -> [Fault] {
            switch kind {
            case .read: [.readError]
            case .write: [.writeError, .diskFull, .shortWrite]
            case .sync: [.syncError, .syncErrorLosingPages]
            case .syncDirectory: [.directorySyncError]
            case .rename: [.renameError]
            case .removeFile: [.unlinkError]
            case .open: creates ? [.openError, .diskFull] : [.openError]
            case .truncate: [.resizeError]
            case .preallocate: [.resizeError, .diskFull]
            case .kind, .listDirectory, .size, .createDirectory, .lock: [.metadataError]
            }
        }

        /// Whether the fault fails the operation before it starts (every fault but a short
        /// write, a full disk at an open, which apply where the operation writes or creates,
        /// and a sync that loses its pages, which needs the file).
        var failsAtStart: Bool {
            switch self {
            case .shortWrite, .diskFull, .syncErrorLosingPages: false
            default: true
            }
        }

        var code: IOError.Code {
            switch self {
            case .diskFull, .shortWrite: .noSpace
            default: .other
            }
        }
    }

    /// One operation as `recordOperations` saw it.
    public struct OperationRecord: Sendable, Hashable, CustomStringConvertible {
        /// Its position among every operation since the file system was made (see
        /// `totalOperationCount`).
        public var index: Int
        public var kind: OperationKind
        /// The path it named (for a rename, "source -> destination").
        public var path: String
        /// An open, lock or mkdir that created its file or directory.
        public var creates: Bool

        /// The faults this operation can have.
        public var applicableFaults: [Fault] { Fault.applicable(to: kind, creates: creates) }

        public var description: String { "#\(index) \(kind)\(creates ? " (creates)" : "") \(path)" }
    }

    /// What became of the fault of `injectFault`.
    public enum FaultOutcome: Sendable, Hashable {
        /// The operation it is aimed at has not come yet.
        case waiting
        /// It failed this operation.
        case fired(OperationRecord)
        /// The operation it was aimed at cannot have it (a workload that did not repeat
        /// itself, or an aim taken from another run); nothing failed.
        case missed(OperationRecord)
    }

    /// Every operation of the file system, of any kind, begun so far: the ones that failed
    /// or crashed included, unlike `operationCount`. Closing a handle or releasing a lock is
    /// not an operation.
    public var totalOperationCount: Int {
        state.withLock { $0.totalOperations }
    }

    /// Starts (with an empty list) or stops writing down every operation as it begins; the
    /// list is `recordedOperations`. Off by default, since a long workload makes many.
    public func recordOperations(_ record: Bool) {
        state.withLock { $0.operationRecords = record ? [] : nil }
    }

    /// The operations since `recordOperations(true)`, in the order they began.
    public var recordedOperations: [OperationRecord] {
        state.withLock { $0.operationRecords ?? [] }
    }

    /// Makes one later operation fail with `fault`: the operation number `index` (0-based,
    /// counted from this call) among all operations, or among those of `kinds` only. When
    /// that operation cannot have the fault (see `Fault.applicable`), nothing fails and
    /// `faultOutcome` says `.missed`. One fault at a time: a new call replaces the last.
    public func injectFault(_ fault: Fault, atOperation index: Int, countingOnly kinds: Set<OperationKind>? = nil) {
        precondition(index >= 0, "negative operation index")
        state.withLock { state in
            state.faultPlan = FaultPlan(fault: fault, remaining: index, kinds: kinds)
            state.faultOutcome = .waiting
            state.armedFault = nil
        }
    }

    /// What became of the last `injectFault`, nil if none was made (or after `clearFaults`).
    public var faultOutcome: FaultOutcome? {
        state.withLock { state in
            // Armed, and its operation is over without reaching the point where it applies.
            if let armed = state.armedFault { return .missed(armed.record) }
            return state.faultOutcome
        }
    }

    /// Drops every fault not yet fired: `injectFault`'s and `failNext`'s. Crash injection
    /// (`failAfter`, `powerOff`) and read-only media stay as they are.
    public func clearFaults() {
        state.withLock { state in
            state.faultPlan = nil
            state.armedFault = nil
            state.faultOutcome = nil
            state.injectedFaults.removeAll()
        }
    }
}

/// The fault `injectFault` aims, and how many counted operations remain before its target.
struct FaultPlan {
    var fault: SimulatedFileSystem.Fault
    var remaining: Int
    var kinds: Set<SimulatedFileSystem.OperationKind>?
}

extension SimulatedState {
    /// Called by `begin` for each operation: counts it, writes it down when recording, and
    /// fires or arms an aimed fault. Throws the fault's error when it fails the operation
    /// at its start.
    mutating func countOperation(_ kind: SimulatedFileSystem.OperationKind, _ operation: String, _ path: String) throws {
        if let armed = armedFault {
            // The previous operation was armed but never reached the point where the fault
            // applies (an open that found its file): it missed.
            armedFault = nil
            faultOutcome = .missed(armed.record)
        }
        let record = SimulatedFileSystem.OperationRecord(index: totalOperations, kind: kind, path: path, creates: false)
        totalOperations += 1
        operationRecords?.append(record)
        guard var plan = faultPlan, plan.kinds?.contains(kind) ?? true else { return }
        guard plan.remaining == 0 else {
            plan.remaining -= 1
            faultPlan = plan
            return
        }
        faultPlan = nil
        guard SimulatedFileSystem.Fault.applicable(to: kind, creates: true).contains(plan.fault) else {
            faultOutcome = .missed(record)
            return
        }
        if plan.fault.failsAtStart {
            faultOutcome = .fired(record)
            throw ioError(plan.fault.code, operation, path, "injected fault (\(plan.fault))")
        }
        armedFault = (plan.fault, record)
    }

    /// Marks the operation under way as one that created its file or directory, in the
    /// record of it.
    mutating func noteCreation() {
        if let last = operationRecords?.indices.last { operationRecords![last].creates = true }
        if armedFault != nil { armedFault!.record.creates = true }
    }

    /// True, once, when the operation under way was armed with `fault`: it must fail now
    /// (the caller throws `armedFaultError`).
    mutating func takeArmedFault(_ fault: SimulatedFileSystem.Fault) -> Bool {
        guard let armed = armedFault, armed.fault == fault else { return false }
        armedFault = nil
        faultOutcome = .fired(armed.record)
        return true
    }

    func armedFaultError(_ fault: SimulatedFileSystem.Fault, _ operation: String, _ path: String) -> IOError {
        ioError(fault.code, operation, path, "injected fault (\(fault))")
    }
}
