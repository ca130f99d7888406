import Foundation

/// Where strata-fsck writes: the report to stdout, everything about the run to stderr.
enum Console {
    static func output(_ line: String) {
        print(line)
    }

    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
