// Building the state a disk may be in after power loss, from the durable state plus some of
// the pending operations (see the model at the top of SimulatedFileSystem.swift).
import StrataIO

extension SimulatedFileSystem {
    /// Which post-power-loss state `crashImage(_:)` builds.
    public enum CrashMode: Sendable, Hashable {
        /// Every unsynced change is lost: exactly what `sync()` and `syncDirectory` made
        /// durable survives.
        case loseAllUnsynced
        /// Every unsynced change survives: the live state.
        case keepAll
        /// One possible state, fixed by `seed`: each directory keeps a random prefix of its
        /// unsynced entry operations; each file keeps, loses or tears each unsynced operation
        /// (half the time an in-order prefix with the next write possibly torn, as an append-
        /// only log usually ends; otherwise each operation independently, as a device that
        /// reorders writes may leave it).
        case random(seed: UInt64)
        /// One possible state of a file system that reorders metadata, fixed by `seed`: each
        /// unsynced entry operation (create, mkdir, rename, unlink) survives or not on its
        /// own, whatever its order, except that nothing naming a node survives without the
        /// node's creation; files as in `.random`.
        case reordered(seed: UInt64)
        /// Exactly the unsynced entry operations numbered in `kept` (see
        /// `pendingEntryOperations`) survive, less any naming a node whose creation does not;
        /// each file keeps its unsynced changes when `keepingUnsyncedData`, else its synced
        /// bytes only.
        case entryOperations(kept: Set<Int>, keepingUnsyncedData: Bool)
    }

    /// The unit a torn write is torn in: each sector of a write, aligned to absolute file
    /// offsets, gets the new bytes, keeps the old ones, or gets garbage.
    public static let sectorSize = 512

    /// A new file system holding one state this one's disk could be in if power failed now.
    /// It has no open handles, no locks, no crash or fault injection, and everything in it is
    /// durable. This file system is unchanged (it may be crashed or not).
    /// Deterministic: the same operations and mode give the same image.
    public func crashImage(_ mode: CrashMode) -> SimulatedFileSystem {
        SimulatedFileSystem(state: state.withLock { $0.crashImage(mode) })
    }

    /// `crashImage(.random(seed: seed))`.
    public func crash(seed: UInt64) -> SimulatedFileSystem {
        crashImage(.random(seed: seed))
    }
}

extension SimulatedState {
    func crashImage(_ mode: SimulatedFileSystem.CrashMode) -> SimulatedState {
        var image = SimulatedState()
        // Same node ids as here, so random choices (seeded per node id) do not depend on the
        // order nodes are visited, and an image of an image stays comparable.
        image.nextNodeID = nextNodeID
        var visited: Set<Int> = [Self.rootID]
        var stack = [Self.rootID]
        let keptOperations = entryOperationsKept(mode)
        while let id = stack.popLast() {
            let entries = directories[id]!.entriesAfterCrash(mode, id: id, keeping: keptOperations)
            var kept: [String: Int] = [:]
            for name in entries.keys.sorted() {
                let target = entries[name]!
                if let file = files[target] {
                    // Several names may share an inode after a half-undone rename: one copy.
                    if image.files[target] == nil {
                        image.files[target] = FileNode(synced: file.contentsAfterCrash(mode, id: target))
                    }
                    kept[name] = target
                } else if directories[target] != nil, visited.insert(target).inserted {
                    // A second name for a directory (a half-undone directory rename) is
                    // dropped, so the image stays a tree.
                    kept[name] = target
                    stack.append(target)
                }
            }
            image.directories[id] = DirectoryNode(synced: kept)
        }
        return image
    }
}

extension DirectoryNode {
    /// The durable entries plus the pending entry operations numbered in `kept` when given,
    /// otherwise a prefix of them.
    func entriesAfterCrash(_ mode: SimulatedFileSystem.CrashMode, id: Int, keeping kept: Set<Int>?) -> [String: Int] {
        if let kept {
            var result = durableEntries
            for (operation, number) in zip(pending, pendingIDs) where kept.contains(number) {
                for change in operation { result[change.name] = change.target }
            }
            return result
        }
        let keptCount: Int
        switch mode {
        case .reordered, .entryOperations:
            preconditionFailure("a reordered image names the operations it keeps")
        case .loseAllUnsynced:
            keptCount = 0
        case .keepAll:
            keptCount = pending.count
        case .random(let seed):
            var random = SeededRandom(seed: seed, stream: UInt64(id))
            keptCount = Int.random(in: 0...pending.count, using: &random)
        }
        var result = durableEntries
        for operation in pending.prefix(keptCount) {
            for change in operation { result[change.name] = change.target }
        }
        return result
    }
}

/// What a crash did to one pending file operation.
enum CrashFate {
    case kept, lost, torn
}

extension FileNode {
    /// The durable contents with each pending operation kept, lost or torn.
    func contentsAfterCrash(_ mode: SimulatedFileSystem.CrashMode, id: Int) -> SparseBytes {
        switch mode {
        case .loseAllUnsynced:
            return durable
        case .keepAll:
            return live
        case .entryOperations(_, let keepingUnsyncedData):
            return keepingUnsyncedData ? live : durable
        case .random(let seed), .reordered(let seed):
            guard !pending.isEmpty else { return durable }
            var random = SeededRandom(seed: seed, stream: UInt64(id))
            var contents = durable
            for (operation, fate) in zip(pending, Self.fates(of: pending, using: &random)) {
                switch fate {
                case .kept: operation.apply(to: &contents)
                case .lost: break
                case .torn: operation.applyTorn(to: &contents, using: &random)
                }
            }
            return contents
        }
    }

    static func fates(of operations: [PendingFileOperation], using random: inout SeededRandom) -> [CrashFate] {
        if Bool.random(using: &random) {
            // In order up to a point, the operation at that point possibly torn.
            let cut = Int.random(in: 0...operations.count, using: &random)
            return operations.indices.map { index -> CrashFate in
                if index < cut { return .kept }
                if index == cut, operations[index].isWrite, Bool.random(using: &random) { return .torn }
                return .lost
            }
        }
        return operations.map { operation -> CrashFate in
            switch Int.random(in: 0..<(operation.isWrite ? 3 : 2), using: &random) {
            case 0: .kept
            case 1: .lost
            default: .torn
            }
        }
    }
}

extension PendingFileOperation {
    var isWrite: Bool {
        if case .write = self { return true }
        return false
    }

    /// Applies a write sector by sector, each sector new, old or garbage. The file still grows
    /// to the end of the write (old bytes past the old end are zeros). Only writes tear; any
    /// other operation is applied whole.
    func applyTorn(to contents: inout SparseBytes, using random: inout SeededRandom) {
        guard case .write(let offset, let bytes) = self, !bytes.isEmpty else {
            apply(to: &contents)
            return
        }
        let sectorSize = SimulatedFileSystem.sectorSize
        let end = offset + bytes.count
        if end > contents.count { contents.resize(to: end) }
        var start = offset
        while start < end {
            let sectorEnd = min((start / sectorSize + 1) * sectorSize, end)
            switch random.next() % 3 {
            case 0: contents.write(Array(bytes[(start - offset)..<(sectorEnd - offset)]), at: start)
            case 1: break
            default: contents.write(random.bytes(count: sectorEnd - start), at: start)
            }
            start = sectorEnd
        }
    }
}
