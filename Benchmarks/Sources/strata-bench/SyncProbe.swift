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
    }

    struct Figure {
        var layout: Layout
        var commitsPerSync: Int
        var syncsPerSecond: Double
        var commitsPerSecond: Double { syncsPerSecond * Double(commitsPerSync) }
    }

    /// Rounds of `commits` records each, for about `seconds`, in a fresh file in `directory`.
    static func measure(_ layout: Layout, commits: Int, recordBytes: Int, seconds: Double, directory: String) throws -> Figure {
        let path = directory + "/sync-probe-\(layout.rawValue)-\(commits)"
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ProbeError("open \(path): \(String(cString: strerror(errno)))") }
        defer {
            close(descriptor)
            unlink(path)
        }
        let reserve = 64 << 20
        switch layout {
        case .append:
            break
        case .fallocate:
            guard posix_fallocate(descriptor, 0, off_t(reserve)) == 0 else { throw ProbeError("posix_fallocate failed") }
        case .overwrite:
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            for offset in stride(from: 0, to: reserve, by: zeros.count) {
                guard pwrite(descriptor, zeros, zeros.count, off_t(offset)) == zeros.count else { throw ProbeError("pwrite failed") }
            }
        }
        guard fsync(descriptor) == 0 else { throw ProbeError("fsync failed") }

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

    /// Every layout, for one commit per sync (fillsync) and for `writers` (syncconc8).
    static func run(directory: String, writers: Int, recordBytes: Int, seconds: Double) throws -> [Figure] {
        var figures: [Figure] = []
        for commits in [1, writers] {
            for layout in Layout.allCases {
                figures.append(try measure(layout, commits: commits, recordBytes: recordBytes, seconds: seconds, directory: directory))
            }
        }
        return figures
    }

    struct ProbeError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
