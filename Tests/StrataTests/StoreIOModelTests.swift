// Model-based test of StoreIO compositions: random trees of primitives and combinators
// (flatMap chains whose next step depends on the value read, zip, sequence, map, read and
// write closures, nested tx.run, .just, .readWrite, steps that throw), each run against the
// store through a randomly chosen entry point while a parallel interpretation of the same
// tree runs against ReferenceModel. After every run it checks the value, that a throwing
// composition applied nothing and its error came back unchanged, the commit count, and the
// whole store; reads inside a composition must see its own earlier writes, since the model's
// reads do. Replay a failure with STRATA_SEED=<seed>; run ten times longer with
// STRATA_LONG_TESTS=1.
import Strata
import StrataTestSupport
import Testing

// MARK: - Values

/// A composition's value in one comparable shape: each primitive's value is mapped into it,
/// and zip, sequence and the closures build pairs and lists of it.
private indirect enum IOValue: Sendable, Equatable, CustomStringConvertible {
    case unit
    case int(Int)
    case bytes([UInt8]?)
    case entries([Entry])
    case pair(IOValue, IOValue)
    case list([IOValue])

    /// A canonical encoding: the next step of a flatMap is generated from its digest, and
    /// value-dependent writes store a piece of it, so both must not depend on hashing seeds.
    var encoded: [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }

    private func append(to out: inout [UInt8]) {
        func length(_ count: Int) { out += withUnsafeBytes(of: UInt32(count).littleEndian) { Array($0) } }
        switch self {
        case .unit:
            out.append(0)
        case .int(let n):
            out.append(1)
            out += withUnsafeBytes(of: Int64(n).littleEndian) { Array($0) }
        case .bytes(nil):
            out.append(2)
        case .bytes(let bytes?):
            out.append(3)
            length(bytes.count)
            out += bytes
        case .entries(let entries):
            out.append(4)
            length(entries.count)
            for entry in entries {
                length(entry.key.count)
                out += entry.key
                length(entry.value.count)
                out += entry.value
            }
        case .pair(let first, let second):
            out.append(5)
            first.append(to: &out)
            second.append(to: &out)
        case .list(let values):
            out.append(6)
            length(values.count)
            for value in values { value.append(to: &out) }
        }
    }

    /// FNV-1a of the encoding.
    var digest: UInt64 {
        encoded.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    var description: String {
        switch self {
        case .unit: return "()"
        case .int(let n): return "\(n)"
        case .bytes(let bytes): return TestEnvironment.hex(bytes, limit: 8)
        case .entries(let entries):
            let shown = entries.prefix(8).map { "\(TestEnvironment.hex($0.key))=\(TestEnvironment.hex($0.value, limit: 4))" }
            return "[" + shown.joined(separator: " ") + (entries.count > 8 ? " …\(entries.count) entries]" : "]")
        case .pair(let first, let second): return "(\(first), \(second))"
        case .list(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

/// The error a composition's throwing step throws; the caller must get this very value back.
private struct IOModelError: Error, Equatable {
    let token: UInt64
}

/// What the model expects of an empty key: the engine refuses it with `.invalidArgument`.
private struct IOModelInvalidArgument: Error {}

/// How a run ended, the store's and the model's in one comparable form.
private enum IOOutcome: Equatable, CustomStringConvertible {
    case value(IOValue)
    case thrown(IOModelError)
    case invalidArgument
    case unexpected(String)

    init(_ result: Result<IOValue, any Error>) {
        switch result {
        case .success(let value):
            self = .value(value)
        case .failure(let error as IOModelError):
            self = .thrown(error)
        case .failure(let error as StoreError) where error.code == .invalidArgument:
            self = .invalidArgument
        case .failure(let error):
            self = .unexpected("\(type(of: error)): \(error)")
        }
    }

    var succeeded: Bool {
        if case .value = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .value(let value): return "value \(value)"
        case .thrown(let error): return "IOModelError(\(error.token))"
        case .invalidArgument: return "StoreError(.invalidArgument)"
        case .unexpected(let text): return "unexpected error \(text)"
        }
    }
}

// MARK: - Plans

/// A description of a composition, from which both the `StoreIO` and the model's
/// interpretation are made.
private indirect enum IOPlan: Sendable, CustomStringConvertible {
    case just(IOValue)
    case get([UInt8])
    case scanPrefix([UInt8])
    case scanRange(from: [UInt8], to: [UInt8]?)
    case put([UInt8], [UInt8])
    /// A put of bytes made from the value a flatMap's closure was given.
    case writeBack([UInt8], [UInt8])
    case delete([UInt8])
    case deleteRange(from: [UInt8], to: [UInt8]?)
    /// `.read { tx in ... }` running the steps.
    case read([IOReadStep])
    /// `.write { tx in ... }` running the steps.
    case write([IOWriteStep])
    /// A `.read` (or, when `writing`, a `.write`) step that throws `IOModelError(token)`.
    case fail(token: UInt64, writing: Bool)
    /// A get (or, when `writing`, a put) of the empty key, which the engine refuses.
    case invalidKey(writing: Bool)
    case map(IOPlan, IOTransform)
    case flatMap(IOPlan, IOContinuation)
    case zip(IOPlan, IOPlan)
    case sequence([IOPlan])
    /// A read-only plan made `ReadWrite` with `.readWrite`.
    case lifted(IOPlan)

    /// Whether the plan builds as a `StoreIO<ReadOnly, _>`.
    var isReadOnly: Bool {
        switch self {
        case .just, .get, .scanPrefix, .scanRange, .read: return true
        case .put, .writeBack, .delete, .deleteRange, .write, .lifted: return false
        case .fail(_, let writing), .invalidKey(let writing): return !writing
        case .map(let inner, _): return inner.isReadOnly
        case .flatMap(let inner, let next): return inner.isReadOnly && next.readOnly
        case .zip(let first, let second): return first.isReadOnly && second.isReadOnly
        case .sequence(let plans): return plans.allSatisfy(\.isReadOnly)
        }
    }

    var description: String {
        func h(_ bytes: [UInt8]?) -> String { TestEnvironment.hex(bytes, limit: 4) }
        switch self {
        case .just(let value): return "just(\(value))"
        case .get(let key): return "get(\(h(key)))"
        case .scanPrefix(let prefix): return "scan(prefix: \(h(prefix)))"
        case .scanRange(let from, let to): return "scan(\(h(from))..<\(h(to)))"
        case .put(let key, let value): return "put(\(h(key)), \(value.count)B)"
        case .writeBack(let key, let value): return "put(\(h(key)), \(value.count)B from v)"
        case .delete(let key): return "delete(\(h(key)))"
        case .deleteRange(let from, let to): return "deleteRange(\(h(from))..<\(h(to)))"
        case .read(let steps): return "read{\(steps.map(\.description).joined(separator: "; "))}"
        case .write(let steps): return "write{\(steps.map(\.description).joined(separator: "; "))}"
        case .fail(let token, let writing): return "\(writing ? "write" : "read"){throw \(token)}"
        case .invalidKey(let writing): return writing ? "put(<empty>)" : "get(<empty>)"
        case .map(let inner, let transform): return "\(inner).map(\(transform))"
        case .flatMap(let inner, let next): return "\(inner).flatMap(\(next))"
        case .zip(let first, let second): return "zip(\(first), \(second))"
        case .sequence(let plans): return "sequence[\(plans.map(\.description).joined(separator: ", "))]"
        case .lifted(let inner): return "(\(inner)).readWrite"
        }
    }
}

/// One step of a `.read` closure (or a read inside a `.write` closure).
private enum IOReadStep: Sendable, CustomStringConvertible {
    case get([UInt8])
    case contains([UInt8])
    case scan(from: [UInt8], to: [UInt8]?, reverse: Bool)
    case scanPrefix([UInt8], reverse: Bool)
    case count(from: [UInt8], to: [UInt8]?)
    /// `forEachUnsafe`, copying what it borrows.
    case borrowed(from: [UInt8], to: [UInt8]?, reverse: Bool)
    /// A read-only composition run inside the closure with `tx.run`.
    case run(IOPlan)

    var description: String {
        func h(_ bytes: [UInt8]?) -> String { TestEnvironment.hex(bytes, limit: 4) }
        switch self {
        case .get(let key): return "get(\(h(key)))"
        case .contains(let key): return "contains(\(h(key)))"
        case .scan(let from, let to, let reverse): return "scan(\(h(from))..<\(h(to))\(reverse ? ", reverse" : ""))"
        case .scanPrefix(let prefix, let reverse): return "scan(prefix: \(h(prefix))\(reverse ? ", reverse" : ""))"
        case .count(let from, let to): return "count(\(h(from))..<\(h(to)))"
        case .borrowed(let from, let to, let reverse): return "forEachUnsafe(\(h(from))..<\(h(to))\(reverse ? ", reverse" : ""))"
        case .run(let plan): return "tx.run(\(plan))"
        }
    }
}

/// One step of a `.write` closure.
private enum IOWriteStep: Sendable, CustomStringConvertible {
    case put([UInt8], [UInt8])
    case delete([UInt8])
    case deleteRange(from: [UInt8], to: [UInt8]?)
    case read(IOReadStep)
    /// A composition of either access run inside the closure with `tx.run`.
    case run(IOPlan)
    case fail(UInt64)

    var description: String {
        func h(_ bytes: [UInt8]?) -> String { TestEnvironment.hex(bytes, limit: 4) }
        switch self {
        case .put(let key, let value): return "put(\(h(key)), \(value.count)B)"
        case .delete(let key): return "delete(\(h(key)))"
        case .deleteRange(let from, let to): return "deleteRange(\(h(from))..<\(h(to)))"
        case .read(let step): return step.description
        case .run(let plan): return "tx.run(\(plan))"
        case .fail(let token): return "throw \(token)"
        }
    }
}

/// What a `map` does to the value.
private enum IOTransform: Sendable, CustomStringConvertible {
    /// `v` becomes `[v]`.
    case wrap
    /// `v` becomes a number that depends on its size (entries, bytes, list length).
    case measure
    /// `v` becomes `(v, n)`.
    case tag(Int)
    /// Throws `IOModelError(token)`.
    case throwing(UInt64)

    func apply(_ value: IOValue) throws -> IOValue {
        switch self {
        case .wrap: return .list([value])
        case .measure: return .int(IOTransform.size(value))
        case .tag(let n): return .pair(value, .int(n))
        case .throwing(let token): throw IOModelError(token: token)
        }
    }

    private static func size(_ value: IOValue) -> Int {
        switch value {
        case .unit: return 0
        case .int(let n): return n
        case .bytes(let bytes): return bytes.map(\.count) ?? -1
        case .entries(let entries): return entries.count
        case .pair(let first, let second): return size(first) &+ size(second)
        case .list(let values): return values.count
        }
    }

    var description: String {
        switch self {
        case .wrap: return "wrap"
        case .measure: return "measure"
        case .tag(let n): return "tag \(n)"
        case .throwing(let token): return "throw \(token)"
        }
    }
}

/// The closure of a `flatMap`: it generates the next plan from the value it is given, so the
/// shape of what runs next (which keys it reads and writes, whether it branches) depends on
/// what was read. The store and the model each call it with their own value; equal values
/// give equal plans.
private struct IOContinuation: Sendable, CustomStringConvertible {
    let seed: UInt64
    let depth: Int
    /// Whether the next plan is read-only.
    let readOnly: Bool
    /// When set, the closure throws `IOModelError(token)` instead of returning a plan.
    let throwing: UInt64?
    /// The keys the plan written before this closure writes, for the next plan to read.
    let written: [[UInt8]]

    func next(_ value: IOValue) throws -> IOPlan {
        if let throwing { throw IOModelError(token: throwing) }
        var generator = IOGenerator(random: SeededRandom(seed: seed, stream: value.digest), written: written)
        return generator.plan(depth: depth, readOnly: readOnly, input: value)
    }

    var description: String {
        let kind = throwing.map { "throw \($0)" } ?? (readOnly ? "read-only" : "writing")
        return "{ v in \(kind), seed \(seed), depth \(depth) }"
    }
}

// MARK: - Generating plans

/// Keys from a small space, so compositions keep reading and overwriting each other's keys.
private enum IOKeySpace {
    static let alphabet: [UInt8] = [0x00, 0x41, 0x42, 0xFF]
    /// Every key a plan may write: the 4 one-byte keys and the 16 two-byte ones.
    static let all: [[UInt8]] = alphabet.map { [$0] } + alphabet.flatMap { a in alphabet.map { [a, $0] } }
}

/// Random plans from one seeded stream.
private struct IOGenerator {
    var random: SeededRandom
    /// The keys the plan generated so far writes: later reads pick them often, so they
    /// check that a composition reads its own writes.
    var written: [[UInt8]] = []

    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &random) < percent
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    mutating func token() -> UInt64 { random.next() }

    mutating func key() -> [UInt8] { IOKeySpace.all.randomElement(using: &random)! }

    /// A key to put or delete.
    mutating func writeKey() -> [UInt8] {
        let key = key()
        written.append(key)
        return key
    }

    /// A key to read: often one written earlier in the plan.
    mutating func readKey() -> [UInt8] {
        if !written.isEmpty && chance(60) { return written.randomElement(using: &random)! }
        return key()
    }

    /// A scan bound: sometimes empty (the start of the key space), sometimes between keys.
    mutating func bound() -> [UInt8] {
        let roll = int(0...99)
        if roll < 10 { return [] }
        if roll < 20 { return key() + [0x80] }
        return key()
    }

    mutating func upper() -> [UInt8]? { chance(20) ? nil : bound() }

    /// The bounds of a deleteRange: mostly narrow (one key and the keys it prefixes, but for
    /// the 0xFF one), so the store stays populated; sometimes any range.
    mutating func deletedRange() -> (from: [UInt8], to: [UInt8]?) {
        if chance(30) { return (bound(), upper()) }
        let from = key()
        return (from, from + [0x80])
    }

    mutating func prefix() -> [UInt8] {
        let roll = int(0...99)
        if roll < 10 { return [] }
        if roll < 80 { return [IOKeySpace.alphabet.randomElement(using: &random)!] }
        return key()
    }

    /// Mostly short values; a few kilobytes now and then, so the small memtable flushes and
    /// the store's reads go through segment files too.
    mutating func value() -> [UInt8] {
        let roll = int(0...99)
        if roll < 10 { return random.bytes(count: int(4096...24576)) }
        if roll < 20 { return random.bytes(count: int(16...512)) }
        return random.bytes(count: int(0...15))
    }

    mutating func justValue() -> IOValue {
        switch int(0...4) {
        case 0: return .unit
        case 1: return .int(int(-5...100))
        case 2: return .bytes(chance(30) ? nil : random.bytes(count: int(0...6)))
        case 3: return .list([.int(int(0...9)), .bytes([])])
        default: return .entries([Entry(key: key(), value: random.bytes(count: 2))])
        }
    }

    /// A plan `depth` levels of combinators deep at most. `input`, the value a flatMap's
    /// closure was given, makes some leaves depend on it.
    mutating func plan(depth: Int, readOnly: Bool, input: IOValue? = nil) -> IOPlan {
        if depth <= 0 || chance(25) { return leaf(readOnly: readOnly, input: input) }
        // A child of a writing node may still be read-only, so the mixed-access overloads
        // (read-only flatMap into a write, write zipped with a read) are built too.
        let firstReadOnly = readOnly || chance(30)
        let secondReadOnly = readOnly || chance(30)
        switch int(0...99) {
        case 0..<22:
            let inner = plan(depth: depth - 1, readOnly: firstReadOnly, input: input)
            return .flatMap(inner, continuation(depth: depth - 1, readOnly: secondReadOnly))
        case 22..<32:
            // A left-nested chain: each closure gets the value of the chain so far.
            var chain = leaf(readOnly: firstReadOnly, input: input)
            for _ in 0..<int(2...5) {
                chain = .flatMap(chain, continuation(depth: min(depth - 1, 1), readOnly: readOnly || chance(30)))
            }
            return chain
        case 32..<46:
            let first = plan(depth: depth - 1, readOnly: firstReadOnly, input: input)
            return .zip(first, plan(depth: depth - 1, readOnly: secondReadOnly, input: input))
        case 46..<58:
            var plans: [IOPlan] = []
            for _ in 0..<int(0...4) { plans.append(plan(depth: depth - 1, readOnly: readOnly || chance(30), input: input)) }
            return .sequence(plans)
        case 58..<72:
            let inner = plan(depth: depth - 1, readOnly: readOnly, input: input)
            let roll = int(0...99)
            let transform: IOTransform = roll < 3 ? .throwing(token()) : roll < 35 ? .wrap : roll < 70 ? .measure : .tag(int(0...9))
            return .map(inner, transform)
        case 72..<80:
            return .read(readSteps(depth: depth - 1))
        case 80..<90 where !readOnly:
            return .write(writeSteps(depth: depth - 1))
        case 90..<96 where !readOnly:
            return .lifted(plan(depth: depth - 1, readOnly: true, input: input))
        default:
            return leaf(readOnly: readOnly, input: input)
        }
    }

    mutating func continuation(depth: Int, readOnly: Bool) -> IOContinuation {
        IOContinuation(seed: random.next(), depth: depth, readOnly: readOnly, throwing: chance(2) ? token() : nil, written: written)
    }

    /// The key a value names: value-dependent steps read and write it.
    static func key(for value: IOValue) -> [UInt8] {
        IOKeySpace.all[Int(value.digest % UInt64(IOKeySpace.all.count))]
    }

    mutating func leaf(readOnly: Bool, input: IOValue?) -> IOPlan {
        if let input, chance(30) {
            // Steps made from the value the closure was given.
            switch int(0...2) {
            case 0 where !readOnly: return .writeBack(IOGenerator.key(for: input), Array(input.encoded.prefix(64)))
            case 1: return .get(IOGenerator.key(for: input))
            default: return .just(.pair(input, .int(1)))
            }
        }
        let roll = int(0...999)
        switch roll {
        case 0..<15: return .fail(token: token(), writing: !readOnly && chance(50))
        case 15..<20: return .invalidKey(writing: !readOnly && chance(50))
        case 20..<80: return .just(justValue())
        default: break
        }
        if readOnly || roll < 250 {
            switch int(0...99) {
            case 0..<45: return .get(readKey())
            case 45..<65: return .scanPrefix(prefix())
            case 65..<85: return .scanRange(from: bound(), to: upper())
            default: return .read(readSteps(depth: 0))
            }
        }
        switch int(0...99) {
        case 0..<60: return .put(writeKey(), value())
        case 60..<75: return .delete(writeKey())
        case 75..<83:
            let range = deletedRange()
            return .deleteRange(from: range.from, to: range.to)
        default: return .write(writeSteps(depth: 0))
        }
    }

    mutating func readStep(depth: Int) -> IOReadStep {
        switch int(0...99) {
        case 0..<30: return .get(readKey())
        case 30..<40: return .contains(readKey())
        case 40..<55: return .scan(from: bound(), to: upper(), reverse: chance(50))
        case 55..<70: return .scanPrefix(prefix(), reverse: chance(50))
        case 70..<78: return .count(from: bound(), to: upper())
        case 78..<88: return .borrowed(from: bound(), to: upper(), reverse: chance(50))
        default: return depth > 0 ? .run(plan(depth: depth, readOnly: true)) : .get(readKey())
        }
    }

    mutating func readSteps(depth: Int) -> [IOReadStep] {
        (0..<int(1...4)).map { _ in readStep(depth: depth) }
    }

    mutating func writeSteps(depth: Int) -> [IOWriteStep] {
        (0..<int(1...5)).map { _ in
            switch int(0...99) {
            case 0..<38: return .put(writeKey(), value())
            case 38..<48: return .delete(writeKey())
            case 48..<53:
                let range = deletedRange()
                return .deleteRange(from: range.from, to: range.to)
            case 53..<83: return .read(readStep(depth: depth))
            case 83..<97: return depth > 0 ? .run(plan(depth: depth, readOnly: chance(30))) : .read(.get(readKey()))
            default: return .fail(token())
            }
        }
    }
}

// MARK: - Building the StoreIO

/// Builds the `StoreIO` a plan describes, with the access its type must have.
private enum IOBuild {
    static func readOnly(_ plan: IOPlan) -> StoreIO<ReadOnly, IOValue> {
        switch plan {
        case .just(let value):
            return .just(value)
        case .get(let key):
            return StoreIO<ReadOnly, [UInt8]?>.get(key).map { .bytes($0) }
        case .scanPrefix(let prefix):
            return StoreIO<ReadOnly, [Entry]>.scan(prefix: prefix).map { .entries($0) }
        case .scanRange(let from, let to?):
            return StoreIO<ReadOnly, [Entry]>.scan(from: from, to: to).map { .entries($0) }
        case .scanRange(let from, nil):
            return StoreIO<ReadOnly, [Entry]>.scan(from: from).map { .entries($0) }
        case .read(let steps):
            return .read { tx in .list(try steps.map { try IOScripts.read($0, tx) }) }
        case .fail(let token, writing: false):
            return .read { _ in throw IOModelError(token: token) }
        case .invalidKey(writing: false):
            return StoreIO<ReadOnly, [UInt8]?>.get([]).map { .bytes($0) }
        case .map(let inner, let transform):
            return readOnly(inner).map { try transform.apply($0) }
        case .flatMap(let inner, let next):
            return readOnly(inner).flatMap { value in readOnly(try next.next(value)) }
        case .zip(let first, let second):
            return readOnly(first).zip(readOnly(second)).map { .pair($0.0, $0.1) }
        case .sequence(let plans):
            return StoreIO.sequence(plans.map(readOnly)).map { .list($0) }
        case .put, .writeBack, .delete, .deleteRange, .write, .fail(_, writing: true), .invalidKey(writing: true), .lifted:
            preconditionFailure("a writing plan cannot build as ReadOnly: \(plan)")
        }
    }

    static func readWrite(_ plan: IOPlan) -> StoreIO<ReadWrite, IOValue> {
        switch plan {
        case .just(let value):
            return .just(value)
        case .get(let key):
            return StoreIO<ReadWrite, [UInt8]?>.get(key).map { .bytes($0) }
        case .scanPrefix(let prefix):
            return StoreIO<ReadWrite, [Entry]>.scan(prefix: prefix).map { .entries($0) }
        case .scanRange(let from, let to):
            return StoreIO<ReadWrite, [Entry]>.scan(from: from, to: to).map { .entries($0) }
        case .put(let key, let value), .writeBack(let key, let value):
            return StoreIO<ReadWrite, Void>.put(key, value).map { .unit }
        case .delete(let key):
            return StoreIO<ReadWrite, Void>.delete(key).map { .unit }
        case .deleteRange(let from, let to):
            return StoreIO<ReadWrite, Int>.deleteRange(from: from, to: to).map { .int($0) }
        case .read(let steps):
            return .read { tx in .list(try steps.map { try IOScripts.read($0, tx) }) }
        case .write(let steps):
            return .write { tx in .list(try steps.map { try IOScripts.write($0, tx) }) }
        case .fail(let token, let writing):
            return writing ? .write { _ in throw IOModelError(token: token) } : .read { _ in throw IOModelError(token: token) }
        case .invalidKey(let writing):
            return writing ? StoreIO<ReadWrite, Void>.put([], [1]).map { .unit } : StoreIO<ReadWrite, [UInt8]?>.get([]).map { .bytes($0) }
        case .lifted(let inner):
            return readOnly(inner).readWrite
        case .map(let inner, let transform):
            return readWrite(inner).map { try transform.apply($0) }
        case .flatMap(let inner, let next):
            switch (inner.isReadOnly, next.readOnly) {
            case (true, false):
                // ReadOnly.flatMap into a writing operation.
                return readOnly(inner).flatMap { (value: IOValue) throws -> StoreIO<ReadWrite, IOValue> in readWrite(try next.next(value)) }
            case (false, true):
                // ReadWrite.flatMap into a read-only operation.
                return readWrite(inner).flatMap { (value: IOValue) throws -> StoreIO<ReadOnly, IOValue> in readOnly(try next.next(value)) }
            default:
                return readWrite(inner).flatMap { value in readWrite(try next.next(value)) }
            }
        case .zip(let first, let second):
            let pair: StoreIO<ReadWrite, (IOValue, IOValue)>
            switch (first.isReadOnly, second.isReadOnly) {
            case (true, false): pair = readOnly(first).zip(readWrite(second))
            case (false, true): pair = readWrite(first).zip(readOnly(second))
            default: pair = readWrite(first).zip(readWrite(second))
            }
            return pair.map { .pair($0.0, $0.1) }
        case .sequence(let plans):
            return StoreIO.sequence(plans.map(readWrite)).map { .list($0) }
        }
    }

    /// Runs a plan of either access inside an open write transaction.
    static func run(_ plan: IOPlan, in tx: WriteTransaction) throws -> IOValue {
        plan.isReadOnly ? try tx.run(readOnly(plan)) : try tx.run(readWrite(plan))
    }
}

/// The bodies of `.read` and `.write` steps.
private enum IOScripts {
    static func read(_ step: IOReadStep, _ tx: ReadOnlyTransaction) throws -> IOValue {
        try read(step, on: tx) { plan in try tx.run(IOBuild.readOnly(plan)) }
    }

    static func write(_ step: IOWriteStep, _ tx: WriteTransaction) throws -> IOValue {
        switch step {
        case .put(let key, let value):
            try tx.put(key, value)
            return .unit
        case .delete(let key):
            try tx.delete(key)
            return .unit
        case .deleteRange(let from, let to):
            return .int(try tx.deleteRange(from: from, to: to))
        case .read(let step):
            return try read(step, on: tx) { plan in try IOBuild.run(plan, in: tx) }
        case .run(let plan):
            return try IOBuild.run(plan, in: tx)
        case .fail(let token):
            throw IOModelError(token: token)
        }
    }

    private static func read(_ step: IOReadStep, on tx: some ReadableTransaction, run: (IOPlan) throws -> IOValue) throws -> IOValue {
        switch step {
        case .get(let key):
            return .bytes(try tx.get(key))
        case .contains(let key):
            return .int(try tx.contains(key) ? 1 : 0)
        case .scan(let from, let to, let reverse):
            return .entries(Array(try tx.scan(from: from, to: to, reverse: reverse)))
        case .scanPrefix(let prefix, let reverse):
            return .entries(Array(try tx.scan(prefix: prefix, reverse: reverse)))
        case .count(let from, let to):
            return .int(try tx.scan(from: from, to: to).count)
        case .borrowed(let from, let to, let reverse):
            var entries: [Entry] = []
            try tx.forEachUnsafe(from: from, to: to, reverse: reverse) { key, value in
                entries.append(Entry(key: Array(key), value: Array(value)))
                return true
            }
            return .entries(entries)
        case .run(let plan):
            return try run(plan)
        }
    }
}

// MARK: - The model's interpretation

/// How often each kind of node ran in the model, to check that the generator reaches them.
private struct IOCoverage: CustomStringConvertible {
    var counts: [String: Int] = [:]

    mutating func add(_ kind: String) { counts[kind, default: 0] += 1 }

    static let expected = [
        "flatMap", "flatMap ReadOnly into ReadWrite", "flatMap ReadWrite into ReadOnly", "zip", "zip mixed access", "sequence",
        "empty sequence", "map", "just", "read closure", "write closure", "nested tx.run", ".readWrite", "put", "delete",
        "deleteRange", "get", "scan", "value-dependent write", "failing step", "throwing map", "throwing flatMap closure",
        "empty key", "read of own write"
    ]

    var missing: [String] { IOCoverage.expected.filter { counts[$0, default: 0] == 0 } }

    var description: String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }
}

/// Interprets a plan against a copy of the model: the value it must give and the model it
/// must leave.
private struct IOModelInterpreter {
    var model: ReferenceModel
    /// Whether the run recorded a write (a put, a delete, or a deleteRange that removed
    /// something): only then does a successful run take a commit sequence.
    var wrote = false
    var coverage = IOCoverage()
    /// The keys the composition has written so far: a read of one must see the write (the
    /// model's reads do), which the coverage counts as a read of its own write.
    private var written: Set<[UInt8]> = []
    /// What each flatMap closure was given and made, for failure messages: the plan itself
    /// only names the closures' seeds.
    var trace: [String] = []

    init(model: ReferenceModel) {
        self.model = model
    }

    mutating func outcome(_ plan: IOPlan) -> IOOutcome {
        do {
            return .value(try run(plan))
        } catch let error as IOModelError {
            return .thrown(error)
        } catch is IOModelInvalidArgument {
            return .invalidArgument
        } catch {
            return .unexpected("the model threw \(error)")
        }
    }

    mutating func run(_ plan: IOPlan) throws -> IOValue {
        switch plan {
        case .just(let value):
            coverage.add("just")
            return value
        case .get(let key):
            coverage.add("get")
            return .bytes(get(key))
        case .scanPrefix(let prefix):
            coverage.add("scan")
            return .entries(withPrefix(prefix, reverse: false))
        case .scanRange(let from, let to):
            coverage.add("scan")
            return .entries(range(from: from, to: to, reverse: false))
        case .put(let key, let value):
            coverage.add("put")
            return put(key, value)
        case .writeBack(let key, let value):
            coverage.add("value-dependent write")
            return put(key, value)
        case .delete(let key):
            coverage.add("delete")
            return delete(key)
        case .deleteRange(let from, let to):
            coverage.add("deleteRange")
            return deleteRange(from: from, to: to)
        case .read(let steps):
            coverage.add("read closure")
            return .list(try steps.map { try read($0) })
        case .write(let steps):
            coverage.add("write closure")
            return .list(try steps.map { try write($0) })
        case .fail(let token, _):
            coverage.add("failing step")
            throw IOModelError(token: token)
        case .invalidKey:
            coverage.add("empty key")
            throw IOModelInvalidArgument()
        case .map(let inner, let transform):
            coverage.add("map")
            if case .throwing = transform { coverage.add("throwing map") }
            return try transform.apply(try run(inner))
        case .flatMap(let inner, let next):
            coverage.add("flatMap")
            if inner.isReadOnly && !next.readOnly { coverage.add("flatMap ReadOnly into ReadWrite") }
            if !inner.isReadOnly && next.readOnly { coverage.add("flatMap ReadWrite into ReadOnly") }
            let value = try run(inner)
            if next.throwing != nil { coverage.add("throwing flatMap closure") }
            let following = try next.next(value)
            trace.append("\(next) got \(value) and gave \(following)")
            return try run(following)
        case .zip(let first, let second):
            coverage.add("zip")
            if first.isReadOnly != second.isReadOnly { coverage.add("zip mixed access") }
            let a = try run(first)
            return .pair(a, try run(second))
        case .sequence(let plans):
            coverage.add(plans.isEmpty ? "empty sequence" : "sequence")
            return .list(try plans.map { try run($0) })
        case .lifted(let inner):
            coverage.add(".readWrite")
            return try run(inner)
        }
    }

    private mutating func put(_ key: [UInt8], _ value: [UInt8]) -> IOValue {
        model.entries[key] = value
        written.insert(key)
        wrote = true
        return .unit
    }

    private mutating func delete(_ key: [UInt8]) -> IOValue {
        model.entries[key] = nil
        written.insert(key)
        wrote = true
        return .unit
    }

    private mutating func deleteRange(from: [UInt8], to: [UInt8]?) -> IOValue {
        written.formUnion(model.range(from: from, to: to).map(\.key))
        let removed = model.deleteRange(from: from, to: to)
        if removed > 0 { wrote = true }
        return .int(removed)
    }

    private mutating func get(_ key: [UInt8]) -> [UInt8]? {
        if written.contains(key) { coverage.add("read of own write") }
        return model.get(key)
    }

    private mutating func range(from: [UInt8], to: [UInt8]?, reverse: Bool) -> [Entry] {
        let touches = written.contains { key in
            !key.lexicographicallyPrecedes(from) && (to.map { key.lexicographicallyPrecedes($0) } ?? true)
        }
        if touches { coverage.add("read of own write") }
        return model.range(from: from, to: to, reverse: reverse)
    }

    private mutating func withPrefix(_ prefix: [UInt8], reverse: Bool) -> [Entry] {
        if written.contains(where: { $0.starts(with: prefix) }) { coverage.add("read of own write") }
        return model.withPrefix(prefix, reverse: reverse)
    }

    private mutating func read(_ step: IOReadStep) throws -> IOValue {
        switch step {
        case .get(let key):
            return .bytes(get(key))
        case .contains(let key):
            return .int(get(key) == nil ? 0 : 1)
        case .scan(let from, let to, let reverse), .borrowed(let from, let to, let reverse):
            return .entries(range(from: from, to: to, reverse: reverse))
        case .scanPrefix(let prefix, let reverse):
            return .entries(withPrefix(prefix, reverse: reverse))
        case .count(let from, let to):
            return .int(range(from: from, to: to, reverse: false).count)
        case .run(let plan):
            coverage.add("nested tx.run")
            return try run(plan)
        }
    }

    private mutating func write(_ step: IOWriteStep) throws -> IOValue {
        switch step {
        case .put(let key, let value):
            return put(key, value)
        case .delete(let key):
            return delete(key)
        case .deleteRange(let from, let to):
            return deleteRange(from: from, to: to)
        case .read(let step):
            return try read(step)
        case .run(let plan):
            coverage.add("nested tx.run")
            return try run(plan)
        case .fail(let token):
            coverage.add("failing step")
            throw IOModelError(token: token)
        }
    }
}

// MARK: - Running compositions

/// Where a writing composition runs.
private enum IOWriteEntry: CaseIterable {
    /// `store.run(io)`, blocking.
    case run
    /// `try await store.run(io)`.
    case runAsync
    /// `store.asyncRun(io) { result in }`.
    case asyncRun
    /// `store.write { tx in try tx.run(io) }`, blocking.
    case transaction
    /// `try await store.write { tx in try tx.run(io) }`.
    case transactionAsync
}

/// Where a read-only composition runs.
private enum IOReadEntry: CaseIterable {
    /// `store.run(io)`, blocking.
    case run
    /// `try await store.run(io)`.
    case runAsync
    /// `store.snapshot().run(io)`.
    case snapshot
    /// `store.read { try $0.run(io) }`.
    case readTransaction
    /// `store.write { tx in try tx.run(io) }`: commits nothing.
    case writeTransaction
    /// `try await store.run(io.readWrite)`: commits nothing.
    case lifted
}

/// The store's entry points. The blocking ones are called from these non-async functions,
/// where the compiler picks the synchronous overloads.
private enum IOEntryPoints {
    static func run(_ io: StoreIO<ReadWrite, IOValue>, on store: Store, _ entry: IOWriteEntry, _ durability: Durability?) async -> Result<IOValue, any Error> {
        switch entry {
        case .run:
            return blockingRun(io, store, durability)
        case .runAsync:
            do { return .success(try await store.run(io, durability: durability)) } catch { return .failure(error) }
        case .asyncRun:
            return await withCheckedContinuation { continuation in
                store.asyncRun(io, durability: durability) { continuation.resume(returning: $0) }
            }
        case .transaction:
            return blockingTransaction(io, store, durability)
        case .transactionAsync:
            do {
                return .success(try await store.write(durability: durability) { tx in try tx.run(io) })
            } catch {
                return .failure(error)
            }
        }
    }

    static func run(_ io: StoreIO<ReadOnly, IOValue>, on store: Store, _ entry: IOReadEntry) async -> Result<IOValue, any Error> {
        switch entry {
        case .run, .snapshot, .readTransaction, .writeTransaction:
            return blockingRead(io, store, entry)
        case .runAsync:
            do { return .success(try await store.run(io)) } catch { return .failure(error) }
        case .lifted:
            do { return .success(try await store.run(io.readWrite)) } catch { return .failure(error) }
        }
    }

    private static func blockingRun(_ io: StoreIO<ReadWrite, IOValue>, _ store: Store, _ durability: Durability?) -> Result<IOValue, any Error> {
        Result { try store.run(io, durability: durability) }
    }

    private static func blockingTransaction(_ io: StoreIO<ReadWrite, IOValue>, _ store: Store, _ durability: Durability?) -> Result<IOValue, any Error> {
        Result { try store.write(durability: durability) { tx in try tx.run(io) } }
    }

    private static func blockingRead(_ io: StoreIO<ReadOnly, IOValue>, _ store: Store, _ entry: IOReadEntry) -> Result<IOValue, any Error> {
        Result {
            switch entry {
            case .snapshot:
                let snapshot = store.snapshot()
                defer { snapshot.close() }
                return try snapshot.run(io)
            case .readTransaction:
                return try store.read { try $0.run(io) }
            case .writeTransaction:
                return try store.write { tx in try tx.run(io) }
            case .run, .runAsync, .lifted:
                return try store.run(io)
            }
        }
    }
}

/// A snapshot held across later compositions, with the model it must go on seeing.
private struct IOHeldSnapshot {
    let snapshot: Snapshot
    let model: ReferenceModel
    let version: UInt64
    let takenAt: Int
}

/// A store under test, its model, and the random stream driving both.
private struct IOModelRun {
    let seed: UInt64
    let path: String
    let options: StoreOptions
    var generator: IOGenerator
    var store: Store
    var model = ReferenceModel()
    /// The commit sequence the store must be at.
    var expectedVersion: UInt64 = 0
    var held: IOHeldSnapshot? = nil
    var coverage = IOCoverage()
    var counts = (compositions: 0, readOnly: 0, failed: 0, emptyCommits: 0, reopens: 0, heldSnapshotRuns: 0, flushes: 0)
    var readEntries: [IOReadEntry: Int] = [:]
    var writeEntries: [IOWriteEntry: Int] = [:]

    init(seed: UInt64, path: String, options: StoreOptions) throws {
        self.seed = seed
        self.path = path
        self.options = options
        generator = IOGenerator(random: SeededRandom(seed: seed))
        store = try Store(path: path, options: options)
    }

    /// Small budgets, so a few hundred compositions flush and compact.
    static func options() -> StoreOptions {
        var options = StoreOptions()
        options.durability = .buffered
        options.walSegmentBytes = 64 << 10
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.level0CompactionTrigger = 2
        return options
    }

    mutating func run(compositions: Int) async throws {
        try checkStore("seed \(seed) new store")
        for index in 0..<compositions {
            try await runOne(index)
            if let held, generator.chance(15) || index - held.takenAt > 40 {
                try checkHeldSnapshot(held, "seed \(seed) after composition #\(index)")
                self.held = nil
            } else if held == nil, generator.chance(5) {
                held = IOHeldSnapshot(snapshot: store.snapshot(), model: model, version: expectedVersion, takenAt: index)
            }
            if generator.chance(3) { try reopen("seed \(seed) after composition #\(index)") }
        }
        try reopen("seed \(seed) final reopen")
        try store.close()

        #expect(coverage.missing.isEmpty, "seed \(seed): the generator never ran \(coverage.missing); ran \(coverage)")
        let unusedReads = IOReadEntry.allCases.filter { readEntries[$0] == nil }
        let unusedWrites = IOWriteEntry.allCases.filter { writeEntries[$0] == nil }
        #expect(unusedReads.isEmpty && unusedWrites.isEmpty, "seed \(seed): entry points never used: \(unusedReads) \(unusedWrites)")
        #expect(
            counts.failed > 0 && counts.emptyCommits > 0 && counts.heldSnapshotRuns > 0 && counts.reopens > 1 && counts.flushes > 0,
            "seed \(seed): the run should fail compositions, commit empty ones, read held snapshots, flush and reopen: \(counts)")
        print("[storeio model] seed \(seed): \(counts), \(model.entries.count) keys at the end, version \(expectedVersion); ran \(coverage)")
    }

    /// Generates one composition, runs it on the store and in the model, and compares.
    mutating func runOne(_ index: Int) async throws {
        let readOnly = generator.chance(30)
        let plan = generator.plan(depth: generator.int(2...5), readOnly: readOnly)
        var interpreter = IOModelInterpreter(model: model)
        let expected = interpreter.outcome(plan)

        let actual: IOOutcome
        let entryName: String
        if readOnly {
            let entry = IOReadEntry.allCases.randomElement(using: &generator.random)!
            readEntries[entry, default: 0] += 1
            entryName = "\(entry)"
            actual = IOOutcome(await IOEntryPoints.run(IOBuild.readOnly(plan), on: store, entry))
        } else {
            let entry = IOWriteEntry.allCases.randomElement(using: &generator.random)!
            let durability: Durability? = generator.chance(80) ? nil : generator.chance(50) ? .buffered : .synced
            writeEntries[entry, default: 0] += 1
            entryName = "\(entry), durability \(durability.map { "\($0)" } ?? "default")"
            actual = IOOutcome(await IOEntryPoints.run(IOBuild.readWrite(plan), on: store, entry, durability))
        }
        let context = "seed \(seed) composition #\(index) (\(readOnly ? "read-only" : "writing"), \(entryName)): \(plan)"
        let same = actual == expected
        try #require(
            same, "\(context): the store gave \(actual), the model \(expected); in the model, \(interpreter.trace.joined(separator: "; then "))")

        counts.compositions += 1
        if readOnly { counts.readOnly += 1 }
        for (kind, count) in interpreter.coverage.counts { coverage.counts[kind, default: 0] += count }
        if expected.succeeded {
            model = interpreter.model
            if interpreter.wrote { expectedVersion += 1 } else { counts.emptyCommits += 1 }
        } else {
            // Nothing of a failed composition may be applied: checkStore compares against the
            // model from before it.
            counts.failed += 1
        }
        try checkStore("\(context): after the run")
    }

    /// Runs a read-only composition on the held snapshot: it must see the model of when it
    /// was taken, whatever was committed, flushed or compacted since.
    mutating func checkHeldSnapshot(_ held: IOHeldSnapshot, _ context: String) throws {
        defer { held.snapshot.close() }
        let plan = generator.plan(depth: generator.int(1...3), readOnly: true)
        var interpreter = IOModelInterpreter(model: held.model)
        let expected = interpreter.outcome(plan)
        let actual = IOOutcome(Result { try held.snapshot.run(IOBuild.readOnly(plan)) })
        counts.heldSnapshotRuns += 1
        try #require(
            held.snapshot.version == held.version && actual == expected,
            "\(context): a snapshot taken after composition #\(held.takenAt) at version \(held.version) (it says \(held.snapshot.version)) gave \(actual) for \(plan), the model \(expected)"
        )
    }

    /// Checks the whole store against the model: the version, a full scan, and every key of
    /// the key space by get.
    func checkStore(_ context: String) throws {
        let expected = model.range(from: [], to: nil)
        let (version, found, values) = try store.read { tx in
            (tx.version, Array(try tx.scan(from: [])), try IOKeySpace.all.map { try tx.get($0) })
        }
        try #require(
            version == expectedVersion && store.version == expectedVersion,
            "\(context): the store is at version \(version) (store.version \(store.version)), expected \(expectedVersion)")
        let same = found == expected
        try #require(same, "\(context): full scan: \(ModelDiff.describe(expected: expected, actual: found))")
        for (key, value) in zip(IOKeySpace.all, values) where value != model.get(key) {
            Issue.record("\(context): get(\(TestEnvironment.hex(key))) = \(TestEnvironment.hex(value)), expected \(TestEnvironment.hex(model.get(key)))")
        }
    }

    /// Closes the store (releasing a held snapshot first), checks its files, opens it again
    /// and checks it.
    mutating func reopen(_ context: String) throws {
        if let held {
            try checkHeldSnapshot(held, "\(context), before closing")
            self.held = nil
        }
        counts.reopens += 1
        counts.flushes += try store.stats().flushes
        try store.close()
        try assertStoreIsClean(path: path, fileSystem: options.fileSystem, context: "\(context), before reopening")
        store = try Store(path: path, options: options)
        try checkStore("\(context), reopened")
    }
}

// MARK: - Tests

@Suite struct StoreIOModelTests {
    /// Compositions per run; STRATA_LONG_TESTS=1 multiplies by ten.
    static let compositions = TestEnvironment.scaled(600)

    @Test func compositionsOnPOSIXFileSystem() async throws {
        let seed = TestEnvironment.seed(0x5EED_1001, test: "StoreIOModelTests.compositionsOnPOSIXFileSystem")
        try await TestEnvironment.withTemporaryDirectory("storeio-model") { directory in
            var run = try IOModelRun(seed: seed, path: directory + "/store", options: IOModelRun.options())
            try await run.run(compositions: StoreIOModelTests.compositions)
        }
    }

    @Test func compositionsOnSimulatedFileSystem() async throws {
        let seed = TestEnvironment.seed(0x5EED_1002, test: "StoreIOModelTests.compositionsOnSimulatedFileSystem")
        var options = IOModelRun.options()
        options.fileSystem = SimulatedFileSystem()
        var run = try IOModelRun(seed: seed, path: "/storeio-model", options: options)
        try await run.run(compositions: StoreIOModelTests.compositions)
    }
}
