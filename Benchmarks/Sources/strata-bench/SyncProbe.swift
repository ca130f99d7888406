import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many durable commits this machine's disk allows, measured without any engine: the
/// ceiling fillsync and syncconc8 are judged against (docs/benchmarks.md). Each round writes
/// what one group commit would (`commits` records of `recordBytes`) at the end of the log and
/// makes it durable with one fdatasync, the way a log-structured engine's writer does.
///
/// Three ways to lay out the log file, because the file system's work per fdatasync differs:
/// - `append`: the file grows with each write, so each fdatasync also makes the new size
///   durable;
/// - `fallocate`: space reserved ahead with posix_fallocate (unwritten extents), so each
///   write turns part of an extent into written data, which the fdatasync must journal;
/// - `overwrite`: zeros written ahead and synced, so a write changes data only and the
///   fdatasync has no metadata to make durable.
enum SyncProbe {
    enum Layout: String, CaseIterable {
        case append, fallocate, overwrite
        /// `writers` threads sharing each fdatasync (`measureThreads`), file as `fallocate`,
        /// the waiting ones asleep.
        case threads
        /// The same, the waiting ones polling (yielding their core between looks) instead.
        case polling
    }

    struct Figure {
        var layout: Layout
        /// Commits per fdatasync: what each round wrote, or for `threads` the writers.
        var commitsPerSync: Int
        var syncsPerSecond: Double
        var commitsPerSecond: Double

        init(layout: Layout, commitsPerSync: Int, syncsPerSecond: Double, commitsPerSecond: Double? = nil) {
            self.layout = layout
            self.commitsPerSync = commitsPerSync
            self.syncsPerSecond = syncsPerSecond
            self.commitsPerSecond = commitsPerSecond ?? syncsPerSecond * Double(commitsPerSync)
        }
    }

    /// Rounds of `commits` records each, for about `seconds`, in a fresh file in `directory`.
    static func measure(_ layout: Layout, commits: Int, recordBytes: Int, seconds: Double, directory: String) throws -> Figure {
        let reserve = 64 << 20
        return try withProbeFile(directory + "/sync-probe-\(layout.rawValue)-\(commits)", layout: layout, reserve: reserve) { descriptor in
            try oneThread(descriptor, commits: commits, recordBytes: recordBytes, seconds: seconds, reserve: reserve, layout: layout)
        }
    }

    /// A fresh file at `path`, laid out as `layout` over `reserve` bytes and synced, for
    /// `body`; closed and removed afterwards.
    static func withProbeFile<T>(_ path: String, layout: Layout, reserve: Int, _ body: (Int32) throws -> T) throws -> T {
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ProbeError("open \(path): \(String(cString: strerror(errno)))") }
        defer {
            close(descriptor)
            unlink(path)
        }
        switch layout {
        case .append:
            break
        case .fallocate, .threads, .polling:
            guard posix_fallocate(descriptor, 0, off_t(reserve)) == 0 else { throw ProbeError("posix_fallocate failed") }
        case .overwrite:
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            for offset in stride(from: 0, to: reserve, by: zeros.count) {
                guard pwrite(descriptor, zeros, zeros.count, off_t(offset)) == zeros.count else { throw ProbeError("pwrite failed") }
            }
        }
        guard fsync(descriptor) == 0 else { throw ProbeError("fsync failed") }
        return try body(descriptor)
    }

    /// One thread's rounds of `commits` records each, one fdatasync a round.
    private static func oneThread(_ descriptor: Int32, commits: Int, recordBytes: Int, seconds: Double, reserve: Int, layout: Layout) throws -> Figure {
        let group = [UInt8](repeating: 0x5A, count: commits * recordBytes)
        var offset = 0
        var rounds = 0
        let start = DispatchTime.now().uptimeNanoseconds
        var elapsed = 0.0
        while elapsed < seconds && offset + group.count <= reserve {
            guard pwrite(descriptor, group, group.count, off_t(offset)) == group.count else { throw ProbeError("pwrite failed") }
            guard fdatasync(descriptor) == 0 else { throw ProbeError("fdatasync failed") }
            offset += group.count
            rounds += 1
            elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        return Figure(layout: layout, commitsPerSync: commits, syncsPerSecond: Double(rounds) / elapsed)
    }

    /// Every layout, for one commit per sync (fillsync) and for `writers` (syncconc8), then
    /// `writers` real threads sharing each fdatasync in the WAL's layout.
    static func run(directory: String, writers: Int, recordBytes: Int, seconds: Double) throws -> [Figure] {
        var figures: [Figure] = []
        for commits in [1, writers] {
            for layout in [Layout.append, .fallocate, .overwrite] {
                figures.append(try measure(layout, commits: commits, recordBytes: recordBytes, seconds: seconds, directory: directory))
            }
        }
        for polls in [false, true] {
            figures.append(try measureThreads(writers: writers, polls: polls, recordBytes: recordBytes, seconds: seconds, directory: directory))
        }
        return figures
    }

    /// `writers` threads, each committing one record after another and waiting for it to be
    /// durable, with the least machinery group commit needs and every group full: under one
    /// mutex a thread adds its record to the pending bytes; if no fdatasync is under way it
    /// becomes the leader, waits until every running writer has a record pending (the probe
    /// knows how many there are; an engine can only guess), writes them with one `pwrite`,
    /// fdatasyncs, marks them durable and wakes the others (a broadcast); else it sleeps until
    /// a leader has made its record durable. What separates this figure from
    /// `measure(_:commits: writers)` is the threads themselves: eight waiters woken after each
    /// fdatasync, on however many cores the machine has, before the next group can form. The
    /// file is reserved ahead as the WAL's is (`fallocate`). `polls`: a waiting thread yields
    /// its core and looks again instead of sleeping, so no core idles through the fdatasync.
    static func measureThreads(writers: Int, polls: Bool, recordBytes: Int, seconds: Double, directory: String) throws -> Figure {
        let reserve = 256 << 20
        let layout: Layout = polls ? .polling : .threads
        return try withProbeFile(directory + "/sync-probe-\(layout.rawValue)-\(writers)", layout: layout, reserve: reserve) { descriptor in
            try threads(descriptor, writers: writers, polls: polls, recordBytes: recordBytes, seconds: seconds, reserve: reserve)
        }
    }

    /// `writers` threads committing through one `GroupCommit` for about `seconds`.
    private static func threads(_ descriptor: Int32, writers: Int, polls: Bool, recordBytes: Int, seconds: Double, reserve: Int) throws -> Figure {
        let group = GroupCommit(descriptor: descriptor, reserve: reserve, writers: writers, polls: polls)
        let record = [UInt8](repeating: 0x5A, count: recordBytes)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let start = DispatchTime.now().uptimeNanoseconds
        let done = DispatchGroup()
        for _ in 0..<writers {
            done.enter()
            let thread = Thread {
                while DispatchTime.now().uptimeNanoseconds < deadline, group.commit(record) {}
                group.leave()
                done.leave()
            }
            thread.start()
        }
        done.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let (commits, syncs, failed) = group.totals()
        if failed { throw ProbeError("pwrite or fdatasync failed, or the reserved space ran out") }
        return Figure(
            layout: polls ? .polling : .threads, commitsPerSync: writers, syncsPerSecond: Double(syncs) / elapsed,
            commitsPerSecond: Double(commits) / elapsed)
    }

    /// The shared state of `measureThreads`: the records waiting for a leader, and how far the
    /// file is durable. Every field is guarded by `mutex`; `wake` is broadcast after each
    /// fdatasync.
    final class GroupCommit: @unchecked Sendable {
        // @unchecked Sendable: every stored var is read and written with `mutex` held.
        // Allocated, not stored inline: a pthread mutex must not move.
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private let descriptor: Int32
        private let reserve: Int
        private var pending: [UInt8] = []
        private var offset = 0
        private var appended = 0
        private var durable = 0
        private var syncing = false
        private var syncs = 0
        private var failed = false
        /// Writers still committing; a leader waits for this many records.
        private var running: Int
        private var pendingRecords = 0

        private let polls: Bool

        init(descriptor: Int32, reserve: Int, writers: Int, polls: Bool) {
            self.polls = polls
            self.descriptor = descriptor
            self.reserve = reserve
            self.running = writers
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(wake, nil)
        }

        deinit {
            pthread_cond_destroy(wake)
            pthread_mutex_destroy(mutex)
            wake.deallocate()
            mutex.deallocate()
        }

        /// Commits one record and waits until it is durable; false once anything failed.
        func commit(_ record: [UInt8]) -> Bool {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            pending.append(contentsOf: record)
            appended += 1
            pendingRecords += 1
            let ticket = appended
            // A leader waiting for a full group may be waiting for this record.
            if pendingRecords >= running { pthread_cond_broadcast(wake) }
            while durable < ticket && !failed {
                guard !syncing else {
                    if polls {
                        pthread_mutex_unlock(mutex)
                        sched_yield()
                        pthread_mutex_lock(mutex)
                    } else {
                        pthread_cond_wait(wake, mutex)
                    }
                    continue
                }
                // Lead: wait for a record from every running writer, then sync them all.
                syncing = true
                while pendingRecords < running && !failed { pthread_cond_wait(wake, mutex) }
                let bytes = pending
                pendingRecords = 0
                let covers = appended
                let at = offset
                pending.removeAll(keepingCapacity: true)
                offset += bytes.count
                pthread_mutex_unlock(mutex)
                let ok =
                    at + bytes.count <= reserve
                    && bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(at)) } == bytes.count
                    && fdatasync(descriptor) == 0
                pthread_mutex_lock(mutex)
                syncing = false
                syncs += 1
                if ok { durable = covers } else { failed = true }
                pthread_cond_broadcast(wake)
            }
            return !failed
        }

        /// A writer stops committing: leaders stop waiting for its records.
        func leave() {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            running -= 1
            pthread_cond_broadcast(wake)
        }

        func totals() -> (commits: Int, syncs: Int, failed: Bool) {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return (durable, syncs, failed)
        }
    }

    struct ProbeError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
