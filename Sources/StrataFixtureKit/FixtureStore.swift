/// A store directory held in memory: file names and their bytes. Fixtures are built here
/// and written out whole, so the same code produces the same bytes every time.
public struct FixtureStore: Sendable, Equatable {
    public var files: [String: [UInt8]]

    public init(files: [String: [UInt8]] = [:]) {
        self.files = files
    }

    /// Inverts one bit (bit 0 unless told) of the byte at `offset`.
    public mutating func flipBit(in file: String, at offset: Int, bit: UInt8 = 0) {
        precondition(files[file] != nil && offset < files[file]!.count, "no byte \(offset) in \(file)")
        files[file]![offset] ^= 1 << bit
    }

    /// Keeps the first `size` bytes of `file`.
    public mutating func truncate(_ file: String, to size: Int) {
        precondition(files[file] != nil && size <= files[file]!.count, "\(file) is shorter than \(size) bytes")
        files[file]!.removeLast(files[file]!.count - size)
    }

    public mutating func remove(_ file: String) {
        precondition(files.removeValue(forKey: file) != nil, "no file \(file)")
    }
}
