/// The contents of one simulated file, stored as 4 KiB pages with absent pages reading as
/// zeros. Preallocating a 64 MiB log segment therefore costs nothing, and copying a file for
/// a crash image copies page references (copy-on-write), not bytes.
struct SparseBytes {
    static let pageSize = 4096
    private static let zeroPage = [UInt8](repeating: 0, count: pageSize)

    /// The file size in bytes.
    private(set) var count = 0

    /// Page index -> exactly `pageSize` bytes. Invariant: every stored byte at or past
    /// `count` is zero, so growing the file (truncate up, preallocate, a write past the end)
    /// exposes zeros without further work.
    private var pages: [Int: [UInt8]] = [:]

    init() {}

    init(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0, at: 0) }
    }

    /// The whole file.
    var bytes: [UInt8] { read(0..<count) }

    /// The bytes in `range`, which must lie within `0...count`.
    func read(_ range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "read outside the file")
        var result = [UInt8](repeating: 0, count: range.count)
        result.withUnsafeMutableBytes { output in
            var position = range.lowerBound
            while position < range.upperBound {
                let page = position / Self.pageSize
                let inPage = position - page * Self.pageSize
                let length = min(Self.pageSize - inPage, range.upperBound - position)
                if let stored = pages[page] {
                    stored.withUnsafeBytes { source in
                        output.baseAddress!.advanced(by: position - range.lowerBound)
                            .copyMemory(from: source.baseAddress!.advanced(by: inPage), byteCount: length)
                    }
                }
                position += length
            }
        }
        return result
    }

    /// Writes `source` at `offset`, extending the file when the write ends past its end (a
    /// gap before `offset` reads as zeros). An empty write changes nothing, as with pwrite.
    mutating func write(_ source: UnsafeRawBufferPointer, at offset: Int) {
        precondition(offset >= 0, "negative offset")
        guard !source.isEmpty else { return }
        let end = offset + source.count
        var position = offset
        while position < end {
            let page = position / Self.pageSize
            let inPage = position - page * Self.pageSize
            let length = min(Self.pageSize - inPage, end - position)
            pages[page, default: Self.zeroPage].withUnsafeMutableBytes { destination in
                destination.baseAddress!.advanced(by: inPage)
                    .copyMemory(from: source.baseAddress!.advanced(by: position - offset), byteCount: length)
            }
            position += length
        }
        count = max(count, end)
    }

    mutating func write(_ bytes: [UInt8], at offset: Int) {
        bytes.withUnsafeBytes { write($0, at: offset) }
    }

    /// Cuts the file to `size` bytes or extends it with zeros.
    mutating func resize(to size: Int) {
        precondition(size >= 0, "negative size")
        if size < count {
            // Drop whole pages past the new end, and zero the cut-off tail of the last page
            // to keep the invariant that bytes past `count` are zero.
            let firstDropped = (size + Self.pageSize - 1) / Self.pageSize
            pages = pages.filter { $0.key < firstDropped }
            let lastPage = size / Self.pageSize
            let inPage = size - lastPage * Self.pageSize
            if inPage != 0, pages[lastPage] != nil {
                pages[lastPage]!.withUnsafeMutableBytes { page in
                    _ = UnsafeMutableRawBufferPointer(rebasing: page[inPage...])
                        .initializeMemory(as: UInt8.self, repeating: 0)
                }
            }
        }
        count = size
    }
}
