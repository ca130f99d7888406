// Fuzz target `jsonlines`: a byte stream as `strata import` reads it, one JSON object a line
// (docs/fuzzing.md). `scripts/fuzz` compiles the CLI's line reader and JSON-lines parser
// into a module of their own for this, beside the two declarations of the Strata module they
// use (`Entry`, and `StoreLimits` taken from its source file), so the target does not need
// the engine.
import Foundation
import Strata

@testable import StrataCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum FuzzTarget {
    /// Splits the input into lines with the command's own `LineReader`, skips blank lines as
    /// it does, and decodes every other line. A line that decodes must encode (as `export`
    /// writes it) to a line that decodes to the same key and value.
    static func run(_ bytes: [UInt8]) {
        let descriptor = input(bytes)
        var reader = LineReader(descriptor: descriptor)
        let decoder = JSONDecoder()
        while let line = try? reader.next() {
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) { continue }
            guard let record = try? JSONLines.decodeRecord(line, using: decoder) else { continue }
            var written = JSONLines.encode(Entry(key: record.key, value: record.value))
            precondition(written.last == UInt8(ascii: "\n"), "an encoded JSON line does not end its line")
            written.removeLast()
            guard let again = try? JSONLines.decodeRecord(written, using: decoder) else {
                preconditionFailure("a decoded JSON line does not decode after encoding: \(String(decoding: written, as: UTF8.self))")
            }
            precondition(again.key == record.key && again.value == record.value, "a decoded JSON line decodes differently after encoding")
        }
    }

    /// A descriptor that reads `bytes` from the start: one unlinked temporary file, reused.
    nonisolated(unsafe) private static var file: Int32 = -1

    private static func input(_ bytes: [UInt8]) -> Int32 {
        if file < 0 {
            var template = Array((NSTemporaryDirectory() + "/strata-fuzz-jsonlines-XXXXXX").utf8CString)
            file = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            precondition(file >= 0, "cannot create a temporary file for the input")
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        }
        precondition(ftruncate(file, 0) == 0)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { pwrite(file, $0.baseAddress! + written, $0.count - written, off_t(written)) }
            precondition(count > 0, "cannot write the input to the temporary file")
            written += count
        }
        precondition(lseek(file, 0, SEEK_SET) == 0)
        return file
    }

    /// Lines `export` writes, and lines it never writes but `import` must take or refuse:
    /// escapes, base64, repeated and extra fields, values that are not strings, CRLF ends.
    static func seeds() throws -> [(String, [UInt8])] {
        let lines = [
            #"{"key":"a","value":"1"}"# + "\n" + #"{"key_base64":"AP8=","value_base64":""}"# + "\r\n\n  \t\n"
                + #"{"value":"v","key":"caf\u00e9 \ud83d\ude00 \n\"\\"}"#,
            #"{"key":"k","key":"k2","value":"v"}"# + "\n" + #"{"key":"k","value":"v","extra":[1,{"key":2}]}"#,
            #"{"key":"k","value":7}"# + "\n" + #"{"key":"","value":"x"}"# + "\n" + #"{"key_base64":"YWJj=","value":"x"}"#,
            #"{"k\u0065y":"a","value":"b","key":"c"}"# + "\n" + #"[{"key":"a","value":"b"}]"# + "\n" + "{}"
        ]
        return lines.enumerated().map { ("generated-\($0.offset).jsonl", Array($0.element.utf8)) }
    }
}
