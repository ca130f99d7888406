/// Objects held unretained, for the loops of a point read: reaching an object through an
/// array retained and released it, a write to a line every reader thread shares. Whoever
/// makes one keeps the objects alive for as long as it is used, and deallocates it once
/// (`Version` invariant 3, `FileRanges` invariant 3).
struct UnretainedList<Element: AnyObject>: @unchecked Sendable {
    // @unchecked Sendable: the buffer is written in init only, then read by any thread.
    private let elements: UnsafeMutablePointer<Unmanaged<Element>>
    let count: Int

    init(_ list: [Element]) {
        count = list.count
        elements = .allocate(capacity: max(list.count, 1))
        for (i, element) in list.enumerated() { (elements + i).initialize(to: .passUnretained(element)) }
    }

    @inline(__always)
    subscript(i: Int) -> Unmanaged<Element> { elements[i] }

    func deallocate() {
        elements.deallocate()
    }
}
