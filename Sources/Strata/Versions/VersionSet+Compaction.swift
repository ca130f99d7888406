import Dispatch
@_spi(Engine) import StrataFormat

/// Choosing what to compact (docs/decisions/2026-11-21-compaction.md): the version set picks,
/// because it owns the levels and the compact pointers; maintenance runs what it picked.
extension VersionSet {
    /// The most urgent compaction, if any is due: the level whose score is highest, where
    /// level 0 scores its file count over the trigger and deeper levels their bytes over
    /// their target. Choosing by score (rather than level 0 first) keeps a steady stream of
    /// flushes from starving the deeper levels, whose overgrowth would make every level-0
    /// merge rewrite them whole.
    ///
    /// One exception: when the writer has committed nothing and neither waited for room nor
    /// waits for it for a while (`writerIdleNanoseconds`, or since the open), level 0 goes
    /// first, and from `idleLevel0Files` files, below its trigger. Every read pays for each
    /// level-0 file (a get probes its filter, a scan merges it), and with no writer adding
    /// files a deeper level cannot starve; under a steady writer the scores decide.
    /// `writerWaits` counts the writer's entries into and exits from its waits for room
    /// (odd while it waits; Maintenance.writerWaits); nil turns the exception off (work run
    /// inline, in tests, where the choice must not depend on time).
    func pickCompaction(writerWaits: Int?) -> CompactionPlan? {
        withInstallLock { levels, compactPointers in
            let sequence = published.latest().sequence
            var writerIdle = false
            if let writerWaits {
                let now = DispatchTime.now().uptimeNanoseconds
                var quietSince = now
                if let last = quietAtLastPick, last.sequence == sequence, last.writerWaits == writerWaits { quietSince = last.since }
                writerIdle = writerWaits % 2 == 0 && (quietAtLastPick == nil || now - quietSince >= Self.writerIdleNanoseconds)
                quietAtLastPick = (sequence, writerWaits, quietSince)
            }
            var bestLevel = -1
            var bestScore = 1.0
            var l0Score = Double(levels[0].count) / Double(level0CompactionTrigger)
            if writerIdle && levels[0].count >= min(Self.idleLevel0Files, level0CompactionTrigger) { l0Score = .infinity }
            if l0Score >= bestScore {
                bestLevel = 0
                bestScore = l0Score
            }
            for level in 1..<(ManifestFormat.maxLevels - 1) {
                let score = Double(Self.bytes(of: levels[level])) / Double(targetBytes(level))
                if score > bestScore {
                    bestLevel = level
                    bestScore = score
                }
            }
            if bestLevel < 0 { return nil }
            if bestLevel == 0 {
                let files = levels[0]
                let smallest = files.map(\.meta.smallestKey).min { $0.lexicographicallyPrecedes($1) }!
                let largest = files.map(\.meta.largestKey).max { $0.lexicographicallyPrecedes($1) }!
                return CompactionPlan(
                    inputs: [(0, files), (1, Self.overlapping(levels[1], smallest, largest))], outputLevel: 1,
                    reason: "level 0 holds \(files.count) files")
            }
            let level = bestLevel
            let files = levels[level]
            // Round robin through the level's key space, so every range gets its turn.
            let pointer = compactPointers[level]
            let chosen = files.first { file in pointer.map { $0.lexicographicallyPrecedes(file.meta.smallestKey) } ?? true } ?? files[0]
            compactPointers[level] = chosen.meta.largestKey
            return CompactionPlan(
                inputs: [(level, [chosen]), (level + 1, Self.overlapping(levels[level + 1], chosen.meta.smallestKey, chosen.meta.largestKey))],
                outputLevel: level + 1, reason: "level \(level) holds \(Self.bytes(of: levels[level])) bytes")
        }
    }

    /// Every file into the deepest non-empty level (at least level 1), or nil when there are
    /// no files.
    func fullCompactionPlan() -> CompactionPlan? {
        withInstallLock { levels, _ in
            let deepest = levels.lastIndex { !$0.isEmpty } ?? 0
            guard deepest > 0 || !levels[0].isEmpty else { return nil }
            let inputs = levels.enumerated().filter { !$0.element.isEmpty }.map { (level: $0.offset, files: $0.element) }
            return CompactionPlan(inputs: inputs, outputLevel: max(deepest, 1), reason: "a full compaction was asked for")
        }
    }

    /// How long the writer must have committed nothing, nor waited, for a pick to count it
    /// idle. Picks can follow each other within a millisecond (a file moved down without a
    /// merge), and a loading writer was seen to pause for over 100 ms between commits.
    static let writerIdleNanoseconds: UInt64 = 1_000_000_000

    /// Level-0 files that an idle writer's store merges though level 0 is not due: a store
    /// reopened to be read (an app after launch) would otherwise keep up to
    /// `level0CompactionTrigger - 1` files, in every scan's merge and behind every get's
    /// filter probes, until writes came to fill level 0. A single file is left alone: merging
    /// it rewrites the level-1 files it overlaps for one source less.
    static let idleLevel0Files = 2

    private func targetBytes(_ level: Int) -> Int {
        var target = level1Bytes
        for _ in 1..<max(level, 1) { target = target.multipliedReportingOverflow(by: 10).partialValue }
        return target
    }

    private static func bytes(of level: [SegmentTable]) -> Int {
        level.reduce(0) { $0 + Int($1.meta.fileSize) }
    }

    /// Files of a level (>= 1) whose range meets [smallest, largest].
    private static func overlapping(_ level: [SegmentTable], _ smallest: [UInt8], _ largest: [UInt8]) -> [SegmentTable] {
        level.filter { file in
            !file.meta.largestKey.lexicographicallyPrecedes(smallest) && !largest.lexicographicallyPrecedes(file.meta.smallestKey)
        }
    }
}
