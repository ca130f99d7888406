import Foundation
import Strata

/// A record of the example: a dog, stored as JSON under `dog/<name>`.
public struct Dog: Codable, Sendable, Equatable {
    public var name: String
    public var age: Int

    public init(name: String, age: Int) {
        self.name = name
        self.age = age
    }
}

/// Thrown by ``Dogs/add(_:)`` for a name already taken.
public struct DogExists: Error, Equatable {
    public var name: String

    public init(name: String) {
        self.name = name
    }
}

/// Functions that describe work on dogs without running it. Each returns a `StoreIO`, so a
/// caller can compose several into one transaction: the pattern Realm users build by hand
/// with a reader monad (RealmIO), because there every function that writes opens its own
/// transaction and two calls make two.
public enum Dogs {
    static let prefix = Array("dog/".utf8)

    static func key(_ name: String) -> [UInt8] { prefix + Array(name.utf8) }

    /// Adds `dog`; fails with ``DogExists`` (and, in a composition, applies nothing of it)
    /// when the name is taken.
    public static func add(_ dog: Dog) -> StoreIO<ReadWrite, Void> {
        let key = key(dog.name)
        let existing: StoreIO<ReadOnly, [UInt8]?> = .get(key)
        return existing.flatMap { current in
            guard current == nil else { throw DogExists(name: dog.name) }
            return .put(key, try JSONEncoder().encode(dog).map { $0 })
        }
    }

    /// Every dog, by name.
    public static func all() -> StoreIO<ReadOnly, [Dog]> {
        let entries: StoreIO<ReadOnly, [Entry]> = .scan(prefix: prefix)
        return entries.map { entries in try entries.map { try JSONDecoder().decode(Dog.self, from: Data($0.value)) } }
    }
}

/// What the scenario saw.
public struct TwoDogsReport: Sendable {
    public var commitsForTwoDogs: UInt64 = 0
    public var dogsAfterTwo: [Dog] = []
    public var refusedError: DogExists? = nil
    public var dogsAfterRefusal: [Dog] = []
    public var failures: [String] = []
}

/// "Add two dogs in one transaction": `Dogs.add` composed twice and run once is one commit
/// with both dogs; a composition whose second part fails applies nothing of the first.
public func runTwoDogsScenario(directory: String) throws -> TwoDogsReport {
    var report = TwoDogsReport()
    let store = try Store(path: directory + "/dogs.strata")
    defer { try? store.close() }

    let rex = Dog(name: "Rex", age: 3)
    let fido = Dog(name: "Fido", age: 5)
    let before = store.version
    try store.run(Dogs.add(rex).flatMap { Dogs.add(fido) })
    report.commitsForTwoDogs = store.version - before
    report.dogsAfterTwo = try store.run(Dogs.all())
    if report.commitsForTwoDogs != 1 { report.failures.append("two dogs took \(report.commitsForTwoDogs) commits, not one") }
    if report.dogsAfterTwo != [fido, rex] { report.failures.append("after adding two dogs the store holds \(report.dogsAfterTwo)") }

    // Bella is new, Rex is not: the composition fails, and Bella is not added either.
    let bella = Dog(name: "Bella", age: 1)
    do {
        try store.run(Dogs.add(bella).flatMap { Dogs.add(rex) })
        report.failures.append("adding Rex twice succeeded")
    } catch let error as DogExists {
        report.refusedError = error
    }
    report.dogsAfterRefusal = try store.run(Dogs.all())
    if report.dogsAfterRefusal != [fido, rex] {
        report.failures.append("a failed composition left \(report.dogsAfterRefusal) behind")
    }
    return report
}
