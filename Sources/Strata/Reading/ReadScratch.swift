import CStrata
@_spi(Engine) import StrataFormat
import Synchronization

#if canImport(Glibc)
    import Glibc
    /// What `pthread_key_create` calls with a thread's value when the thread ends.
    private typealias SlotDestructor = @convention(c) (UnsafeMutableRawPointer?) -> Void
#elseif canImport(Darwin)
    import Darwin
    private typealias SlotDestructor = @convention(c) (UnsafeMutableRawPointer) -> Void
#endif

/// Per-thread objects a read would otherwise allocate every time: the key buffer a point read
/// decodes block entries into, and a spare scan-error record for the next read transaction.
/// Each is made on the thread's first use and released when the thread ends. The thread's
/// read guard (`ReadGuards`) is kept here too, claimed on first use and given back when the
/// thread ends.
///
/// A random get from a file allocated both; with their releases that was about a tenth of its
/// instructions. The objects sit in C thread-local slots (`strata_thread_slots`), which cost a
/// call and a load to reach (`pthread_getspecific` and `pthread_setspecific` on every read
/// cost as much as the allocations); a `pthread` key is set once per thread, only so that its
/// destructor releases them when the thread ends.
enum ReadScratch {
    private static let keyBufferSlot = 0
    private static let errorsSlot = 1
    /// Non-null once the thread's end is taken care of (`cleanupKey` set).
    private static let registeredSlot = 2
    /// The thread's `ReadGuards.shared` slot plus one, or `noGuard` when none was free.
    private static let guardSlot = 3
    private static let noGuard = UInt.max

    /// Its destructor releases a thread's objects; its value is the thread's slot array.
    private static let cleanupKey: pthread_key_t = makeKey { raw in releaseSlots(raw) }

    private static func makeKey(_ destructor: @escaping SlotDestructor) -> pthread_key_t {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, destructor)
        precondition(created == 0, "ReadScratch: pthread_key_create failed (\(created))")
        return key
    }

    private static func releaseSlots(_ raw: UnsafeMutableRawPointer?) {
        guard let slots = raw?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self) else { return }
        if let buffer = slots[keyBufferSlot] { Unmanaged<KeyBuffer>.fromOpaque(buffer).release() }
        if let errors = slots[errorsSlot] { Unmanaged<ReadErrors>.fromOpaque(errors).release() }
        if let raw = slots[guardSlot], UInt(bitPattern: raw) != noGuard {
            ReadGuards.shared.giveBack(Int(bitPattern: raw) - 1)
        }
        slots[keyBufferSlot] = nil
        slots[errorsSlot] = nil
        slots[guardSlot] = nil
        slots[registeredSlot] = nil
    }

    @inline(__always)
    private static var slots: UnsafeMutablePointer<UnsafeMutableRawPointer?> { strata_thread_slots() }

    /// Stores `object`, retained, in an empty slot of this thread.
    private static func store(_ object: AnyObject, in slot: Int) {
        registerCleanup()
        slots[slot] = Unmanaged.passRetained(object).toOpaque()
    }

    /// Makes sure the thread's end releases what its slots hold.
    private static func registerCleanup() {
        let slots = self.slots
        if slots[registeredSlot] == nil {
            pthread_setspecific(cleanupKey, UnsafeRawPointer(slots))
            slots[registeredSlot] = UnsafeMutableRawPointer(slots)
        }
    }

    /// This thread's read guard, claimed on its first call; nil when every guard is taken
    /// (the thread then reads as if it had none, and asks again only in a new thread).
    @inline(__always)
    static func readGuard() -> UnsafeMutablePointer<Atomic<UInt>>? {
        if let raw = slots[guardSlot] {
            let bits = UInt(bitPattern: raw)
            return bits == noGuard ? nil : ReadGuards.shared.slot(Int(bits) - 1)
        }
        return claimReadGuard()
    }

    private static func claimReadGuard() -> UnsafeMutablePointer<Atomic<UInt>>? {
        registerCleanup()
        guard let index = ReadGuards.shared.claim() else {
            slots[guardSlot] = UnsafeMutableRawPointer(bitPattern: noGuard)
            return nil
        }
        slots[guardSlot] = UnsafeMutableRawPointer(bitPattern: index + 1)
        return ReadGuards.shared.slot(index)
    }

    /// Runs `body` with this thread's key buffer, which it must not keep. Safe to share
    /// because a point read's block search calls out to nothing: no other read can run on the
    /// thread while the buffer is in use, and nothing the read returns points into it (a
    /// borrowed value points into its block).
    @inline(__always)
    static func withKeyBuffer<R>(_ body: (KeyBuffer) throws -> R) rethrows -> R {
        if let raw = slots[keyBufferSlot] {
            return try Unmanaged<KeyBuffer>.fromOpaque(raw)._withUnsafeGuaranteedRef(body)
        }
        let buffer = KeyBuffer()
        store(buffer, in: keyBufferSlot)
        return try body(buffer)
    }

    /// An empty scan-error record for a read transaction: this thread's spare, or a new one.
    @inline(__always)
    static func takeErrors() -> ReadErrors {
        let slots = self.slots
        guard let raw = slots[errorsSlot] else { return ReadErrors() }
        slots[errorsSlot] = nil
        return Unmanaged<ReadErrors>.fromOpaque(raw).takeRetainedValue()
    }

    /// Keeps `errors` as this thread's spare once its transaction has ended, if nothing else
    /// holds it (a scan the closure kept does, and may still record into it) and the thread
    /// has no spare yet (a read nested in another's closure returns its record first).
    @inline(__always)
    static func giveBack(_ errors: inout ReadErrors) {
        guard isKnownUniquelyReferenced(&errors), slots[errorsSlot] == nil else { return }
        errors.reset()
        store(errors, in: errorsSlot)
    }
}
