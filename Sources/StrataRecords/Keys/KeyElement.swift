import Foundation

/// One element of a ``KeyTuple``: a value whose encoding sorts, byte by byte, the way the
/// value itself sorts.
///
/// Keys are built from elements and compared element by element (see ``KeyTuple``). The byte
/// layout of every case is specified in docs/format/keys.md.
///
/// ## Value order
///
/// `KeyElement` is `Comparable`, and its order is exactly the order of the encoded bytes:
/// for any two elements `a` and `b`, `a < b` if and only if the encoding of `a` is
/// lexicographically less than the encoding of `b`. Within one case:
///
/// - ``int(_:)`` and ``uint(_:)``: numeric order, negative numbers included.
/// - ``bool(_:)``: `false` before `true`.
/// - ``double(_:)``: IEEE 754 total order (`isTotallyOrdered(belowOrEqualTo:)`): negative
///   NaNs first, then -infinity, the negative numbers, -0.0, 0.0, the positive numbers,
///   +infinity, and positive NaNs last.
/// - ``string(_:)``: by Unicode scalar values of the strings' NFC forms, the order Swift
///   specifies for `String`; strings Swift considers equal (the same text, composed or
///   decomposed) are equal elements and encode to the same bytes. (The standard library's
///   `String.<` itself misorders a few Hangul sequences; keys follow the specified order.)
/// - ``bytes(_:)``: lexicographic, a prefix first.
/// - ``uuid(_:)``: lexicographic over the 16 bytes of `UUID.uuid`.
/// - ``date(_:)``: chronological (`Date`'s own order); -0.0 and 0.0 seconds are the same
///   date, and a date whose time is NaN sorts after every other date.
/// - ``tuple(_:)``: element by element; a tuple that is a prefix of another sorts first.
/// - ``descending(_:)``: the reverse of the inner element's order.
///
/// Elements of different cases compare by their type code (docs/format/keys.md): bytes,
/// string, tuple, signed integer, unsigned integer, `false`, `true`, double, date, UUID,
/// then every descending element, whose types come in the reverse of that order. So
/// `.int(5)` sorts before `.uint(3)`: signed and unsigned integers are separate types, which
/// keeps every `UInt64` exact and lets decoding return the case that was encoded.
///
/// Equality follows the same rule: two elements are equal exactly when they encode to the
/// same bytes. So `.double(.nan) == .double(.nan)`, `.double(-0.0) != .double(0.0)`, and
/// `.descending(.descending(x)) == x` (marking an element descending twice makes it
/// ascending again).
public enum KeyElement: Sendable {
    /// A signed integer. Smaller signed types widen into it; see ``KeyElementConvertible``.
    case int(Int64)
    /// An unsigned integer. Smaller unsigned types widen into it.
    case uint(UInt64)
    /// A Boolean, `false` before `true`.
    case bool(Bool)
    /// A double, in IEEE 754 total order; every bit pattern, NaN payloads included, round-trips.
    case double(Double)
    /// A string, stored as its NFC-normalised UTF-8; any character is allowed, `"\0"` too.
    case string(String)
    /// A byte string; any byte is allowed, zero too.
    case bytes([UInt8])
    /// A UUID, as its 16 bytes.
    case uuid(UUID)
    /// A point in time, stored as its `timeIntervalSinceReferenceDate`, exactly.
    case date(Date)
    /// A nested tuple: its elements keep their order inside the enclosing key.
    case tuple([KeyElement])
    /// The inner element in reverse order: for building keys that list, for example, the
    /// newest entries first.
    indirect case descending(KeyElement)
}

extension KeyElement {
    /// The element with pairs of `.descending` removed, and whether one is left. Iterative,
    /// so a long chain of wrappers costs no stack.
    var unwrapped: (element: KeyElement, descending: Bool) {
        var element = self
        var descending = false
        while case .descending(let inner) = element {
            element = inner
            descending.toggle()
        }
        return (element, descending)
    }

    /// Where an ascending element's type sorts among the others: the order of the type codes.
    private var typeRank: Int {
        switch self {
        case .bytes: 0
        case .string: 1
        case .tuple: 2
        case .int: 3
        case .uint: 4
        case .bool: 5
        case .double: 6
        case .date: 7
        case .uuid: 8
        case .descending: 9
        }
    }

    /// -1, 0 or 1 as `lhs` sorts before, with, or after `rhs`, by value (not by encoding).
    static func compare(_ lhs: KeyElement, _ rhs: KeyElement) -> Int {
        let (left, leftDescending) = lhs.unwrapped
        let (right, rightDescending) = rhs.unwrapped
        if leftDescending != rightDescending {
            return leftDescending ? 1 : -1
        }
        return leftDescending ? compareAscending(right, left) : compareAscending(left, right)
    }

    /// `compare` for two elements that are not `.descending`.
    private static func compareAscending(_ lhs: KeyElement, _ rhs: KeyElement) -> Int {
        if lhs.typeRank != rhs.typeRank {
            return sign(lhs.typeRank, rhs.typeRank)
        }
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)):
            return sign(a, b)
        case (.uint(let a), .uint(let b)):
            return sign(a, b)
        case (.bool(let a), .bool(let b)):
            return sign(a ? 1 : 0, b ? 1 : 0)
        case (.double(let a), .double(let b)):
            return totalOrder(a, b)
        case (.date(let a), .date(let b)):
            return totalOrder(canonicalTime(a), canonicalTime(b))
        case (.string(let a), .string(let b)):
            // By NFC code units, not with `String.<`: the order Swift specifies for strings, but
            // its `<` gets some Hangul sequences wrong (it sorts "\u{AC00}\0" before
            // "\u{1100}\u{1161}", which equals "\u{AC00}", a prefix of it).
            return a == b ? 0 : compareBytes(a._nfcCodeUnits, b._nfcCodeUnits)
        case (.bytes(let a), .bytes(let b)):
            return compareBytes(a, b)
        case (.uuid(let a), .uuid(let b)):
            return compareBytes(uuidBytes(a), uuidBytes(b))
        case (.tuple(let a), .tuple(let b)):
            for (x, y) in zip(a, b) {
                let order = compare(x, y)
                if order != 0 { return order }
            }
            return sign(a.count, b.count)
        default:
            // Equal ranks mean equal cases, and `.descending` was unwrapped by the caller.
            preconditionFailure("KeyElement.compareAscending: cases \(lhs) and \(rhs) have one rank")
        }
    }

    private static func sign<T: Comparable>(_ a: T, _ b: T) -> Int {
        a == b ? 0 : (a < b ? -1 : 1)
    }

    /// IEEE 754 total order; bit patterns that differ are different values, even two NaNs.
    private static func totalOrder(_ a: Double, _ b: Double) -> Int {
        if a.bitPattern == b.bitPattern { return 0 }
        return a.isTotallyOrdered(belowOrEqualTo: b) ? -1 : 1
    }

    private static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a == b { return 0 }
        return a.lexicographicallyPrecedes(b) ? -1 : 1
    }

    /// A date's time with the distinctions `Date` does not make removed: -0.0 becomes 0.0 and
    /// every NaN the one canonical NaN, so dates that are equal encode the same.
    static func canonicalTime(_ date: Date) -> Double {
        let time = date.timeIntervalSinceReferenceDate
        if time.isNaN { return .nan }
        return time == 0 ? 0 : time
    }

    static func uuidBytes(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }
}

extension KeyElement: Comparable {
    public static func < (lhs: KeyElement, rhs: KeyElement) -> Bool {
        compare(lhs, rhs) < 0
    }

    public static func == (lhs: KeyElement, rhs: KeyElement) -> Bool {
        compare(lhs, rhs) == 0
    }
}

extension KeyElement: Hashable {
    public func hash(into hasher: inout Hasher) {
        let (element, descending) = unwrapped
        hasher.combine(descending)
        hasher.combine(element.typeRank)
        switch element {
        case .int(let value): hasher.combine(value)
        case .uint(let value): hasher.combine(value)
        case .bool(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value.bitPattern)
        case .date(let value): hasher.combine(Self.canonicalTime(value).bitPattern)
        // String's hash, like its `==`, ignores the difference between composed and
        // decomposed text.
        case .string(let value): hasher.combine(value)
        case .bytes(let value): hasher.combine(value)
        case .uuid(let value): hasher.combine(value)
        case .tuple(let elements):
            hasher.combine(elements.count)
            for inner in elements { hasher.combine(inner) }
        case .descending: preconditionFailure("KeyElement.hash: unwrapped element is descending")
        }
    }
}

extension KeyElement: CustomStringConvertible {
    /// A short, readable form for logs and test failures: `("users", 42, desc(true))`.
    public var description: String {
        switch self {
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)u"
        case .bool(let value): "\(value)"
        case .double(let value):
            // A NaN's payload and sign matter to the order, so show its bits.
            value.isNaN ? "nan(0x\(String(value.bitPattern, radix: 16)))" : "\(value)"
        case .string(let value): value.debugDescription
        case .bytes(let value): "0x" + value.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        case .uuid(let value): value.uuidString
        case .date(let value): "date(\(value.timeIntervalSinceReferenceDate))"
        case .tuple(let elements): "(" + elements.map(\.description).joined(separator: ", ") + ")"
        case .descending(let inner): "desc(\(inner))"
        }
    }
}
