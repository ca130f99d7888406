import StrataFormat

/// `withUnsafeBytes` for a body that throws `FormatError`: the standard library's version
/// rethrows untyped errors, which would lose the type.
func withBorrowedBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(FormatError) -> R) throws(FormatError) -> R {
    let result = bytes.withUnsafeBytes { raw in Result { () throws(FormatError) -> R in try body(raw) } }
    return try result.get()
}
