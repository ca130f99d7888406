import Foundation
import Strata

/// The JSON lines format of `import`, `export` and `scan`: one object per line,
/// `{"key":"...","value":"..."}`, with `"key_base64"` / `"value_base64"` (standard base64)
/// in place of `"key"` / `"value"` for bytes that are not valid UTF-8.
enum JSONLines {
    // MARK: Encoding

    /// Appends `entry` as one JSON line, newline included.
    static func encode(_ entry: Entry, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        field("key", entry.key, into: &out)
        out.append(UInt8(ascii: ","))
        field("value", entry.value, into: &out)
        out.append(contentsOf: "}\n".utf8)
    }

    static func encode(_ entry: Entry) -> [UInt8] {
        var out: [UInt8] = []
        encode(entry, into: &out)
        return out
    }

    private static func field(_ name: String, _ bytes: [UInt8], into out: inout [UInt8]) {
        if let text = ByteEncoding.utf8String(bytes) {
            appendString(name, into: &out)
            out.append(UInt8(ascii: ":"))
            appendString(text, into: &out)
        } else {
            appendString(name + "_base64", into: &out)
            out.append(UInt8(ascii: ":"))
            appendString(ByteEncoding.base64(bytes), into: &out)
        }
    }

    /// A JSON string literal. Non-ASCII text stays raw UTF-8, which JSON allows; only the
    /// quote, the backslash and control characters are escaped.
    static func appendString(_ text: String, into out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: Decoding

    /// The fields a line may hold; which of each pair is present is checked after decoding.
    private struct RawRecord: Decodable {
        var key: String?
        var keyBase64: String?
        var value: String?
        var valueBase64: String?

        enum CodingKeys: String, CodingKey {
            case key, value
            case keyBase64 = "key_base64"
            case valueBase64 = "value_base64"
        }
    }

    /// Decodes one line into a key and a value checked against the store's size limits.
    /// Throws a message without a line number; the caller adds it.
    static func decodeRecord(_ line: [UInt8], using decoder: JSONDecoder) throws(CLIError) -> (key: [UInt8], value: [UInt8]) {
        let raw: RawRecord
        do {
            raw = try decoder.decode(RawRecord.self, from: Data(line))
        } catch {
            throw CLIError(#"expected a JSON object with "key" and "value""#)
        }
        // A decoder keeps one of two same-named fields and says nothing: which value would be
        // stored is then a guess, so a repeated field is refused.
        if let repeated = repeatedField(in: line) {
            throw CLIError("the field \"\(repeated)\" appears twice; give each field once")
        }
        let key = try bytes(raw.key, raw.keyBase64, name: "key")
        let value = try bytes(raw.value, raw.valueBase64, name: "value")
        if key.isEmpty {
            throw CLIError("the key is empty; keys must be at least 1 byte long")
        }
        if key.count > StoreLimits.maxKeyBytes {
            throw CLIError("the key is \(key.count) bytes, over the limit of \(StoreLimits.maxKeyBytes)")
        }
        if value.count > StoreLimits.maxValueBytes {
            throw CLIError("the value is \(value.count) bytes, over the limit of \(StoreLimits.maxValueBytes)")
        }
        return (key, value)
    }

    private static func bytes(_ text: String?, _ base64: String?, name: String) throws(CLIError) -> [UInt8] {
        switch (text, base64) {
        case (let text?, nil):
            return Array(text.utf8)
        case (nil, let encoded?):
            return try ByteEncoding.argument(encoded, base64: true, what: "\"\(name)_base64\"")
        case (.some, .some):
            throw CLIError("both \"\(name)\" and \"\(name)_base64\" are given; use one")
        case (nil, nil):
            throw CLIError(#"expected a JSON object with "key" and "value""#)
        }
    }

    /// The first name that appears twice among the top-level fields of the JSON object on
    /// `line`, or nil. Only called on a line that decoded, so it can assume valid JSON.
    static func repeatedField(in line: [UInt8]) -> String? {
        var seen = Set<[UInt8]>()
        var depth = 0
        var index = 0
        var expectingName = false
        while index < line.count {
            let byte = line[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                expectingName = depth == 1 && byte == UInt8(ascii: "{")
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            case UInt8(ascii: ","):
                expectingName = depth == 1
                index += 1
            case UInt8(ascii: "\""):
                let end = endOfString(line, from: index)
                if expectingName {
                    let raw = Array(line[index..<end])
                    // Escapes spell one name in several ways: compare the decoded names.
                    let name = (try? JSONDecoder().decode(String.self, from: Data(raw))).map { Array($0.utf8) } ?? raw
                    if !seen.insert(name).inserted { return String(decoding: name, as: UTF8.self) }
                    expectingName = false
                }
                index = end
            default:
                index += 1
            }
        }
        return nil
    }

    /// The index just past the string literal that starts at `start` (a quote).
    private static func endOfString(_ line: [UInt8], from start: Int) -> Int {
        var index = start + 1
        while index < line.count {
            switch line[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return line.count
    }
}
