import Foundation
import StrataTestSupport

/// The `strata` executable that `swift test` builds next to the test bundle (the test target
/// depends on StrataCLI for that reason). `STRATA_CLI=/path/to/strata` overrides.
enum StrataBinary {
    static func url() throws -> URL {
        try BuiltExecutable.url(named: "strata", overrideVariable: "STRATA_CLI")
    }
}
