// The five steps of a scale run and the checks the summary judges them by.
import Foundation
import Strata
import StrataBenchmarkKit

/// One line of the summary. `outcome` nil: the check could not run, `note` says why.
struct Check {
    var key: String
    var name: String
    var threshold: String
    var measured: String
    var value: Double?
    var limit: Double
    var outcome: Bool?
    var note: String?

    var passed: Bool { outcome == true }
    var result: String { outcome.map { $0 ? "pass" : "FAIL" } ?? "not run" }
}

struct ScaleRun {
    let root: String
    let num: Int
    let small: Int
    /// Gets per readrandom; nil: as many as the store holds keys.
    let reads: Int?
    let data: ScaleData
    let reporter: Reporter

    static let batchSize = 1000
    static let sampleEvery = 100_000
    static let reopenTrials = 3
    /// Random gets of the check after overwrite, beside its full scan.
    static let verificationGets = 1_000_000

    // The thresholds of the issue.
    static let peakRSSLimit = 400_000_000
    static let readRatioLimit = 0.6
    static let reopenLimit = 1.0
    static let spaceLimit = 1.5

    var largePath: String { root + "/scale-large" }
    var smallPath: String { root + "/scale-small" }

    var options: StoreOptions {
        var options = StoreOptions()
        options.durability = .buffered
        return options
    }

    /// Times readrandom and then a full scan (readseq) on the large and small stores an earlier
    /// run left behind, checking value lengths and the entry count only (overwrite changed the
    /// large store's values).
    func readsOnly() throws {
        var rates: [Double] = []
        for (label, path, count) in [("large", largePath, num), ("small", smallPath, small)] {
            let store = try Store(path: path, options: options)
            let picks = ScaleData.picks(count: gets(count), below: count, seed: data.seed(.largeReads))
            var key = [UInt8](repeating: 0x30, count: ScaleData.keyLength)
            let (_, seconds) = try Clock.time {
                for pick in picks {
                    ScaleData.fillKey(Int(pick), into: &key)
                    guard let value = try store.read({ tx in try tx.get(key) }), value.count == ScaleData.valueLength else {
                        throw WrongValue(step: "reads-only (\(label))", key: Int(pick), found: nil)
                    }
                }
            }
            rates.append(Double(picks.count) / seconds)
            reporter.step(["readrandom  \(label) \(Format.rate(rates.last!)) gets/s (reads only)"], [("step", .string("readrandom")), ("store", .string(label))])
            var entries = 0
            var wrongLengths = 0
            let (_, scanSeconds) = try Clock.time {
                try store.read { tx in
                    try tx.forEachUnsafe(from: []) { _, value in
                        entries += 1
                        if value.count != ScaleData.valueLength { wrongLengths += 1 }
                        return true
                    }
                }
            }
            guard entries == count, wrongLengths == 0 else {
                throw WrongValue(step: "reads-only (\(label))", problem: "the scan found \(entries) entries (expected \(count)), \(wrongLengths) of the wrong length")
            }
            reporter.step(["readseq     \(label) \(Format.rate(Double(entries) / scanSeconds)) entries/s (reads only)"],
                          [("step", .string("readseq")), ("store", .string(label))])
            try store.close()
        }
        reporter.step(["ratio       \(Format.ratio(rates[0] / rates[1]))"], [("step", .string("readrandom_ratio"))])
    }

    /// Runs steps 1 to 5, prints each and the summary, and returns the checks.
    func execute() throws -> [Check] {
        // The large store first, in a process that has loaded nothing yet: its RSS figures
        // are the ones judged.
        let large = try measure(label: "large", path: largePath, count: num,
                                orderSeed: data.seed(.largeOrder), readSeed: data.seed(.largeReads))
        let smallFigures = try measure(label: "small", path: smallPath, count: small,
                                       orderSeed: data.seed(.smallOrder), readSeed: data.seed(.smallReads))
        let ratio = large.read.opsPerSecond / smallFigures.read.opsPerSecond
        reporter.step([
            "ratio       readrandom(N = \(Format.count(num))) / readrandom(small = \(Format.count(small))) = \(Format.ratio(ratio)) "
                + "(\(Format.rate(large.read.opsPerSecond)) vs \(Format.rate(smallFigures.read.opsPerSecond)) gets/s)",
        ], [
            ("step", .string("readrandom_ratio")),
            ("keys", .int(num)), ("small_keys", .int(small)),
            ("ops_per_s", .double(large.read.opsPerSecond.rounded())),
            ("small_ops_per_s", .double(smallFigures.read.opsPerSecond.rounded())),
            ("ratio", .double(ratio)),
        ])

        let overwrite = try self.overwrite()

        var checks: [Check] = []
        let peak = large.load.judgedPeak
        checks.append(Check(
            key: "load_peak_rss", name: "peak RSS during load (N = \(Format.count(num)))",
            threshold: "< \(Format.megabytes(Self.peakRSSLimit))",
            measured: Format.megabytes(peak) + (large.load.hwmCoversLoad ? " (VmHWM or a sample, the larger)" : " (sampled)"),
            value: peak.map(Double.init), limit: Double(Self.peakRSSLimit),
            outcome: peak.map { $0 < Self.peakRSSLimit },
            note: peak == nil ? "/proc/self/status could not be read" : nil))
        checks.append(Check(
            key: "readrandom_ratio", name: "readrandom(N) / readrandom(small = \(Format.count(small)))",
            threshold: ">= \(Format.ratio(Self.readRatioLimit))", measured: Format.ratio(ratio),
            value: ratio, limit: Self.readRatioLimit, outcome: ratio >= Self.readRatioLimit))
        checks.append(Check(
            key: "reopen_seconds", name: "reopen at N (median of \(Self.reopenTrials))",
            threshold: "< \(Format.seconds(Self.reopenLimit))", measured: Format.seconds(large.reopen.median),
            value: large.reopen.median, limit: Self.reopenLimit, outcome: large.reopen.median < Self.reopenLimit))
        let spaceName = "directory after overwrite + compact / live data"
        if let compactError = overwrite.compactError {
            checks.append(Check(key: "space_ratio", name: spaceName, threshold: "<= \(Format.ratio(Self.spaceLimit))",
                                measured: "–", value: nil, limit: Self.spaceLimit, outcome: nil,
                                note: "compact() failed: \(compactError)"))
        } else if let after = overwrite.after, let ratio = overwrite.spaceRatio {
            checks.append(Check(key: "space_ratio", name: spaceName, threshold: "<= \(Format.ratio(Self.spaceLimit))",
                                measured: Format.ratio(ratio)
                                    + " (\(Format.megabytes(after.usage.bytes)) / \(Format.megabytes(overwrite.liveBytes)))",
                                value: ratio, limit: Self.spaceLimit, outcome: ratio <= Self.spaceLimit))
        } else {
            checks.append(Check(key: "space_ratio", name: spaceName, threshold: "<= \(Format.ratio(Self.spaceLimit))",
                                measured: "–", value: nil, limit: Self.spaceLimit, outcome: nil,
                                note: overwrite.followUpError ?? "not measured"))
        }
        printSummary(checks)
        return checks
    }

    // MARK: Steps 1 to 4

    struct StoreFigures {
        var load: LoadFigures
        var reopen: ReopenFigures
        var read: ReadFigures
    }

    /// Steps 1 to 3 on one store (step 4 is the same on the small one). The store is closed
    /// afterwards.
    private func measure(label: String, path: String, count: Int, orderSeed: UInt64, readSeed: UInt64) throws -> StoreFigures {
        reporter.progress("strata-scale: loading \(Format.count(count)) keys into \(path) ...")
        var store: Store?
        let load = try step("load (\(label))") { try self.load(path: path, count: count, orderSeed: orderSeed, into: &store) }
        reporter.step([
            "load        \(label) \(Format.count(count)) puts in \(Format.seconds(load.seconds)) = \(Format.rate(load.opsPerSecond)) puts/s; "
                + "RSS peak \(Format.megabytes(load.peakSampled)) (sampled every \(Format.count(Self.sampleEvery)) puts; "
                + "\(Format.megabytes(load.rssAtStart)) at start, \(Format.megabytes(load.rssAtEnd)) at end), "
                + "VmHWM \(Format.megabytes(load.hwm))" + (load.hwmCoversLoad ? " (reset at the start)" : " (of the whole process)"),
            "  stats     \(label) \(Format.stats(load.stats))",
        ], [
            ("step", .string("load")), ("store", .string(label)),
            ("keys", .int(count)), ("seconds", .double(load.seconds)), ("ops_per_s", .double(load.opsPerSecond.rounded())),
            ("rss_peak_bytes", .optional(load.peakSampled)), ("rss_start_bytes", .optional(load.rssAtStart)),
            ("rss_end_bytes", .optional(load.rssAtEnd)), ("vm_hwm_bytes", .optional(load.hwm)),
            ("vm_hwm_reset_at_start", .bool(load.hwmCoversLoad)),
            ("stats", Format.statsJSON(load.stats)),
        ])

        reporter.progress("strata-scale: reopening \(path) \(Self.reopenTrials) times ...")
        let reopen = try step("reopen (\(label))") { try self.reopen(path: path, store: &store) }
        reporter.step([
            "reopen      \(label) close \(Format.seconds(reopen.closeSeconds)); open "
                + reopen.openSeconds.map(Format.seconds).joined(separator: ", ")
                + ": median \(Format.seconds(reopen.median)) (replayed \(Format.count(reopen.recovery.transactionsReplayed)) "
                + "transactions from \(reopen.recovery.segmentsReplayed) WAL segments); RSS after open \(Format.megabytes(reopen.rssAfter)), "
                + "VmHWM during the opens \(Format.megabytes(reopen.peak))",
        ], [
            ("step", .string("reopen")), ("store", .string(label)), ("keys", .int(count)),
            ("close_seconds", .double(reopen.closeSeconds)),
            ("open_seconds", .array(reopen.openSeconds.map { .double($0) })),
            ("median_seconds", .double(reopen.median)),
            ("wal_segments_replayed", .int(reopen.recovery.segmentsReplayed)),
            ("transactions_replayed", .int(reopen.recovery.transactionsReplayed)),
            ("rss_after_bytes", .optional(reopen.rssAfter)),
            ("vm_hwm_bytes", .optional(reopen.peak)),
        ])

        reporter.progress("strata-scale: \(Format.count(gets(count))) random gets ...")
        guard let opened = store else { throw StepFailure(step: "readrandom (\(label))", underlying: ScaleSetupError("no open store")) }
        let read = try step("readrandom (\(label))") {
            try readRandom(opened, step: "readrandom (\(label))", keyCount: count, gets: gets(count), seed: readSeed, generations: nil)
        }
        reporter.step([
            "readrandom  \(label) \(Format.count(read.gets)) gets in \(Format.seconds(read.seconds)) = \(Format.rate(read.opsPerSecond)) gets/s, "
                + "then every value checked byte for byte; RSS after \(Format.megabytes(read.rssAfter))",
        ], [
            ("step", .string("readrandom")), ("store", .string(label)), ("keys", .int(count)),
            ("gets", .int(read.gets)), ("seconds", .double(read.seconds)), ("ops_per_s", .double(read.opsPerSecond.rounded())),
            ("rss_after_bytes", .optional(read.rssAfter)),
        ])
        try step("close (\(label))") { try opened.close() }
        store = nil
        return StoreFigures(load: load, reopen: reopen, read: read)
    }

    struct LoadFigures {
        var seconds: Double
        var opsPerSecond: Double
        var rssAtStart: Int?
        var peakSampled: Int?
        var rssAtEnd: Int?
        var hwm: Int?
        /// VmHWM was reset as the load started, so it is the load's true peak (a sample
        /// every 100k puts can miss a short spike).
        var hwmCoversLoad: Bool
        var stats: StoreStats

        /// What the check judges: the true peak when known, else the sampled one.
        var judgedPeak: Int? {
            if hwmCoversLoad, let hwm { return max(hwm, peakSampled ?? 0) }
            return peakSampled
        }
    }

    /// Step 1: a fresh store, keys in a seeded random permutation, 1000 puts per write,
    /// one sync. Leaves the store open in `store`.
    private func load(path: String, count: Int, orderSeed: UInt64, into store: inout Store?) throws -> LoadFigures {
        try? FileManager.default.removeItem(atPath: path)
        let order = ScaleData.permutation(count: count, seed: orderSeed)
        let hwmReset = ProcessMemory.resetPeak()
        let rssAtStart = ProcessMemory.rss()
        var peak = rssAtStart
        let opened = try Store(path: path, options: options)
        store = opened
        var seconds = try putInBatches(opened, count: count, what: "load", peak: &peak) { position in
            let index = Int(order[position])
            return (index, 0)
        }
        let (_, syncSeconds) = try Clock.time { try opened.sync() }
        seconds += syncSeconds
        let end = ProcessMemory.status()
        peak = larger(peak, end?.rss)
        return LoadFigures(seconds: seconds, opsPerSecond: Double(count) / seconds,
                           rssAtStart: rssAtStart, peakSampled: peak, rssAtEnd: end?.rss, hwm: end?.hwm,
                           hwmCoversLoad: hwmReset && end != nil, stats: try opened.stats())
    }

    struct ReopenFigures {
        var closeSeconds: Double
        var openSeconds: [Double]
        var recovery: RecoveryReport
        var rssAfter: Int?
        /// VmHWM over the three opens (nil when it could not be reset first).
        var peak: Int?

        var median: Double { openSeconds.sorted()[openSeconds.count / 2] }
    }

    /// Step 2: closes `store`, then times `Store(path:)` three times, closing after the first
    /// two. Leaves the last one open in `store`.
    private func reopen(path: String, store: inout Store?) throws -> ReopenFigures {
        guard let loaded = store else { throw ScaleSetupError("no open store") }
        let (_, closeSeconds) = try Clock.time { try loaded.close() }
        store = nil
        let hwmReset = ProcessMemory.resetPeak()
        var openSeconds: [Double] = []
        var recovery = RecoveryReport()
        for trial in 0..<Self.reopenTrials {
            let (opened, seconds) = try Clock.time { try Store(path: path, options: options) }
            openSeconds.append(seconds)
            recovery = opened.recovery
            if trial < Self.reopenTrials - 1 {
                try opened.close()
            } else {
                store = opened
            }
        }
        let memory = ProcessMemory.status()
        return ReopenFigures(closeSeconds: closeSeconds, openSeconds: openSeconds, recovery: recovery,
                             rssAfter: memory?.rss, peak: hwmReset ? memory?.hwm : nil)
    }

    struct ReadFigures {
        var gets: Int
        var seconds: Double
        var rssAfter: Int?

        var opsPerSecond: Double { Double(gets) / seconds }
    }

    /// Gets per readrandom on a store of `keyCount` keys: N, as the workload defines it, so that
    /// each store is read as much as it holds.
    func gets(_ keyCount: Int) -> Int { reads ?? keyCount }

    /// Step 3: `gets` gets of uniform random keys in `0..<keyCount`, one read transaction
    /// each. The timed pass checks each value's length, as strata-bench's readrandom does;
    /// a second, untimed pass over the same keys checks every value byte for byte (done
    /// inside the timed loop, that check costs as much as a fifth of a get on a small store
    /// and would pull the large/small ratio towards 1). `generations` says how often each
    /// key was overwritten, nil meaning never.
    private func readRandom(_ store: Store, step: String, keyCount: Int, gets: Int, seed: UInt64, generations: [UInt8]?) throws -> ReadFigures {
        let picks = ScaleData.picks(count: gets, below: keyCount, seed: seed)
        var key = [UInt8](repeating: 0x30, count: ScaleData.keyLength)
        let (_, seconds) = try Clock.time {
            for pick in picks {
                ScaleData.fillKey(Int(pick), into: &key)
                let value = try store.read { tx in try tx.get(key) }
                guard let value, value.count == ScaleData.valueLength else {
                    throw WrongValue(step: step, key: Int(pick), found: value)
                }
            }
        }
        let rssAfter = ProcessMemory.rss()
        for pick in picks {
            let index = Int(pick)
            ScaleData.fillKey(index, into: &key)
            let value = try store.read { tx in try tx.get(key) }
            guard let value, data.matches(value, key: index, generation: generations?[index] ?? 0) else {
                throw WrongValue(step: step, key: index, found: value)
            }
        }
        return ReadFigures(gets: picks.count, seconds: seconds, rssAfter: rssAfter)
    }

    // MARK: Step 5

    struct OverwriteFigures {
        var puts: Int
        var seconds: Double
        var rssPeak: Int?
        var compactSeconds: Double?
        var compactError: String?
        var liveBytes: Int
        /// What followed the compaction; nil when compact() failed and so did something
        /// after it (`followUpError`).
        var after: AfterCompaction?
        var followUpError: String?

        var opsPerSecond: Double { Double(puts) / seconds }
        var spaceRatio: Double? { after.map { Double($0.usage.bytes) / Double(liveBytes) } }
    }

    struct AfterCompaction {
        var stats: StoreStats
        var usage: DirectoryUsage
        var verification: ReadFigures
        var scanned: Int
        var usageAfterClose: DirectoryUsage
    }

    /// Puts `count` keys, `batchSize` per write transaction, the `position`-th being key
    /// `pick(position).index` at that generation; samples RSS every `sampleEvery` puts into
    /// `peak`. Returns the seconds spent inside the store.
    private func putInBatches(_ store: Store, count: Int, what: String, peak: inout Int?,
                              pick: (Int) -> (index: Int, generation: UInt8)) throws -> Double {
        var seconds = 0.0
        var keys: [[UInt8]] = []
        var values: [[UInt8]] = []
        keys.reserveCapacity(Self.batchSize)
        values.reserveCapacity(Self.batchSize)
        var next = 0
        var nextSample = Self.sampleEvery
        var progress = Progress(reporter: reporter, what: what, total: count)
        while next < count {
            let end = min(next + Self.batchSize, count)
            keys.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
            for position in next..<end {
                let (index, generation) = pick(position)
                keys.append(BenchmarkKey.make(index))
                values.append(data.value(key: index, generation: generation))
            }
            let (_, batchSeconds) = try Clock.time {
                try store.write { tx in
                    for j in keys.indices { try tx.put(keys[j], values[j]) }
                }
            }
            seconds += batchSeconds
            next = end
            if next >= nextSample {
                let rss = ProcessMemory.rss()
                peak = larger(peak, rss)
                nextSample += Self.sampleEvery
                progress.update(done: next, seconds: seconds, rss: rss)
            }
        }
        return seconds
    }

    /// Step 5: N puts to uniform random keys of the large store (1000 per write, one sync),
    /// then `compact()`; the directory's size against the live data; then every value
    /// checked: `verificationGets` random gets and a full scan. A compact() that throws is reported
    /// and the step marked not run; what can still be measured is.
    private func overwrite() throws -> OverwriteFigures {
        let label = "large"
        reporter.progress("strata-scale: overwriting \(Format.count(num)) random keys of \(largePath) ...")
        let opened = try step("overwrite (open)") { try Store(path: largePath, options: options) }
        defer { try? opened.close() }
        var generations = [UInt8](repeating: 0, count: num)
        var picks = BenchmarkRandom(seed: data.seed(.overwrite))
        var peak = ProcessMemory.rss()
        var seconds = 0.0
        try step("overwrite (puts)") {
            seconds = try putInBatches(opened, count: num, what: "overwrite", peak: &peak) { _ in
                let index = picks.next(below: num)
                generations[index] &+= 1
                return (index, generations[index])
            }
            let (_, syncSeconds) = try Clock.time { try opened.sync() }
            seconds += syncSeconds
        }

        reporter.progress("strata-scale: compact() ...")
        var compactSeconds: Double?
        var compactError: String?
        do {
            let (_, elapsed) = try Clock.time { try opened.compact() }
            compactSeconds = elapsed
        } catch {
            compactError = "\(error)"
            reporter.progress("strata-scale: compact() failed: \(error); step 5 is marked not run, the figures below are without compaction")
        }
        peak = larger(peak, ProcessMemory.rss())

        let checkStep = "verification after overwrite" + (compactError == nil ? " + compact" : " (compact() failed)")
        var after: AfterCompaction?
        var followUpError: String?
        do {
            let stats = try step("overwrite (stats)") { try opened.stats() }
            let usage = try step("overwrite (directory)") { try DirectoryUsage.measure(largePath) }
            let checkGets = min(gets(num), Self.verificationGets)
            reporter.progress("strata-scale: checking every value: \(Format.count(checkGets)) random gets and a full scan ...")
            let verification = try step(checkStep) {
                try readRandom(opened, step: checkStep, keyCount: num, gets: checkGets, seed: data.seed(.verifyReads), generations: generations)
            }
            let scanned = try step(checkStep) { try scanAll(opened, step: checkStep, generations: generations) }
            try step("overwrite (close)") { try opened.close() }
            let usageAfterClose = try step("overwrite (directory)") { try DirectoryUsage.measure(largePath) }
            after = AfterCompaction(stats: stats, usage: usage, verification: verification, scanned: scanned,
                                    usageAfterClose: usageAfterClose)
        } catch let failure as StepFailure where compactError != nil {
            // The store may be unusable after a failed compaction: report, do not abort.
            followUpError = "\(failure)"
            reporter.progress("strata-scale: after the failed compact(): \(failure)")
        }

        let figures = OverwriteFigures(puts: num, seconds: seconds, rssPeak: peak, compactSeconds: compactSeconds,
                                       compactError: compactError, liveBytes: num * ScaleData.entryBytes,
                                       after: after, followUpError: followUpError)
        reportOverwrite(figures, label: label)
        return figures
    }

    private func reportOverwrite(_ figures: OverwriteFigures, label: String) {
        let compactText: String
        if let compactSeconds = figures.compactSeconds {
            compactText = "compact() \(Format.seconds(compactSeconds))"
        } else {
            compactText = "compact() FAILED (\(figures.compactError ?? "")): step 5 not run"
        }
        var lines = [
            "overwrite   \(label) \(Format.count(figures.puts)) puts in \(Format.seconds(figures.seconds)) = "
                + "\(Format.rate(figures.opsPerSecond)) puts/s (incl. the sync); \(compactText); "
                + "RSS peak \(Format.megabytes(figures.rssPeak)) (sampled)",
        ]
        var object: [(String, JSON)] = [
            ("step", .string("overwrite")), ("store", .string(label)), ("keys", .int(num)),
            ("puts", .int(figures.puts)), ("seconds", .double(figures.seconds)),
            ("ops_per_s", .double(figures.opsPerSecond.rounded())),
            ("compact", .string(figures.compactError == nil ? "done" : "failed")),
            ("compact_seconds", .optional(figures.compactSeconds)),
            ("compact_error", figures.compactError.map { .string($0) } ?? .null),
            ("live_bytes", .int(figures.liveBytes)),
            ("rss_peak_bytes", .optional(figures.rssPeak)),
        ]
        if let after = figures.after {
            let sizeLabel = figures.compactError == nil ? "directory" : "directory WITHOUT compaction"
            lines += [
                "  space     \(label) \(sizeLabel) \(Format.usage(after.usage)); live data \(Format.megabytes(figures.liveBytes)) "
                    + "(\(Format.count(num)) × \(ScaleData.entryBytes) B); directory / live = \(Format.ratio(figures.spaceRatio)); "
                    + "stats().spaceAmplification \(Format.ratio(after.stats.spaceAmplification)); "
                    + "after close \(Format.megabytes(after.usageAfterClose.bytes))",
                "  stats     \(label) \(Format.stats(after.stats))",
                "  checked   \(label) \(Format.count(after.verification.gets)) random gets "
                    + "(\(Format.rate(after.verification.opsPerSecond)) gets/s) and a full scan of "
                    + "\(Format.count(after.scanned)) entries: every value as last written",
            ]
            object += [
                ("directory", Format.usageJSON(after.usage)),
                ("directory_over_live", .optional(figures.spaceRatio)),
                ("space_amplification", .optional(after.stats.spaceAmplification)),
                ("directory_after_close", Format.usageJSON(after.usageAfterClose)),
                ("stats", Format.statsJSON(after.stats)),
                ("checked_gets", .int(after.verification.gets)),
                ("checked_gets_per_s", .double(after.verification.opsPerSecond.rounded())),
                ("checked_scan_entries", .int(after.scanned)),
            ]
        } else {
            lines.append("  after     \(label) not measured: \(figures.followUpError ?? "")")
            object.append(("error_after_compact", .string(figures.followUpError ?? "")))
        }
        reporter.step(lines, object)
    }

    /// A full scan: keys 0..<N each once, in order, each value as last written.
    private func scanAll(_ store: Store, step: String, generations: [UInt8]) throws -> Int {
        var entries = 0
        var problem: WrongValue?
        try store.read { tx in
            try tx.forEachUnsafe(from: []) { key, value in
                guard let index = BenchmarkKey.index(of: key), index == entries else {
                    problem = WrongValue(step: step, problem: "the scan's entry \(entries) has key \(String(decoding: key, as: UTF8.self)), expected key \(entries)")
                    return false
                }
                guard index < generations.count, data.matches(value, key: index, generation: generations[index]) else {
                    problem = WrongValue(step: step, problem: "the scan's value of key \(index) (\(value.count) bytes) is not the value last written")
                    return false
                }
                entries += 1
                return true
            }
        }
        if let problem { throw problem }
        guard entries == generations.count else {
            throw WrongValue(step: step, problem: "the scan found \(entries) entries, expected \(generations.count)")
        }
        return entries
    }

    // MARK: Summary

    private func printSummary(_ checks: [Check]) {
        var lines = ["", "| check | threshold | measured | result |", "|---|---|---|---|"]
        for check in checks {
            lines.append("| \(check.name) | \(check.threshold) | \(check.measured) | \(check.result)\(check.note.map { ": \($0)" } ?? "") |")
        }
        let failed = checks.filter { $0.outcome == false }.count
        let notRun = checks.filter { $0.outcome == nil }.count
        lines.append("")
        lines.append(failed == 0 && notRun == 0
                     ? "strata-scale: every check passed"
                     : "strata-scale: \(failed) of \(checks.count) checks failed, \(notRun) not run")
        reporter.step(lines, [
            ("step", .string("summary")),
            ("checks", .array(checks.map { check in
                .object([
                    ("check", .string(check.key)), ("name", .string(check.name)),
                    ("threshold", .string(check.threshold)), ("limit", .double(check.limit)),
                    ("value", .optional(check.value)),
                    ("result", .string(check.outcome.map { $0 ? "pass" : "fail" } ?? "not_run")),
                    ("note", check.note.map { .string($0) } ?? .null),
                ])
            })),
            ("failed", .int(failed)), ("not_run", .int(notRun)),
            ("passed", .bool(failed == 0 && notRun == 0)),
        ])
    }

    private func larger(_ a: Int?, _ b: Int?) -> Int? {
        guard let a else { return b }
        guard let b else { return a }
        return max(a, b)
    }

    /// Runs a step, naming it in any error but a wrong value.
    private func step<T>(_ name: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let wrong as WrongValue {
            throw wrong
        } catch let failure as StepFailure {
            throw failure
        } catch {
            throw StepFailure(step: name, underlying: error)
        }
    }
}

/// A line on stderr at every tenth of a long fill, so a run at 10M keys shows it is alive.
struct Progress {
    let reporter: Reporter
    let what: String
    let total: Int
    private var nextTenth = 1

    init(reporter: Reporter, what: String, total: Int) {
        self.reporter = reporter
        self.what = what
        self.total = total
    }

    mutating func update(done: Int, seconds: Double, rss: Int?) {
        guard total >= 1_000_000, done * 10 >= nextTenth * total, nextTenth < 10 else { return }
        while done * 10 >= nextTenth * total { nextTenth += 1 }
        reporter.progress("strata-scale:   \(what) \(Format.count(done)) of \(Format.count(total)) puts, "
                          + "\(Format.seconds(seconds)) in the store, RSS \(Format.megabytes(rss))")
    }
}
