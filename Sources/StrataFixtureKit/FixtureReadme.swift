/// The README of Fixtures/stores, generated from the catalog so the list of cases and their
/// expected results cannot drift from the fixtures themselves.
public enum FixtureReadme {
    public static let fileName = "README.md"

    public static func text(_ cases: [FixtureCase]) -> String {
        var out = """
            # Damaged-store fixtures

            Small Strata store directories, each the same clean store with one thing changed, for
            testing `strata-fsck` and the `StrataVerifier` library. Every file is written with the
            format module's own encoders, with fixed keys and values, so regenerating them gives the
            same bytes.

            Do not edit these files by hand. They, and this README, come from
            `Sources/StrataFixtureKit` (`FixtureCatalog.swift` lists the cases); to regenerate, run
            from the repository root:

            ```sh
            swift run strata-fixtures Fixtures/stores
            ```

            `Tests/StrataVerifierTests` regenerates every case into a temporary directory and fails
            if a single byte differs from the files checked in here, then checks that the verifier
            and `strata-fsck` report what the table below says. Run the check by hand on a copy
            (`strata-fsck` takes the store's lock, and `--repair` changes the files):

            ```sh
            copy="$(mktemp -d)/store" && cp -R Fixtures/stores/torn-wal-tail "$copy"
            swift run strata-fsck "$copy" --repair
            ```

            ## The clean store

            | file | what |
            |---|---|
            | `STRATA`, `LOCK` | identity file and lock file |
            | `seg-0000000002.sst` | level 1: `apple` to `fig`, sequences 1 to 6, over several 64-byte data blocks |
            | `seg-0000000004.sst` | level 0: `banana` to `kiwi`, sequences 7 to 10, with a tombstone |
            | `manifest-0000000003.log` | a snapshot adding segment 2 (log number 2, last sequence 6), then a flush adding segment 4 (log number 3, last sequence 10, next file number 5) |
            | `wal-0000000003.log` | sequences 11 and 12 |
            | `wal-0000000004.log` | sequences 13 and 14 |

            WAL files are not preallocated: a WAL segment that simply ends after its last record is
            valid.

            ## Cases

            Exit statuses add up as e2fsck's do: 0 clean, 1 problems were repaired, 4 problems left,
            8 the store could not be checked, 16 usage error.

            | case | what was changed | expected finding | severity | exit | exit with `--repair` |
            |---|---|---|---|---:|---:|

            """
        for fixture in cases {
            let code = fixture.expectedCode.map { "`\($0)`" + (fixture.expectedFile.map { " in `\($0)`" } ?? "") } ?? "none"
            let repair = fixture.exitStatusWithRepair.map { "\($0), then 0" } ?? "same"
            out += "| `\(fixture.name)` | \(fixture.damage) | \(code) | \(fixture.expectedSeverity ?? "") | \(fixture.exitStatus) | \(repair) |\n"
        }
        return out
    }
}
