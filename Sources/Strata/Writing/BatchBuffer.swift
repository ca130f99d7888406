@_spi(Engine) import StrataFormat

/// A write transaction's batch, built while its closure runs: room for the batch header,
/// then one operation per write in the WAL's batch format (docs/format/wal.md, "Batch
/// payload"). The commit fills in the header and stages the bytes as they are, so a put's
/// key and value are copied once into this buffer and once into the log, and the writer's
/// loop over the writes touches no reference count.
///
/// Invariants:
/// 1. `count >= BatchFormat.headerSize`: the header's room is always there, at the start.
/// 2. Bytes below `count` are never moved within the buffer; growing copies them to a larger
///    allocation, so holders keep offsets, never pointers, across an append.
/// 3. Used by one thread at a time: the transaction's, then the writer's (the same thread;
///    the writer queue runs both).
final class BatchBuffer {
    // One thread at a time (invariant 3): the runtime's exclusivity check, a thread-local
    // lookup per access, would guard nothing.
    @exclusivity(unchecked) private(set) var base: UnsafeMutableRawPointer
    @exclusivity(unchecked) private(set) var capacity: Int
    @exclusivity(unchecked) private(set) var count = BatchFormat.headerSize

    init(capacity: Int = 4096) {
        self.capacity = max(capacity, BatchFormat.headerSize)
        base = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit {
        base.deallocate()
    }

    /// Empties it for the next transaction, keeping its allocation.
    func reset() {
        count = BatchFormat.headerSize
    }

    /// Drops every operation appended after the buffer held `count` bytes: a savepoint's
    /// undo (`WriteTransaction.savepoint`). Nothing below `count` moves (invariant 2).
    func truncate(to count: Int) {
        precondition(count >= BatchFormat.headerSize && count <= self.count, "BatchBuffer: truncating past its bytes")
        self.count = count
    }

    /// Appends one operation (a delete when `value` is nil) and returns where its key and
    /// value start in the buffer.
    @inline(__always)
    func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) -> (key: Int, value: Int) {
        let needed = count + key.count + (value?.count ?? 0) + BatchFormat.maxOperationOverhead
        if needed > capacity { grow(toHold: needed) }
        let start = count
        let stored = BatchFormat.storeOperation(key: key, value: value, at: base + start)
        count = start + stored.end
        return (start + stored.keyStart, start + stored.valueStart)
    }

    @inline(never)
    private func grow(toHold needed: Int) {
        let larger = max(needed, 2 * capacity)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 8)
        moved.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    /// Takes `other`'s bytes in place of its own, leaving `other` with these.
    func take(_ other: BatchBuffer) {
        swap(&base, &other.base)
        swap(&capacity, &other.capacity)
        swap(&count, &other.count)
    }

    /// `count` bytes at `offset`.
    @inline(__always)
    func bytes(at offset: Int, count: Int) -> UnsafeRawBufferPointer {
        assert(offset >= 0 && offset + count <= self.count, "BatchBuffer: bytes past the end")
        return UnsafeRawBufferPointer(start: base + offset, count: count)
    }

    /// The whole batch, header first, once `finish` has written the header.
    var payload: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Writes the header over the room kept for it.
    func finish(sequence: UInt64, syncedThrough: UInt64, operations: Int) {
        assert(count >= BatchFormat.headerSize, "BatchBuffer invariant 1")
        BatchFormat.storeHeader(sequence: sequence, syncedThrough: syncedThrough, count: UInt32(operations), at: base)
    }
}
