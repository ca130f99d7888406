import Foundation
@_spi(Engine) import StrataFormat

/// A store's identity: a random UUID recorded in its manifest (docs/format/manifest.md, tag 6),
/// chosen the first time the store is opened. References carry it, so a reference handed to
/// another store is refused rather than read against the wrong data.
enum StoreIdentity {
    /// A new random identity, as manifest bytes.
    static func generate() -> [UInt8] {
        bytes(UUID())
    }

    static func bytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    static func uuid(_ bytes: [UInt8]) -> UUID {
        precondition(bytes.count == ManifestFormat.storeIdentifierSize, "a store identity is 16 bytes")
        var value = UUID().uuid
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes) }
        return UUID(uuid: value)
    }
}
