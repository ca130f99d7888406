// Crash images of a file system that reorders metadata, and decay of synced bytes.
//
// The prefix rule of `crashImage(.random)` is ext4's journal; other file systems (and ext4
// without a journal) may write any of a directory's unsynced entry operations and not the
// ones before it. These images keep any subset of them, within what a real file system can
// produce: a rename is one operation (both names, across directories too), and nothing that
// names a node survives without the operation that created it, so a file's bytes never show
// up without its creation. Only `syncDirectory` orders entry operations; a test that finds a
// store broken by one of these images has found a missing directory sync.
//
// Bit rot (`rot`) changes synced bytes, which no crash image ever does: it checks the rule
// that an open either returns exactly the data or fails with `.corruption`.
import StrataIO

extension SimulatedFileSystem {
    /// A directory entry operation, as `observeEntryOperations` reports it.
    public struct EntryOperation: Sendable, Hashable, CustomStringConvertible {
        public enum Kind: Sendable, Hashable {
            case create, createDirectory, rename, remove
        }

        public var kind: Kind
        /// The path it named (for a rename, "source -> destination").
        public var path: String

        public var description: String { "\(kind) \(path)" }
    }

    /// Calls `observer` after every entry operation that took effect (a creating open or
    /// lock, mkdir, rename, unlink), on the thread that made it, with no lock of this file
    /// system held: it may take crash images. Nil stops it.
    public func observeEntryOperations(_ observer: (@Sendable (EntryOperation) -> Void)?) {
        state.withLock { $0.entryObserver = observer }
    }

    func notifyEntryOperation(_ operation: EntryOperation) {
        state.withLock { $0.entryObserver }?(operation)
    }

    /// The numbers of the entry operations no directory sync has made durable yet, oldest
    /// first: what `.entryOperations(kept:keepingUnsyncedData:)` chooses from.
    public var pendingEntryOperations: [Int] {
        state.withLock { $0.pendingEntryOperationIDs }
    }

    /// Crash images that keep subsets of the unsynced entry operations, each file with its
    /// synced bytes only (or everything written when `keepingUnsyncedData`): every subset
    /// when there are at most `exhaustiveUpTo` of them, otherwise `samples` subsets drawn
    /// with `seed`, besides none and all. Subsets that come to the same image (an operation
    /// dropped with the creation it needs) are given once. Deterministic.
    public func reorderedCrashImages(
        seed: UInt64, exhaustiveUpTo: Int = 5, samples: Int = 24, keepingUnsyncedData: Bool = false
    ) -> [(kept: Set<Int>, image: SimulatedFileSystem)] {
        state.withLock { state in
            let pending = state.pendingEntryOperationIDs
            var subsets: [Set<Int>] = []
            if pending.count <= exhaustiveUpTo {
                for mask in 0..<(1 << pending.count) {
                    subsets.append(Set(pending.indices.filter { mask & (1 << $0) != 0 }.map { pending[$0] }))
                }
            } else {
                var random = SeededRandom(seed: seed, stream: 0x5EB5_E7)
                subsets = [[], Set(pending)]
                for _ in 0..<samples {
                    subsets.append(Set(pending.filter { _ in Bool.random(using: &random) }))
                }
            }
            var seen: Set<Set<Int>> = []
            var images: [(kept: Set<Int>, image: SimulatedFileSystem)] = []
            for subset in subsets {
                let kept = state.closedUnderCreation(subset)
                guard seen.insert(kept).inserted else { continue }
                let image = state.crashImage(.entryOperations(kept: kept, keepingUnsyncedData: keepingUnsyncedData))
                images.append((kept, SimulatedFileSystem(state: image)))
            }
            return images
        }
    }

    /// Flips one bit in each of `count` distinct synced bytes of the file at `path`, as decay
    /// of the medium would, and returns their offsets. The bytes are drawn with `seed` among
    /// the file's synced bytes up to its last non-zero one (so not in zeros past the data,
    /// where damage is easy to tell), within `range` when given. Unsynced changes stay pending
    /// over the damaged bytes. Use it on a crash image (everything synced) or a closed store.
    public func rot(_ path: String, seed: UInt64, bytes count: Int = 1, within range: Range<Int>? = nil) throws -> [Int] {
        try state.withLock { state in
            guard let components = try? pathComponents(path, "rot"), let id = try? state.lookup(components, "rot", path),
                var file = state.files[id]
            else {
                throw ioError(.notFound, "rot", path, "no such file")
            }
            let bytes = file.durable.bytes
            let end = (bytes.lastIndex { $0 != 0 } ?? -1) + 1
            let candidates = (range ?? 0..<end).clamped(to: 0..<end)
            guard candidates.count >= count else {
                throw ioError(.other, "rot", path, "only \(candidates.count) synced bytes to damage, \(count) asked")
            }
            var random = SeededRandom(seed: seed, stream: UInt64(id))
            var offsets: Set<Int> = []
            while offsets.count < count { offsets.insert(Int.random(in: candidates, using: &random)) }
            for offset in offsets.sorted() {
                file.durable.write([bytes[offset] ^ (1 << UInt8.random(in: 0..<8, using: &random))], at: offset)
            }
            file.live = file.durable
            for operation in file.pending { operation.apply(to: &file.live) }
            state.files[id] = file
            return offsets.sorted()
        }
    }
}

extension SimulatedState {
    /// Every pending entry operation's number, once, in order.
    var pendingEntryOperationIDs: [Int] {
        Set(directories.values.flatMap(\.pendingIDs)).sorted()
    }

    /// The entry operations a reordered image keeps (nil for the prefix modes).
    func entryOperationsKept(_ mode: SimulatedFileSystem.CrashMode) -> Set<Int>? {
        switch mode {
        case .loseAllUnsynced, .keepAll, .random: return nil
        case .entryOperations(let kept, _): return closedUnderCreation(kept)
        case .reordered(let seed):
            var random = SeededRandom(seed: seed, stream: 0x5EB5_E7)
            return closedUnderCreation(Set(pendingEntryOperationIDs.filter { _ in Bool.random(using: &random) }))
        }
    }

    /// `chosen` without the operations that name a node whose pending creation is not in it:
    /// a real file system never makes a name durable for an inode it never created.
    func closedUnderCreation(_ chosen: Set<Int>) -> Set<Int> {
        var kept = chosen
        var changed = true
        while changed {
            changed = false
            for directory in directories.values {
                for (operation, number) in zip(directory.pending, directory.pendingIDs) where kept.contains(number) {
                    let needsMissing = operation.contains { change in
                        guard let target = change.target, let creation = creatingOperation[target] else { return false }
                        return creation != number && !kept.contains(creation)
                    }
                    if needsMissing {
                        kept.remove(number)
                        changed = true
                    }
                }
            }
        }
        return kept
    }
}
