// The one place that loads a peer's C library: dlopen at run time, dlsym into the typed
// function pointers its shim header declares (Sources/C*Peer/). Nothing is linked at build
// time, so a missing library only skips its engine, with the Debian package to install.
// A library target, so that every benchmark executable that measures a peer shares it.
// Why: docs/decisions/2026-11-21-benchmark-peers.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A loaded shared library. It is never closed: the engines' threads and static destructors
/// (RocksDB's) may run until the process exits.
public final class PeerLibrary: @unchecked Sendable {
    // @unchecked Sendable because: the handle is only read after init, and dlsym is
    // thread-safe.
    public let engine: String
    public let debianPackage: String
    /// The name that loaded (a soname, or the override's path).
    public let loadedName: String
    private let handle: UnsafeMutableRawPointer

    /// Thrown when the library is missing or lacks a function: the engine is skipped.
    public struct Unavailable: Error, CustomStringConvertible {
        public var engine: String
        public var debianPackage: String
        public var problem: String

        public var description: String {
            "\(engine) skipped: \(problem). Install Debian's \(debianPackage) (apt-get install \(debianPackage)), "
                + "or set \(PeerLibrary.overrideVariable(engine)) to the library's path."
        }
    }

    /// `STRATA_BENCH_SQLITE_LIBRARY` and so on: a library path to load instead of the
    /// system's, to measure another build of a peer.
    public static func overrideVariable(_ engine: String) -> String {
        "STRATA_BENCH_\(engine.uppercased())_LIBRARY"
    }

    /// Loads the first of `sonames` that opens, or the path in the engine's override
    /// variable when it is set.
    public init(engine: String, sonames: [String], debianPackage: String) throws {
        self.engine = engine
        self.debianPackage = debianPackage
        var candidates = sonames
        if let override = ProcessInfo.processInfo.environment[Self.overrideVariable(engine)], !override.isEmpty {
            candidates = [override]
        }
        var reasons: [String] = []
        for name in candidates {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                self.handle = handle
                self.loadedName = name
                return
            }
            reasons.append(dlerror().map { String(cString: $0) } ?? "\(name): not loadable")
        }
        throw Unavailable(engine: engine, debianPackage: debianPackage,
                          problem: "its C library could not be loaded (\(reasons.joined(separator: "; ")))")
    }

    /// The function `name`, typed as `Function` (one of the shim header's `..._fn` types).
    public func function<Function>(_ name: String, as _: Function.Type = Function.self) throws -> Function {
        guard let symbol = dlsym(handle, name) else {
            throw Unavailable(engine: engine, debianPackage: debianPackage,
                              problem: "\(loadedName) has no function \(name) (too old a version?)")
        }
        precondition(MemoryLayout<Function>.size == MemoryLayout<UnsafeMutableRawPointer>.size,
                     "\(Function.self) is not a C function pointer type")
        return unsafeBitCast(symbol, to: Function.self)
    }

    /// The version a loaded soname carries ("7.8" for librocksdb.so.7.8), for libraries
    /// without a version function; nil when an unversioned name loaded.
    public var sonameVersion: String? {
        let file = loadedName.split(separator: "/").last.map(String.init) ?? loadedName
        guard let marker = file.range(of: ".so.") else { return nil }
        return String(file[marker.upperBound...])
    }
}

/// An error a peer reported, with its own words.
public struct PeerError: Error, CustomStringConvertible {
    public var engine: String
    public var message: String

    public init(engine: String, message: String) {
        self.engine = engine
        self.message = message
    }

    public var description: String { "\(engine): \(message)" }
}
