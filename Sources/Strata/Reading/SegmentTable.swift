import CStrata
@_spi(Engine) import StrataFormat
import StrataIO
import Synchronization

/// An open, immutable segment file (layout: docs/format/segment.md). The tail (footer,
/// filter, index) is read once when it opens; data blocks are read on demand through the
/// block cache.
///
/// Invariants:
/// 1. The file never changes while a table is open on it: segment files are written once,
///    synced, and only then listed in the manifest.
/// 2. The file is removed only when the table is marked obsolete (no longer in the newest
///    Version) and the last Version holding the table is gone: this object's deinit. So a
///    snapshot holding an old Version keeps reading its files.
/// 3. The mapping, when there is one, lives exactly as long as this object: bytes borrowed
///    from it stay valid while the table is held, so a mapped block needs no owner of its own.
final class SegmentTable: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable or Sendable, except `blocks`,
    // a fixed array written in init (but for its atomic flags) and freed in deinit.
    let meta: SegmentMeta
    let name: String
    /// The file's path, in the object the block views of this table refer to for their
    /// errors (`BlockView` rule 2: the table outlives every view of its mapping).
    private let blockFileName: BlockFileName
    var path: String { blockFileName.path }
    let tail: SegmentTail
    /// The open file, only where it could not be mapped: a mapped table closes its
    /// descriptor once mapped, so a store of thousands of files holds no descriptor per file
    /// (docs/limits.md, "Open files"), and the mapping keeps the bytes readable even after
    /// the file is removed. Compaction opens its own descriptor (`readBlock(_:using:)`).
    private let handle: (any FileHandle)?
    private let cache: BlockCache
    private let fileSystem: any FileSystem
    private let obsolete = Atomic<Bool>(false)
    /// The file mapped read-only where the file system can, so an uncompressed block is read
    /// in place: no copy, no cache entry, and the operating system's page cache holds it.
    private let mapping: MappedFile?
    /// `mapping`'s bytes, for the reads of blocks: binding the mapping itself retained and
    /// released it on every block read, a write to a line every reader of the file shares.
    private let mappedBytes: UnsafeRawBufferPointer?
    /// Per data block, 16 bytes: its offset (u64) and size (u32) from the index, and a flag
    /// (atomic u32) set once its checksum and restart array were checked. A mapped block is
    /// checked on its first use only (the file never changes, invariant 1). A point read
    /// finds all three in one cache line, where the index entries and a separate array of
    /// flags would cost two misses.
    private let blocks: UnsafeMutableRawPointer
    private static let blockSlotBytes = 16
    /// The index's separators packed into one buffer (`separatorStarts[i]..<separatorStarts[i + 1]`),
    /// so a binary search touches a few contiguous cache lines rather than one heap array per
    /// step: on a store much larger than the CPU caches, that is most of a point read's cost.
    private let separatorBytes: [UInt8]
    private let separatorStarts: [Int32]
    /// The user-key bytes every separator but the last shares, and for each of those
    /// separators the 8 bytes after them (big-endian, zero-padded): most of a search compares
    /// these words in one small array, and only separators whose word equals the key's are
    /// compared in full. The last separator is left out because it is usually a short key
    /// past the file's last (`SegmentBuilder.successor`, "1" after "0000…"), which would
    /// leave no shared prefix and make every word equal.
    let commonPrefix: [UInt8]
    private let fences: [UInt64]
    /// Every `fenceSampleStride`-th fence (`fences[0]`, `fences[16]`, …): a search finds its
    /// stretch of 16 fences here, in an array small enough to stay in the CPU caches, then
    /// searches those 16 (two cache lines). A plain binary search over the fences of a file
    /// of 2,000 blocks waited on about eleven dependent loads, most of them misses on a store
    /// larger than the caches (15% of the gets' time in readrandom1k at 1,000,000 keys).
    private let fenceSamples: [UInt64]
    private static let fenceSampleStride = 16

    var number: UInt64 { meta.fileNumber }
    var blockCount: Int { tail.index.count }

    private init(
        meta: SegmentMeta, name: String, path: String, tail: SegmentTail, handle: (any FileHandle)?,
        cache: BlockCache, fileSystem: any FileSystem, mapping: MappedFile?
    ) {
        self.mapping = mapping
        mappedBytes = mapping?.bytes
        var packed = [UInt8]()
        packed.reserveCapacity(tail.index.reduce(0) { $0 + $1.separator.count })
        var starts = [Int32]()
        starts.reserveCapacity(tail.index.count + 1)
        for entry in tail.index {
            starts.append(Int32(packed.count))
            packed.append(contentsOf: entry.separator)
        }
        starts.append(Int32(packed.count))
        separatorBytes = packed
        separatorStarts = starts
        let userKeys = tail.index.dropLast().map { $0.separator.dropLast(SegmentFormat.internalKeyTrailerSize) }
        var prefixLength = userKeys.first?.count ?? 0
        if let first = userKeys.first {
            for key in userKeys.dropFirst() {
                var n = 0
                while n < prefixLength && n < key.count && key[key.startIndex + n] == first[first.startIndex + n] { n += 1 }
                prefixLength = n
            }
            commonPrefix = Array(first.prefix(prefixLength))
        } else {
            commonPrefix = []
        }
        let fences = userKeys.map { key in key.withUnsafeBytes { SegmentTable.fence($0, after: prefixLength) } }
        self.fences = fences
        fenceSamples = Swift.stride(from: 0, to: fences.count, by: SegmentTable.fenceSampleStride).map { fences[$0] }
        blocks = .allocate(byteCount: max(tail.index.count, 1) * SegmentTable.blockSlotBytes, alignment: SegmentTable.blockSlotBytes)
        for (i, entry) in tail.index.enumerated() {
            let slot = blocks + i * SegmentTable.blockSlotBytes
            slot.storeBytes(of: entry.handle.offset, as: UInt64.self)
            // Blocks are cut at a few KiB and hold at most 64 MiB; a size past 4 GiB, which
            // only a damaged index can give, is clamped, and the shorter block then fails its
            // checksum (the tail already checked that every handle lies in the file).
            slot.storeBytes(of: UInt32(clamping: entry.handle.size), toByteOffset: 8, as: UInt32.self)
            (slot + 12).bindMemory(to: Atomic<UInt32>.self, capacity: 1).initialize(to: Atomic(0))
        }
        self.meta = meta
        self.name = name
        blockFileName = BlockFileName(path)
        self.tail = tail
        self.handle = handle
        self.cache = cache
        self.fileSystem = fileSystem
    }

    /// Opens the file `meta` names and checks its tail against the manifest's record of it.
    static func open(_ meta: SegmentMeta, directory: String, fileSystem: any FileSystem, cache: BlockCache) throws -> SegmentTable {
        let name = ManifestFormat.segmentFileName(meta.fileNumber)
        let path = fileSystem.path(directory, name)
        let handle: any FileHandle
        do {
            guard try fileSystem.kind(of: path) == .file else {
                throw StoreError(
                    .corruption,
                    "the manifest lists segment file \(name), which is missing; run strata-fsck (with --salvage it keeps what can still be read), or restore the store from a backup",
                    file: path)
            }
            handle = try fileSystem.openFileForReading(path)
        } catch let error as IOError {
            throw StoreError(error, while: "opening segment file \(name)")
        }
        do {
            let size = try handle.size()
            guard UInt64(size) == meta.fileSize else {
                throw StoreError(
                    .corruption,
                    "segment file \(name) is \(size) bytes, but the manifest says \(meta.fileSize); run strata-fsck (with --salvage it keeps what can still be read)",
                    file: path)
            }
            guard size >= SegmentFormat.footerSize else {
                throw StoreError(.corruption, "segment file \(name) is too short to hold a footer", file: path)
            }
            let footerBytes = try handle.read(at: size - Int64(SegmentFormat.footerSize), count: SegmentFormat.footerSize)
            let footerOffset = size - Int64(SegmentFormat.footerSize)
            let footer: SegmentFormat.Footer
            do {
                footer = try withBorrowedBytes(footerBytes) { raw throws(FormatError) in try SegmentFormat.Footer.decode(raw) }
            } catch {
                throw StoreError(error, file: path, baseOffset: footerOffset)
            }
            let start = SegmentTail.start(of: footer)
            guard start < size else {
                throw StoreError(.corruption, "segment footer points past the end of the file", file: path, offset: footerOffset)
            }
            let tailBytes = try handle.read(at: Int64(start), count: Int(size) - start)
            let tail: SegmentTail
            do {
                tail = try withBorrowedBytes(tailBytes) { raw throws(FormatError) in try SegmentTail(decoding: raw, tailOffset: start) }
            } catch {
                throw StoreError(error, file: path)
            }
            guard tail.footer.entryCount == meta.entryCount, tail.footer.largestSequence == meta.largestSequence,
                tail.footer.smallestSequence == meta.smallestSequence
            else {
                throw StoreError(
                    .corruption,
                    "segment file \(name) does not hold what the manifest says (entries or sequences differ); run strata-fsck (with --salvage it keeps what can still be read)",
                    file: path)
            }
            let mapping = try handle.mapReadOnly()
            if let mapping, mapping.bytes.count != Int(size) {
                throw StoreError(.corruption, "segment file \(name) changed size while being opened", file: path)
            }
            if mapping != nil { try? handle.close() }
            return SegmentTable(
                meta: meta, name: name, path: path, tail: tail, handle: mapping == nil ? handle : nil, cache: cache,
                fileSystem: fileSystem, mapping: mapping)
        } catch {
            try? handle.close()
            throw StoreError.wrapping(error, while: "opening segment file \(name)")
        }
    }

    deinit {
        for i in 0..<tail.index.count { checkedFlag(i).deinitialize(count: 1) }
        blocks.deallocate()
        try? handle?.close()
        if obsolete.load(ordering: .acquiring) {
            // Nothing references the file any more (invariant 2). A crash before this point
            // leaves an unreferenced file, which the next open removes.
            try? fileSystem.removeFile(path)
        }
    }

    /// Writes the file's bytes, synced, to a new file at `destination`, reading them through
    /// this table's own mapping or handle: for a checkpoint of a store opened read-only,
    /// whose files a writer in another process may have removed since (an open or mapped
    /// file lives on).
    func copy(to destination: String) throws {
        let output = try fileSystem.openFile(destination, create: true)
        do {
            let size = Int64(meta.fileSize)
            var offset: Int64 = 0
            while offset < size {
                let chunk = try read(at: offset, count: Int(min(size - offset, 1 << 20)), using: nil)
                guard !chunk.isEmpty else {
                    throw StoreError(.corruption, "segment file \(name) ended at byte \(offset) while being copied; the manifest says \(size)", file: path)
                }
                try output.write(chunk, at: offset)
                offset += Int64(chunk.count)
            }
            try output.sync()
            try output.close()
        } catch {
            try? output.close()
            try? fileSystem.removeFile(destination)
            throw error
        }
    }

    /// The file leaves the store once the last Version holding it is gone.
    func markObsolete() {
        obsolete.store(true, ordering: .releasing)
    }

    /// Block `i`'s offset and size, from `blocks`.
    @inline(__always)
    private func blockRange(_ i: Int) -> (start: Int, size: Int) {
        let slot = UnsafeRawPointer(blocks + i * SegmentTable.blockSlotBytes)
        return (Int(slot.load(as: UInt64.self)), Int(slot.load(fromByteOffset: 8, as: UInt32.self)))
    }

    /// Block `i`'s checked flag, in `blocks`.
    @inline(__always)
    private func checkedFlag(_ i: Int) -> UnsafeMutablePointer<Atomic<UInt32>> {
        (blocks + i * SegmentTable.blockSlotBytes + 12).assumingMemoryBound(to: Atomic<UInt32>.self)
    }

    /// Data block `i`: borrowed from the mapping when it is stored uncompressed, otherwise
    /// from the cache, or read, checked and decoded (and cached).
    func block(_ i: Int) throws -> BlockView {
        if let mappedBytes {
            let (start, size) = blockRange(i)
            let stored = UnsafeRawBufferPointer(rebasing: mappedBytes[start..<(start + size + SegmentFormat.blockTrailerSize)])
            if stored[size] == SegmentFormat.Compression.none.rawValue {
                let checked = checkedFlag(i)
                if checked.pointee.load(ordering: .acquiring) == 0 {
                    do {
                        _ = try SegmentFormat.verifyBlock(stored, what: "data block")
                    } catch {
                        throw StoreError(error, file: path, baseOffset: Int64(start))
                    }
                    do {
                        _ = try BlockView.checkRestarts(UnsafeRawBufferPointer(rebasing: stored[0..<size]), fileOffset: start, fileName: path)
                    } catch {
                        throw StoreError(error, file: path)
                    }
                    checked.pointee.store(1, ordering: .releasing)
                }
                // No owner: whoever reads this table's blocks holds the table, and so its
                // mapping (invariant 3).
                return BlockView(checked: UnsafeRawBufferPointer(rebasing: stored[0..<size]), mapping: nil, fileOffset: start, name: blockFileName)
            }
        }
        let blockHandle = tail.index[i].handle
        let key = BlockCache.Key(file: meta.fileNumber, offset: blockHandle.offset)
        if let cached = cache.get(key) { return cached.view }
        let block = try decodedBlock(i)
        cache.insert(key, block)
        return block.view
    }

    /// A descriptor of the file for `readBlock(_:using:)`: the table's own when it keeps one,
    /// otherwise a new one the caller closes (`ownsHandle`).
    func openForSequentialReading() throws -> (handle: any FileHandle, ownsHandle: Bool) {
        if let handle { return (handle, false) }
        do {
            return (try fileSystem.openFileForReading(path), true)
        } catch {
            throw StoreError.wrapping(error, while: "opening segment file \(name) to compact it")
        }
    }

    /// Data block `i` read through `handle` (from `openForSequentialReading`), checked and
    /// decoded, bypassing the cache and the mapping: for compaction, which reads each block
    /// once and should neither evict what readers use nor grow the process's resident
    /// memory with mapped pages.
    func readBlock(_ i: Int, using handle: any FileHandle) throws -> BlockView {
        try decodedBlock(i, using: handle).view
    }

    /// `count` bytes at `offset`: through `handle` when given, else the mapping, else the
    /// table's own handle.
    private func read(at offset: Int64, count: Int, using handle: (any FileHandle)?) throws -> [UInt8] {
        if let handle = handle ?? self.handle {
            return try handle.read(at: offset, count: count)
        }
        guard let mapping else { preconditionFailure("SegmentTable: a table without a mapping keeps its handle") }
        let start = Int(min(offset, Int64(mapping.bytes.count)))
        return Array(mapping.bytes[start..<min(start + count, mapping.bytes.count)])
    }

    private func decodedBlock(_ i: Int, using handle: (any FileHandle)? = nil) throws -> DataBlock {
        let blockHandle = tail.index[i].handle
        let stored: [UInt8]
        do {
            stored = try read(at: Int64(blockHandle.offset), count: Int(blockHandle.size) + SegmentFormat.blockTrailerSize, using: handle)
        } catch let error as IOError {
            throw StoreError(error, while: "reading segment file \(name)")
        }
        let contents = try stored.withUnsafeBytes { try decode($0, blockHandle) }
        do {
            return try DataBlock(contents: contents, fileOffset: Int(blockHandle.offset), fileName: path)
        } catch {
            throw StoreError(error, file: path)
        }
    }

    /// Checks a stored block's checksum and inflates it if compressed.
    private func decode(_ stored: UnsafeRawBufferPointer, _ blockHandle: SegmentFormat.BlockHandle) throws -> [UInt8] {
        do {
            return try SegmentFormat.readBlock(stored, handle: SegmentFormat.BlockHandle(offset: 0, size: blockHandle.size), what: "data block").contents
        } catch {
            throw StoreError(error, file: path, baseOffset: Int64(blockHandle.offset))
        }
    }

    /// The 8 bytes of `key` after its first `skip`, as a big-endian word, zero-padded. For
    /// two keys that share those first bytes, a smaller word means a smaller key.
    @inline(__always)
    static func fence(_ key: UnsafeRawBufferPointer, after skip: Int) -> UInt64 {
        var word: UInt64 = 0
        for i in 0..<8 {
            word <<= 8
            if skip + i < key.count { word |= UInt64(key[skip + i]) }
        }
        return word
    }

    /// The first block that may hold internal keys at or after (`userKey`, `sequence`), or
    /// `blockCount` if none does.
    func blockIndex(atOrAfter userKey: UnsafeRawBufferPointer, sequence: UInt64) -> Int {
        // Separators 0..<fences.count have words; the last one (index fences.count) has none.
        var low = 0
        var high = fences.count
        if userKey.count >= commonPrefix.count,
            commonPrefix.withUnsafeBytes({ compareKeys($0, UnsafeRawBufferPointer(rebasing: userKey[0..<commonPrefix.count])) == 0 })
        {
            // Narrow to the separators whose word equals the key's: before them every
            // separator is smaller, after them every one is larger.
            let word = SegmentTable.fence(userKey, after: commonPrefix.count)
            fences.withUnsafeBufferPointer { fences in
                fenceSamples.withUnsafeBufferPointer { samples in
                    low = SegmentTable.firstFence(fences, samples, notBefore: word, orAfter: false, slots: UnsafeRawPointer(blocks))
                    // The separators whose word equals the key's start at `low`: usually none
                    // or one, so a few steps forward find where they end, in lines the search
                    // just loaded, instead of a second search. Many equal words (keys alike
                    // well past their common prefix) take the second search.
                    high = low
                    while high < fences.count && high - low < 4 && fences[high] == word { high += 1 }
                    if high < fences.count && fences[high] == word {
                        high = SegmentTable.firstFence(fences, samples, notBefore: word, orAfter: true, slots: nil)
                    }
                }
            }
        }
        let i = fullSearch(userKey, sequence: sequence, low: low, high: high)
        // Every separator with a word is before the target: the last one decides.
        return i < fences.count ? i : fullSearch(userKey, sequence: sequence, low: fences.count, high: blockCount)
    }

    /// The first index whose fence is at least `word` (past `word` when `orAfter`), else
    /// `fences.count`: the samples narrow it to one stretch, whose fences are then searched.
    /// `slots`, when given, is the table's `blocks`: the stretch's block slots are requested
    /// with its fences, so that the slot of the block found (its offset, size and checked
    /// flag, which `block` reads next) is not a miss of its own after the search's.
    @inline(__always)
    private static func firstFence(
        _ fences: UnsafeBufferPointer<UInt64>, _ samples: UnsafeBufferPointer<UInt64>, notBefore word: UInt64, orAfter: Bool,
        slots: UnsafeRawPointer?
    ) -> Int {
        @inline(__always) func before(_ fence: UInt64) -> Bool { orAfter ? fence <= word : fence < word }
        var a = 0
        var b = samples.count
        while a < b {
            let m = (a + b) / 2
            if before(samples[m]) { a = m + 1 } else { b = m }
        }
        // Sample a - 1 is before the boundary and sample a (if any) is not: the boundary is
        // past the one and at most the other.
        let stride = fenceSampleStride
        var low = a > 0 ? (a - 1) * stride + 1 : 0
        var high = min(a * stride, fences.count)
        // The stretch spans two or three cache lines: load them together rather than one
        // per step of the search below.
        if !orAfter && low < high {
            strata_prefetch(fences.baseAddress! + low, (high - low) * MemoryLayout<UInt64>.stride)
            // One past the stretch too: the search can end just after its last fence.
            if let slots { strata_prefetch(slots + low * blockSlotBytes, (high - low + 1) * blockSlotBytes) }
        }
        while low < high {
            let m = (low + high) / 2
            if before(fences[m]) { low = m + 1 } else { high = m }
        }
        return low
    }

    /// The first index in `low..<high` whose separator is at or after the target, else `high`.
    private func fullSearch(_ userKey: UnsafeRawBufferPointer, sequence: UInt64, low: Int, high: Int) -> Int {
        let target = min(sequence, SegmentFormat.maxSequence) << 8 | 0xFF
        return separatorBytes.withUnsafeBytes { packed in
            separatorStarts.withUnsafeBufferPointer { starts in
                var low = low
                var high = high
                while low < high {
                    let mid = (low + high) / 2
                    let start = Int(starts[mid])
                    let end = Int(starts[mid + 1])
                    let user = UnsafeRawBufferPointer(rebasing: packed[start..<(end - 8)])
                    let trailer = packed.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self).littleEndian
                    if compareInternal(user, trailer, userKey, target) < 0 { low = mid + 1 } else { high = mid }
                }
                return low
            }
        }
    }

    /// The newest version of `key` at or below `sequence` in this file, copied.
    func get(_ key: UnsafeRawBufferPointer, hash: UInt64?, at sequence: UInt64, keyBuffer: KeyBuffer, block found: Int? = nil) throws -> MemTable.Lookup {
        guard let found = try borrowEntry(key, hash: hash, at: sequence, keyBuffer: keyBuffer, block: found) else { return .absent }
        return found.withBytes { $0.map { .value(copyBytes($0)) } ?? .deleted }
    }

    /// The newest version of `key` at or below `sequence` in this file, borrowed from its
    /// data block (`bytes` nil for a deletion), or nil when the file holds no version of the
    /// key. `hash` is the key's `BloomFilter.hash`, nil to skip the filter: for the deepest
    /// level, where a read that got this far usually finds its key, the filter's probe (a
    /// cache miss on a large store) buys nothing. `block`, when given, is what
    /// `prefetchBlock` returned for the same key and sequence.
    func borrowEntry(_ key: UnsafeRawBufferPointer, hash: UInt64?, at sequence: UInt64, keyBuffer: KeyBuffer, block found: Int? = nil) throws -> BorrowedValue?
    {
        if let hash { guard tail.filter.mayContain(hash: hash) else { return nil } }
        let i = found ?? blockIndex(atOrAfter: key, sequence: sequence)
        guard i < blockCount else { return nil }
        var cursor = BlockCursor(block: try block(i), keyBuffer: keyBuffer)
        var found = try cursor.seek(userKey: key, sequence: sequence)
        if !found, i + 1 < blockCount {
            // The separator can sit between the block's last key and the next block's
            // first: the version wanted then starts the next block.
            cursor = BlockCursor(block: try block(i + 1), keyBuffer: keyBuffer)
            found = try cursor.next()
        }
        guard found, compareKeys(cursor.userKey, key) == 0 else { return nil }
        // The block's owner goes with the bytes: a decoded block may leave the cache while
        // the caller reads them.
        return BorrowedValue(bytes: cursor.isTombstone ? nil : cursor.value, owner: cursor.block.owner)
    }

    /// Finds the data block that may hold (`key`, `sequence`) and starts loading its first
    /// line and its end (restart array and trailer, which `block` and the search read
    /// first), without waiting: a point read calls this for the deepest level's file before
    /// it tests the filters above, so the block's misses overlap with theirs. Returns the
    /// block's index for `get(…, block:)`.
    func prefetchBlock(_ key: UnsafeRawBufferPointer, sequence: UInt64) -> Int {
        let i = blockIndex(atOrAfter: key, sequence: sequence)
        if i < blockCount, let base = mappedBytes?.baseAddress {
            let (start, size) = blockRange(i)
            let end = start + size + SegmentFormat.blockTrailerSize
            strata_prefetch(base + start, 1)
            strata_prefetch(base + max(start, end - 64), min(64, end - start))
        }
        return i
    }

    /// Whether `key` lies in this file's key range.
    func covers(_ key: UnsafeRawBufferPointer) -> Bool {
        smallestKey.withUnsafeBytes { compareKeys(key, $0) >= 0 } && largestKey.withUnsafeBytes { compareKeys(key, $0) <= 0 }
    }

    var smallestKey: [UInt8] { meta.smallestKey }
    var largestKey: [UInt8] { meta.largestKey }
}
