// Closing a store releases its lock at once, even while another process holds a copy of the
// lock file's descriptor (as a process being spawned by another thread does until it
// execs).
#if os(Linux)
    import Foundation
    import Glibc
    import Testing
    import Strata

    @Suite struct LockReleaseTests {
        /// The descriptor this process has open on `path`, found through /proc.
        static func descriptor(of path: String) -> Int32? {
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
            for entry in entries {
                guard let fd = Int32(entry),
                    let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
                else { continue }
                if target == path { return fd }
            }
            return nil
        }

        @Test func closeReleasesTheLockWhileAChildHoldsACopyOfItsDescriptor() async throws {
            try await TestEnvironment.withTemporaryDirectory("lock-release") { path in
                let store = try Store(path: path)
                let lockPath = URL(fileURLWithPath: path).appendingPathComponent("LOCK").resolvingSymlinksInPath().path
                let fd = try #require(Self.descriptor(of: lockPath), "the store's LOCK descriptor was not found")
                // A child that holds a copy of the lock descriptor (as fd 100) for a few seconds.
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                posix_spawn_file_actions_adddup2(&actions, fd, 100)
                var child: pid_t = 0
                let arguments = ["/bin/sleep", "5"]
                var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
                defer { for pointer in argv { free(pointer) } }
                let spawned = posix_spawn(&child, "/bin/sleep", &actions, nil, &argv, environ)
                try #require(spawned == 0, "could not start /bin/sleep (error \(spawned))")
                defer {
                    kill(child, SIGKILL)
                    var status: Int32 = 0
                    waitpid(child, &status, 0)
                }
                try store.close()
                // Reopening must not wait for the child to exit.
                let reopened = try Store(path: path)
                try reopened.close()
            }
        }
    }
#endif
