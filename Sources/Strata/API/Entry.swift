/// One key and its value, as a scan returns them.
public struct Entry: Sendable, Hashable {
    public var key: [UInt8]
    public var value: [UInt8]

    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}
