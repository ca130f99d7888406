// The libFuzzer entry points every fuzz binary shares; `scripts/fuzz` compiles this file with
// one target's file (Fuzz/<target>.swift), which defines `FuzzTarget`. See docs/fuzzing.md.
import Foundation

/// libFuzzer calls this once per input. A null pointer stands for an empty input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzTarget.run(bytes)
    return 0
}

/// libFuzzer calls this once, before any input. With STRATA_FUZZ_WRITE_SEEDS set to a
/// directory, the binary writes the target's generated seeds there and exits: that is how
/// `scripts/fuzz seeds` regenerates them.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    guard let directory = ProcessInfo.processInfo.environment["STRATA_FUZZ_WRITE_SEEDS"] else { return 0 }
    do {
        for (name, bytes) in try FuzzTarget.seeds() {
            try Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
            print("wrote \(name) (\(bytes.count) bytes)")
        }
        exit(0)
    } catch {
        print("cannot write the seeds: \(error)")
        exit(1)
    }
}
