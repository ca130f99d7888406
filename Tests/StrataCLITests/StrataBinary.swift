import Foundation
import StrataTestSupport

/// The `strata` executable that `swift test` builds next to the test bundle (the test target
/// depends on StrataCLI for that reason). `STRATA_CLI=/path/to/strata` overrides.
enum StrataBinary {
    static func url() throws -> URL {
        try BuiltExecutable.url(named: "strata", overrideVariable: "STRATA_CLI")
    }
}

/// The `strata-fsck` executable, built next to the test bundle for the verifier tests (which
/// share the test product with these). `STRATA_FSCK=/path/to/strata-fsck` overrides.
enum StrataFsckBinary {
    static func url() throws -> URL {
        try BuiltExecutable.url(named: "strata-fsck", overrideVariable: "STRATA_FSCK")
    }
}
