import Foundation

/// How keys and values, which are arbitrary bytes, are written as text: UTF-8 when the bytes
/// are valid UTF-8, standard base64 otherwise.
enum ByteEncoding {
    /// The bytes as a string, or nil when they are not valid UTF-8.
    static func utf8String(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// Decodes standard base64 (with padding); nil when `text` is not valid base64.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map { Array($0) }
    }

    /// Reads a command-line KEY or VALUE, or a JSON line's base64 field: UTF-8 text, or
    /// base64 when `base64` is set. Only the canonical spelling of base64 is accepted (the
    /// one `export` writes): the decoder also takes some others (`YWJj=`, unused bits set),
    /// and two spellings of one key would be a trap. `what` names the argument in the error.
    static func argument(_ text: String, base64: Bool, what: String) throws(CLIError) -> [UInt8] {
        guard base64 else { return Array(text.utf8) }
        guard let bytes = decodeBase64(text) else {
            throw CLIError("\(what) is not valid base64: \(text)")
        }
        let canonical = self.base64(bytes)
        guard canonical == text else {
            throw CLIError("\(what) is not canonical base64: \(text) (the same bytes are \(canonical))")
        }
        return bytes
    }

    /// A key for messages: quoted when it is UTF-8, `base64:...` otherwise.
    static func display(_ bytes: [UInt8]) -> String {
        if let text = utf8String(bytes) { return "\"\(text)\"" }
        return "base64:" + base64(bytes)
    }
}
