import Foundation
import Strata
import StrataTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every file of a directory and its bytes.
private func directoryContents(_ path: String) throws -> [String: [UInt8]] {
    var contents: [String: [UInt8]] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
        contents[name] = try fileBytes(atPath: path + "/" + name)
    }
    return contents
}

/// The `strata` subcommands, run as real processes.
@Suite("strata command line")
struct CLICommandTests {
    private func jsonLines(_ records: [(key: String, value: String)]) -> [UInt8] {
        Array(records.map { #"{"key":"\#($0.key)","value":"\#($0.value)"}"# + "\n" }.joined().utf8)
    }

    @Test func putGetDeleteRoundTrip() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let put = try await strata("put", store, "greeting", "hello world")
            #expect(put.status == 0, "\(put)")
            #expect(put.stdout.isEmpty && put.stderr.isEmpty, "\(put)")

            let get = try await strata("get", store, "greeting")
            #expect(get.status == 0, "\(get)")
            #expect(get.output == "hello world\n")

            let overwrite = try await strata("put", store, "greeting", "bonjour ☀︎")
            #expect(overwrite.status == 0, "\(overwrite)")
            #expect(try await strata("get", store, "greeting").output == "bonjour ☀︎\n")

            let delete = try await strata("delete", store, "greeting")
            #expect(delete.status == 0, "\(delete)")
            let gone = try await strata("get", store, "greeting")
            #expect(gone.status == 1, "\(gone)")

            // Deleting a key with no value is not an error.
            #expect(try await strata("delete", store, "never-set").status == 0)
        }
    }

    @Test func base64ArgumentsCarryArbitraryBytes() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let key = Data([0xFF, 0x00, 0x80]).base64EncodedString()
            let value = Data([0x00, 0x01, 0xFE, 0x0A]).base64EncodedString()
            let put = try await strata("put", store, key, value, "--base64")
            #expect(put.status == 0, "\(put)")
            let get = try await strata("get", store, key, "--base64")
            #expect(get.status == 0, "\(get)")
            #expect(get.output == value + "\n")

            let raw = try await strata("get", store, key, "--base64")
            #expect(raw.stdout == Array(value.utf8) + [0x0A])

            let bad = try await strata("get", store, "not base64!", "--base64")
            #expect(bad.status != 0, "\(bad)")
            #expect(bad.errorLines.count == 1 && bad.errorText.hasPrefix("strata: "), "\(bad)")
        }
    }

    @Test func getOfMissingKeyExitsOneWithOneLine() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            #expect(try await strata("put", store, "a", "1").status == 0)
            let result = try await strata("get", store, "missing")
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.errorLines.count == 1, "\(result)")
            #expect(result.errorText.hasPrefix("strata: "), "\(result)")
            #expect(result.errorText.contains("missing"), "\(result)")
        }
    }

    @Test func scanHonoursPrefixRangeLimitAndReverse() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            var records: [(key: String, value: String)] = []
            for i in 0..<5 { records.append(("apple:\(i)", "a\(i)")) }
            for i in 0..<5 { records.append(("banana:\(i)", "b\(i)")) }
            records.append(("cherry", "c"))
            let load = try await strata("import", store, input: jsonLines(records))
            #expect(load.status == 0, "\(load)")

            func keys(_ arguments: String...) async throws -> [String] {
                let result = try await strata(["scan", store] + arguments)
                #expect(result.status == 0, "\(result)")
                return try result.outputLines.map { line in
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "\(line)")
                    let key = try #require(object["key"], "\(line)")
                    // Every value in this store is its key's initial plus its index.
                    #expect(object["value"] == records.first { $0.key == key }?.value, "\(line)")
                    return key
                }
            }

            #expect(try await keys() == records.map(\.key))
            #expect(try await keys("--prefix", "banana:") == (0..<5).map { "banana:\($0)" })
            #expect(try await keys("--from", "apple:3", "--to", "banana:2") == ["apple:3", "apple:4", "banana:0", "banana:1"])
            #expect(try await keys("--prefix", "apple:", "--limit", "2") == ["apple:0", "apple:1"])
            #expect(try await keys("--prefix", "apple:", "--reverse", "--limit", "3") == ["apple:4", "apple:3", "apple:2"])
            #expect(try await keys("--reverse") == records.map(\.key).reversed())
            #expect(try await keys("--prefix", "banana:", "--from", "banana:3") == ["banana:3", "banana:4"])
            #expect(try await keys("--prefix", "banana:", "--to", "banana:1") == ["banana:0"])
            #expect(try await keys("--from", "banana:4") == ["banana:4", "cherry"])
            #expect(try await keys("--prefix", "durian") == [])
            #expect(try await keys("--from", "z", "--to", "a") == [])
            #expect(try await keys("--limit", "0") == [])
        }
    }

    @Test func importThenExportRoundTripsIncludingNonUTF8Bytes() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let binaryKey: [UInt8] = [0x6B, 0xFF, 0xFE, 0x00]  // not UTF-8
            let binaryValue: [UInt8] = [0xC3, 0x28, 0x00]  // not UTF-8 either
            let input = """
                {"key":"plain","value":"text"}
                {"key_base64":"\(Data(binaryKey).base64EncodedString())","value":"binary key"}
                {"key":"binary value","value_base64":"\(Data(binaryValue).base64EncodedString())"}
                {"key":"escapes \\"q\\" \\\\ \\n\\t\\u0001","value":"caf\\u00e9 ☕"}

                {"key_base64":"\(Data("utf8 via base64".utf8).base64EncodedString())","value":""}
                """
            let load = try await strata("import", store, input: Array(input.utf8))
            #expect(load.status == 0, "\(load)")
            #expect(load.outputLines == ["ack 5"], "\(load)")

            let export = try await strata("export", store)
            #expect(export.status == 0, "\(export)")
            let lines = export.outputLines
            #expect(lines.count == 5, "\(export)")
            // Key order is byte order; UTF-8 bytes are written as text, others as base64.
            let expected: [[String: String]] = [
                ["key": "binary value", "value_base64": Data(binaryValue).base64EncodedString()],
                ["key": "escapes \"q\" \\ \n\t\u{01}", "value": "café ☕"],
                ["key_base64": Data(binaryKey).base64EncodedString(), "value": "binary key"],
                ["key": "plain", "value": "text"],
                ["key": "utf8 via base64", "value": ""]
            ]
            let decoded = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String], "\($0)") }
            #expect(decoded == expected, "\(export)")

            // The export imports into a fresh store and exports identically.
            let copy = dir.path("copy.strata")
            let reload = try await strata("import", copy, input: export.stdout)
            #expect(reload.status == 0, "\(reload)")
            let again = try await strata("export", copy)
            #expect(again.stdout == export.stdout, "\(again)")

            // In-process check that the bytes are exactly what was imported.
            let opened = try Store(path: copy, options: testStoreOptions)
            defer { try? opened.close() }
            #expect(try await opened.read { try $0.get(binaryKey) } == Array("binary key".utf8))
            #expect(try await opened.read { try $0.get("binary value") } == binaryValue)
        }
    }

    @Test func importAcknowledgesEachBatch() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let records = (0..<10).map { (key: "k\($0)", value: "v\($0)") }
            let result = try await strata("import", store, "--batch", "3", "--durability", "buffered", input: jsonLines(records))
            #expect(result.status == 0, "\(result)")
            #expect(result.outputLines == ["ack 3", "ack 6", "ack 9", "ack 10"], "\(result)")

            let exact = try await strata("import", store, "--batch", "5", input: jsonLines(records))
            #expect(exact.outputLines == ["ack 5", "ack 10"], "\(exact)")
            let empty = try await strata("import", store, input: [])
            #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty)")
        }
    }

    @Test func malformedImportLineNamesItsLineAndKeepsEarlierBatches() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            // Line 10 is bad; the blank line 5 still counts as a line.
            var lines = (0..<4).map { #"{"key":"k\#($0)","value":"v\#($0)"}"# }
            lines.append("")
            lines += (4..<7).map { #"{"key":"k\#($0)","value":"v\#($0)"}"# }
            lines.append(#"{"key":"k7","value":"v7"}"#)
            lines.append(#"{"key":"k8"}"#)
            lines.append(#"{"key":"k9","value":"v9"}"#)
            let result = try await strata("import", store, "--batch", "3", input: Array((lines.joined(separator: "\n") + "\n").utf8))
            #expect(result.status != 0, "\(result)")
            #expect(result.outputLines == ["ack 3", "ack 6"], "\(result)")
            #expect(result.errorLines.count == 1, "\(result)")
            #expect(result.errorText.hasPrefix("strata: line 10: "), "\(result)")

            let export = try await strata("export", store)
            #expect(export.outputLines.count == 6, "\(export)")
            #expect(export.output.contains(#""k5""#) && !export.output.contains(#""k6""#), "\(export)")

            for bad in [
                "not json", "[1,2]", #"{"key":1,"value":"x"}"#, #"{"key":"a","key_base64":"YQ==","value":"x"}"#,
                #"{"key_base64":"@@@","value":"x"}"#, #"{"key":"","value":"x"}"#
            ] {
                let rejected = try await strata("import", store, input: Array("\n\(bad)\n".utf8))
                #expect(rejected.status != 0, "\(bad): \(rejected)")
                #expect(rejected.errorLines.count == 1 && rejected.errorText.hasPrefix("strata: line 2: "), "\(bad): \(rejected)")
            }
        }
    }

    @Test func importRefusesRepeatedFieldsAndNonCanonicalBase64() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let cases: [(line: String, says: String)] = [
                (#"{"key":"a","key":"b","value":"x"}"#, #"the field "key" appears twice"#),
                (#"{"key":"a","value":"x","value":"y"}"#, #"the field "value" appears twice"#),
                (#"{"key":"a","k\u0065y":"b","value":"x"}"#, #"the field "key" appears twice"#),
                (#"{"key_base64":"YWJj=","value":"x"}"#, "is not canonical base64: YWJj= (the same bytes are YWJj)"),
                (#"{"key":"a","value_base64":"YR=="}"#, "is not canonical base64")
            ]
            for (line, says) in cases {
                let rejected = try await strata("import", store, input: Array("{\"key\":\"ok\",\"value\":\"1\"}\n\(line)\n".utf8))
                #expect(rejected.status == 1, "\(line): \(rejected)")
                #expect(rejected.errorText.hasPrefix("strata: line 2: ") && rejected.errorText.contains(says), "\(line): \(rejected)")
            }
            // A nested object's fields are not the line's: only top-level names count.
            let fine = try await strata("import", store, input: Array(#"{"key":"b","value":"x","note":{"key":"inner"}}"#.utf8 + [0x0A]))
            #expect(fine.status == 0, "\(fine)")
            let canonical = try await strata("put", store, "YWJj", "dg==", "--base64")
            #expect(canonical.status == 0, "\(canonical)")
            let loose = try await strata("put", store, "YWJj=", "dg==", "--base64")
            #expect(loose.status == 1 && loose.errorText.contains("not canonical base64"), "\(loose)")
        }
    }

    /// A second writer is refused while a process holds the store; readers are not.
    @Test func secondWriterOnAHeldStoreFailsButReadersRead() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let acks = Acks()
            // This import holds the store open for as long as its stdin stays open.
            let holder = try StrataProcess(["import", store, "--batch", "1"], onStdout: acks.consume)
            try holder.stdin.write(contentsOf: Data(#"{"key":"a","value":"1"}"#.utf8 + [0x0A]))
            let opened = await waitUntil(timeout: .seconds(30)) { acks.last >= 1 || !holder.isRunning }
            #expect(opened && holder.isRunning, "the holding import did not start: \(holder.stderrReader.bytes)")

            let second = try await strata("put", store, "b", "2")
            #expect(second.status != 0, "\(second)")
            #expect(second.errorLines.count == 1, "\(second)")
            #expect(second.errorText.hasPrefix("strata: "), "\(second)")
            #expect(second.errorText.lowercased().contains("lock"), "\(second)")

            // The commands that read open the store read-only, beside the holder, and see
            // what it had committed.
            let read = try await strata("get", store, "a")
            #expect(read.status == 0 && read.output == "1\n", "\(read)")
            let export = try await strata("export", store)
            #expect(export.status == 0 && export.outputLines == [#"{"key":"a","value":"1"}"#], "\(export)")
            let stats = try await strata("stats", store)
            #expect(stats.status == 0 && stats.outputLines.contains("version: 1"), "\(stats)")

            try holder.stdin.close()
            let held = try await holder.finish()
            #expect(held.status == 0, "\(held)")
            #expect(try await strata("get", store, "a").output == "1\n")
        }
    }

    @Test func pathThatIsARegularFileFails() async throws {
        try await withTemporaryDirectory { dir in
            let file = dir.path("plain.txt")
            try Data("not a store".utf8).write(to: URL(fileURLWithPath: file))
            for arguments in [["get", file, "a"], ["put", file, "a", "b"], ["export", file], ["stats", file]] {
                let result = try await strata(arguments)
                #expect(result.status != 0, "\(arguments): \(result)")
                #expect(result.errorLines.count == 1, "\(arguments): \(result)")
                #expect(result.errorText.hasPrefix("strata: "), "\(arguments): \(result)")
                #expect(!result.errorText.contains("Fatal error"), "\(arguments): \(result)")
            }
            #expect(String(decoding: try fileBytes(atPath: file), as: UTF8.self) == "not a store")
        }
    }

    /// Commands that only read, and compact, refuse a path with no store instead of creating
    /// one there, with a message that names no library option.
    @Test func readOnlyCommandsDoNotCreateAStore() async throws {
        try await withTemporaryDirectory { dir in
            let missing = dir.path("typo.strata")
            let emptyDirectory = dir.path("empty")
            try FileManager.default.createDirectory(atPath: emptyDirectory, withIntermediateDirectories: false)
            for path in [missing, emptyDirectory] {
                let commands = [["get", path, "a"], ["scan", path], ["export", path], ["stats", path], ["backup", path, dir.path("copy")], ["compact", path]]
                for arguments in commands {
                    let result = try await strata(arguments)
                    #expect(result.status != 0, "\(arguments): \(result)")
                    #expect(result.errorLines.count == 1, "\(arguments): \(result)")
                    #expect(
                        result.errorText == "strata: there is no store at \(path); `strata put` or `strata import` creates one\n",
                        "\(arguments): \(result)")
                }
            }
            #expect(!FileManager.default.fileExists(atPath: missing), "a command created a store")
            #expect(try FileManager.default.contentsOfDirectory(atPath: emptyDirectory).isEmpty, "a command wrote into an empty directory")
            #expect(!FileManager.default.fileExists(atPath: dir.path("copy")), "backup wrote a copy of nothing")
            let empty = try await strata("put", "", "a", "1")
            #expect(empty.status == 1 && empty.errorText.contains("the store's path is empty"), "\(empty)")
        }
    }

    /// The read commands open the store read-only: they leave every file as it was.
    @Test func readCommandsChangeNoFile() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let records = (0..<30).map { (key: "k\($0)", value: "v\($0)") }
            #expect(try await strata("import", store, "--batch", "10", input: jsonLines(Array(records[..<20]))).status == 0)
            #expect(try await strata("compact", store).status == 0)
            #expect(try await strata("import", store, input: jsonLines(Array(records[20...]))).status == 0)
            let before = try directoryContents(store)
            for arguments in [
                ["get", store, "k25"], ["scan", store, "--prefix", "k1"], ["export", store], ["stats", store], ["backup", store, dir.path("copy")]
            ] {
                let result = try await strata(arguments)
                #expect(result.status == 0, "\(arguments): \(result)")
                #expect(try directoryContents(store) == before, "\(arguments) changed the store's files")
            }
            #expect(try await strata("get", dir.path("copy"), "k5").output == "v5\n")
        }
    }

    @Test(.enabled(if: getuid() != 0, "root ignores file permissions, so a directory made read-only stays writable for it"))
    func readCommandsReadAStoreInAReadOnlyDirectory() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            #expect(try await strata("put", store, "a", "1").status == 0)
            #expect(try await strata("compact", store).status == 0)
            #expect(try await strata("put", store, "b", "2").status == 0)
            let names = try FileManager.default.contentsOfDirectory(atPath: store)
            for name in names { #expect(chmod(store + "/" + name, 0o444) == 0) }
            #expect(chmod(store, 0o555) == 0)
            defer {
                _ = chmod(store, 0o755)
                for name in names { _ = chmod(store + "/" + name, 0o644) }
            }

            #expect(try await strata("get", store, "a").output == "1\n")
            #expect(try await strata("get", store, "b").output == "2\n")
            let export = try await strata("export", store)
            #expect(export.status == 0 && export.outputLines.count == 2, "\(export)")
            #expect(try await strata("scan", store, "--prefix", "b").outputLines.count == 1)
            #expect(try await strata("stats", store).status == 0)
            let backup = try await strata("backup", store, dir.path("copy"))
            #expect(backup.status == 0, "\(backup)")
            let put = try await strata("put", store, "c", "3")
            #expect(put.status == 1 && put.errorLines.count == 1, "\(put)")
        }
    }

    /// The read commands offer no option that only a writer uses, and no help text names a
    /// library option.
    @Test func readCommandHelpOffersNoWriteOptions() async throws {
        for command in ["get", "scan", "export", "stats", "backup"] {
            let help = try await strata(command, "--help")
            #expect(help.status == 0, "\(command): \(help)")
            #expect(!help.output.contains("--wal-segment-bytes") && !help.output.contains("--memtable-bytes"), "\(command): \(help.output)")
            #expect(help.output.contains("read-only"), "\(command): \(help.output)")
        }
        for command in ["put", "import", "compact"] {
            let help = try await strata(command, "--help")
            #expect(help.output.contains("--wal-segment-bytes"), "\(command): \(help.output)")
        }
        for command in ["--help", "get --help", "put --help", "scan --help", "export --help", "stats --help", "backup --help", "compact --help"] {
            let help = try await strata(command.split(separator: " ").map(String.init))
            #expect(!help.output.contains("createIfMissing") && !help.output.contains("readOnly"), "\(command): \(help.output)")
        }
        let root = try await strata("--help")
        #expect(root.output.contains("read-only"), "\(root.output)")
    }

    @Test func compactWritesSegmentFilesThatStatsShows() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let records = (0..<50).map { (key: "k\($0)", value: "v\($0)") }
            #expect(try await strata("import", store, "--batch", "10", input: jsonLines(records)).status == 0)
            let compacted = try await strata("compact", store)
            #expect(compacted.status == 0, "\(compacted)")
            #expect(compacted.outputLines.contains("segmentFiles: 0 -> 1"), "\(compacted)")
            let stats = try await strata("stats", store)
            #expect(stats.outputLines.contains("level1Files: 1"), "\(stats)")
            #expect(stats.outputLines.contains("level1Entries: 50"), "\(stats)")
            #expect(stats.outputLines.contains("memtableEntries: 0"), "\(stats)")
            let scan = try await strata("scan", store, "--prefix", "k4")
            #expect(scan.outputLines.count == 11, "\(scan)")
        }
    }

    @Test func statsPrintsFiguresAsLinesOrJSON() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let records = (0..<20).map { (key: "k\($0)", value: "v\($0)") }
            #expect(try await strata("import", store, "--batch", "7", input: jsonLines(records)).status == 0)

            let text = try await strata("stats", store)
            #expect(text.status == 0, "\(text)")
            let names = text.outputLines.compactMap { $0.split(separator: ":").first.map(String.init) }
            #expect(
                names == [
                    "version", "memtableEntries", "memtableBytes", "sealedMemtables", "walSegments", "walBytes",
                    "segmentFiles", "segmentBytes", "spaceAmplification", "liveSnapshots", "oldestSnapshotVersion",
                    "blockCacheBytes", "blockCacheCapacity", "flushes", "compactions", "writeStalls", "writeStallSeconds"
                ], "\(text)")
            #expect(text.outputLines.first == "version: 3", "\(text)")
            #expect(text.outputLines.contains("memtableEntries: 20"), "\(text)")

            let json = try await strata("stats", store, "--json")
            #expect(json.status == 0, "\(json)")
            #expect(json.outputLines.count == 1, "\(json)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any], "\(json)")
            #expect((object["version"] as? NSNumber)?.intValue == 3, "\(json)")
            #expect((object["liveSnapshots"] as? NSNumber)?.intValue == 0, "\(json)")
            #expect(object["oldestSnapshotVersion"] is NSNull, "\(json)")
        }
    }

    @Test func demoRunsAndExitsZero() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("demo.strata")
            let first = try await strata("demo", store)
            #expect(first.status == 0, "\(first)")
            #expect(first.outputLines.count <= 30, "\(first)")
            #expect(first.output.contains("snapshot"), "\(first)")
            // A second run opens the store the first one left.
            let second = try await strata("demo", store)
            #expect(second.status == 0, "\(second)")
            #expect(try await strata("get", store, "user:0007").output == "Grace 0007\n")
        }
    }

    @Test func lifecycleWriterSuspendsAndResumesAsItWrites() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let result = try await strata("lifecycle-writer", store, "--records", "12", "--suspend-every", "4", "--durability", "buffered")
            #expect(result.status == 0, "\(result)")
            let lines = result.outputLines
            #expect(lines.filter { $0.hasPrefix("ack ") } == (1...12).map { "ack \($0)" }, "\(result)")
            #expect(lines.filter { $0 == "suspended" }.count == 3, "\(result)")
            #expect(lines.filter { $0.hasPrefix("resumed") } == Array(repeating: "resumed unchanged", count: 3), "\(result)")
            #expect(lines.allSatisfy { $0.hasPrefix("ack ") || $0.hasPrefix("retried ") || $0 == "suspended" || $0.hasPrefix("resumed") }, "\(result)")

            // It goes on from --from; the records are RecordFeed's.
            let more = try await strata("lifecycle-writer", store, "--records", "3", "--from", "12")
            #expect(more.outputLines == ["ack 1", "ack 2", "ack 3"], "\(more)")
            let found = try StoreContents.read(store)
            #expect(found.count == 15 && found.problems.isEmpty, "\(found.count) records: \(found.problems)")

            let noRecords = try await strata("lifecycle-writer", store, "--suspend-and-wait")
            #expect(noRecords.status != 0 && noRecords.errorText.contains("--records"), "\(noRecords)")
        }
    }

    @Test func usageErrorsExitNonZero() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let badBatch = try await strata("import", store, "--batch", "0")
            #expect(badBatch.status != 0, "\(badBatch)")
            let missingKey = try await strata("get", store)
            #expect(missingKey.status != 0, "\(missingKey)")
            let unknown = try await strata("frobnicate", store)
            #expect(unknown.status != 0, "\(unknown)")
            let help = try await strata("--help")
            #expect(help.status == 0 && help.output.contains("import"), "\(help)")
        }
    }

    @Test func backupCopiesTheStoreAndTheCopyPassesFsck() async throws {
        try await withTemporaryDirectory { dir in
            let store = dir.path("kv.strata")
            let copy = dir.path("copy.strata")
            #expect(try await strata("put", store, "a", "1").status == 0)
            #expect(try await strata("compact", store).status == 0)  // "a" in a segment file
            #expect(try await strata("put", store, "b", "2").status == 0)  // "b" in the log only
            let backup = try await strata("backup", store, copy)
            #expect(backup.status == 0, "\(backup)")
            #expect(backup.output.contains("version: 2") && backup.output.contains("segmentFilesShared: 1"), "\(backup)")
            #expect(try await strata("get", copy, "a").output == "1\n")
            #expect(try await strata("get", copy, "b").output == "2\n")
            let check = try await strataFsck(copy)
            #expect(check.status == 0, "\(check)")
            let again = try await strata("backup", store, copy)
            #expect(again.status == 1 && again.errorText.contains("not empty"), "\(again)")
        }
    }
}
