@_spi(Engine) import StrataFormat
import StrataIO

/// Every entry of a run of segment files whose ranges do not overlap, all versions, in
/// internal-key order: the input of a compaction.
final class RawFileIterator {
    private let files: [SegmentTable]
    // Per-entry state of the one compaction thread: unchecked, as in MergingCursor.
    @exclusivity(unchecked) private var fileIndex = 0
    @exclusivity(unchecked) private var blockIndex = -1
    @exclusivity(unchecked) private var cursor: BlockCursor? = nil
    /// The descriptor the current file is read through, opened when the iterator reaches the
    /// file and closed when it leaves it (or is dropped), so a compaction holds one at a time.
    @exclusivity(unchecked) private var reading: (handle: any FileHandle, ownsHandle: Bool)? = nil
    private let keyBuffer = KeyBuffer()

    init(files: [SegmentTable]) {
        self.files = files
    }

    deinit {
        closeFile()
    }

    /// Gives back the page cache of an input file the merge has read to its end: the merge
    /// (a compaction, or a salvage) removes the file once its outputs are installed, and the
    /// outputs it is writing meanwhile are cheaper to write into pages the kernel has just
    /// freed than into pages it must find (docs/benchmarks.md, "What a byte written costs on
    /// this machine"). Pages a reader has mapped stay (the kernel drops only unmapped, clean
    /// pages), so a reader of the old version loses nothing it touched; after a failed merge
    /// the file is read from the disk again. A hint: its failure changes nothing.
    private func releaseCachedPages(of file: SegmentTable) {
        guard let reading else { return }
        try? reading.handle.dropCachedPages(offset: 0, count: Int64(file.meta.fileSize))
    }

    private func closeFile() {
        if let reading, reading.ownsHandle { try? reading.handle.close() }
        reading = nil
    }

    var userKey: UnsafeRawBufferPointer { cursor!.userKey }
    var trailer: UInt64 { cursor!.trailer }
    var value: UnsafeRawBufferPointer { cursor!.value }

    func next() throws -> Bool {
        while fileIndex < files.count {
            if cursor != nil, try cursor!.next() { return true }
            blockIndex += 1
            if blockIndex < files[fileIndex].blockCount {
                if reading == nil { reading = try files[fileIndex].openForSequentialReading() }
                cursor = BlockCursor(block: try files[fileIndex].readBlock(blockIndex, using: reading!.handle), keyBuffer: keyBuffer)
            } else {
                cursor = nil
                releaseCachedPages(of: files[fileIndex])
                closeFile()
                fileIndex += 1
                blockIndex = -1
            }
        }
        return false
    }
}

/// What one compaction merges and where the result goes.
struct CompactionPlan {
    /// Input files by level; each level's files are listed in key order (level 0: any order).
    var inputs: [(level: Int, files: [SegmentTable])]
    var outputLevel: Int
    var reason: String

    var allInputs: [SegmentTable] { inputs.flatMap(\.files) }
}

/// Merges a plan's inputs into new files at the output level.
///
/// Rules, for each user key (entries arrive newest first):
/// - every version newer than `horizon` (the oldest sequence a snapshot or reader may still
///   read at) is kept: someone may see it;
/// - of the versions at or below the horizon only the newest is kept: no reader can tell
///   the older ones apart from it;
/// - that newest one is dropped too when it is a tombstone and no deeper level holds the key,
///   because then nothing older can reappear. The newest sequence of a tombstone dropped so
///   is reported (`droppedDeletions`): from then on the store cannot tell that a deletion
///   happened to that key, and references answer conservatively (HistoryProbe).
struct CompactionMerge {
    struct Result {
        var outputs: [SegmentMeta]
        var entriesIn: Int
        var entriesOut: Int
        /// The newest sequence of a tombstone the merge dropped, 0 when it dropped none.
        var droppedDeletions: UInt64
    }

    let plan: CompactionPlan
    let horizon: UInt64
    /// Files in levels below the output level, for the tombstone rule.
    let deeperLevels: [[SegmentTable]]
    let targetFileBytes: Int
    let options: StoreOptions
    /// Where the outputs are streamed while they are built; nil builds each whole in memory
    /// (`write` then names it).
    var destination: SegmentOutput.Destination? = nil
    /// Throws to abandon the merge (a suspension); called every few entries.
    var checkNotPaused: () throws -> Void = {}

    /// Runs the merge, calling `write` for each finished output file.
    func run(write: (inout SegmentOutput) throws -> SegmentMeta) throws -> Result {
        // The tombstone rule's lookups go through the same packed key ranges as a point read.
        let deeperRanges = FileRanges(levels: deeperLevels)
        var runs: [RawFileIterator] = []
        for input in plan.inputs {
            if input.level == 0 {
                for file in input.files { runs.append(RawFileIterator(files: [file])) }
            } else {
                runs.append(RawFileIterator(files: input.files))
            }
        }
        // Unretained for the loop, which `runs` outlives: taking the chosen run out of the
        // array retained and released it once per entry.
        let unretained = runs.map { Unmanaged.passUnretained($0) }
        defer { withExtendedLifetime(runs) {} }
        var live = try runs.map { try $0.next() }
        // Each live run's current user key and trailer, refreshed when it moves: choosing the
        // smallest then reads two plain arrays instead of asking every run on every entry.
        var keys = runs.indices.map { live[$0] ? runs[$0].userKey : UnsafeRawBufferPointer(start: nil, count: 0) }
        var trailers = runs.indices.map { live[$0] ? runs[$0].trailer : 0 }
        var outputs: [SegmentMeta] = []
        var output = SegmentOutput(level: plan.outputLevel, options: options, streamingTo: destination)
        // The user key being merged, in a buffer reused from key to key.
        let currentKey = KeyBuffer()
        var hasCurrentKey = false
        var keptAtHorizon = false
        var entriesIn = 0
        var entriesOut = 0
        var droppedDeletions: UInt64 = 0

        do {
            while true {
                var best = -1
                for i in runs.indices where live[i] {
                    if best < 0 {
                        best = i
                        continue
                    }
                    if compareInternal(keys[i], trailers[i], keys[best], trailers[best]) < 0 { best = i }
                }
                if best < 0 { break }
                let run = unretained[best]
                entriesIn += 1
                if entriesIn % MaintenanceInterrupted.checkInterval == 0 { try checkNotPaused() }
                let trailer = trailers[best]
                let sequence = trailer >> 8
                let isTombstone = trailer & 0xFF == UInt64(SegmentFormat.EntryKind.tombstone.rawValue)
                let userKey = keys[best]
                let sameKey = hasCurrentKey && compareKeys(currentKey.bytes, userKey) == 0
                if !sameKey {
                    // A key's versions never straddle two output files, so levels stay disjoint.
                    if output.entryCount > 0 && output.estimatedSize >= targetFileBytes {
                        outputs.append(try write(&output))
                        output = SegmentOutput(level: plan.outputLevel, options: options, streamingTo: destination)
                    }
                    currentKey.set(userKey)
                    hasCurrentKey = true
                    keptAtHorizon = false
                }
                var keep = true
                if sequence <= horizon {
                    if keptAtHorizon {
                        keep = false
                    } else {
                        keptAtHorizon = true
                        if isTombstone && !deeperLevelsHold(currentKey.bytes, deeperRanges) {
                            keep = false
                            droppedDeletions = max(droppedDeletions, sequence)
                        }
                    }
                }
                if keep {
                    try output.add(
                        borrowingKey: currentKey.bytes, sequence: sequence, isTombstone: isTombstone, value: run._withUnsafeGuaranteedRef { $0.value })
                    entriesOut += 1
                }
                live[best] = try run._withUnsafeGuaranteedRef { try $0.next() }
                if live[best] {
                    keys[best] = run._withUnsafeGuaranteedRef { $0.userKey }
                    trailers[best] = run._withUnsafeGuaranteedRef { $0.trailer }
                }
            }
            if output.entryCount > 0 { outputs.append(try write(&output)) }
        } catch {
            // A streamed output begun and not finished: its file goes (the caller removes
            // the finished ones).
            output.abandon()
            throw error
        }
        return Result(outputs: outputs, entriesIn: entriesIn, entriesOut: entriesOut, droppedDeletions: droppedDeletions)
    }

    private func deeperLevelsHold(_ key: UnsafeRawBufferPointer, _ ranges: FileRanges) -> Bool {
        deeperLevels.indices.contains { ranges.file(level: $0, containing: key) != nil }
    }
}
