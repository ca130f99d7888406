import Foundation

/// The record both tasks edit: a contact, stored as JSON under `contact/<id>`.
public struct Contact: Codable, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var phone: String

    public init(name: String, phone: String) {
        self.name = name
        self.phone = phone
    }

    public var description: String { "name \"\(name)\", phone \"\(phone)\"" }

    static func key(id: String) -> [UInt8] { Array("contact/\(id)".utf8) }

    func encoded() throws -> [UInt8] { Array(try JSONEncoder().encode(self)) }

    init(decoding bytes: [UInt8]) throws {
        self = try JSONDecoder().decode(Contact.self, from: Data(bytes))
    }
}

/// Lets a fixed number of tasks wait for each other: each `arrive()` returns once every
/// party has arrived. The scenario uses it so that both tasks have read the contact before
/// either saves, every run, without guessing at timings with sleeps.
actor Rendezvous {
    private let parties: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(parties: Int) {
        self.parties = parties
    }

    func arrive() async {
        arrived += 1
        if arrived == parties {
            for continuation in waiting { continuation.resume() }
            waiting.removeAll()
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
    }
}
