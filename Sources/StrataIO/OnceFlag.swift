import Synchronization

/// A flag that goes from false to true once; `set()` tells the one caller that flipped it.
final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .acquiring) }

    /// Sets the flag; true only for the call that changed it.
    func set() -> Bool {
        value.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
