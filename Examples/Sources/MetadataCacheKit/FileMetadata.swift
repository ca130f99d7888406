import Foundation

/// What an app caches about one file: the kind of record a document browser or a sync
/// engine keeps so that it can list a folder without touching the files themselves.
public struct FileMetadata: Codable, Sendable, Hashable {
    public var path: String
    public var size: Int64
    public var modified: Date
    public var contentType: String

    public init(path: String, size: Int64, modified: Date, contentType: String) {
        self.path = path
        self.size = size
        self.modified = modified
        self.contentType = contentType
    }
}

// MARK: Keys and values

// Strata stores bytes. Every record lives under one key prefix, so a prefix scan lists them
// all in path order, and the value is the record as JSON: easy to read in a hex dump and to
// evolve, which matters more for a cache than the few bytes a binary format would save.
extension FileMetadata {
    /// The prefix of every metadata key.
    static let keyPrefix = Array("file:".utf8)

    /// The key of the record for `path`.
    static func key(forPath path: String) -> [UInt8] {
        keyPrefix + Array(path.utf8)
    }

    var key: [UInt8] { Self.key(forPath: path) }

    func encoded() throws -> [UInt8] {
        Array(try JSONEncoder().encode(self))
    }

    init(decoding bytes: [UInt8]) throws {
        self = try JSONDecoder().decode(FileMetadata.self, from: Data(bytes))
    }
}
