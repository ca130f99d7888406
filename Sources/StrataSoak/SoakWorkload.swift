import Strata
import StrataTestSupport

/// What the soak's processes agree on: the keys, the values each transaction writes, and the
/// bank whose total never changes. A value is computed from its transaction and key alone, so
/// the supervisor can tell which transaction wrote any value it finds.
enum SoakWorkload {
    static let keysPerWriter = 64
    static let accounts = 16
    static let openingBalance = 1_000
    static var bankTotal: Int { accounts * openingBalance }

    static func key(writer: Int, slot: Int) -> [UInt8] {
        Array("w\(writer)/\(slot < 10 ? "0" : "")\(slot)".utf8)
    }

    static func account(_ i: Int) -> [UInt8] {
        Array("bank/\(i < 10 ? "0" : "")\(i)".utf8)
    }

    /// The value transaction `txid` puts at `key`: its name, then padding whose length and
    /// bytes follow from both (0 to 1,500 bytes, so memtables fill and files roll).
    static func value(txid: UInt64, key: [UInt8]) -> [UInt8] {
        var mixer = SeededRandom(seed: txid, stream: UInt64(key.reduce(0) { $0 &* 31 &+ Int($1) }) & 0xFFFF_FFFF)
        let padding = Int(mixer.next() % 1_500)
        return Array("\(txid) ".utf8) + key + [UInt8](repeating: UInt8(truncatingIfNeeded: txid) | 1, count: padding)
    }

    /// The options every process opens the soak store with: small memtables and files so a
    /// few seconds of writes flush, compact and roll the log.
    static var options: StoreOptions {
        var options = StoreOptions()
        options.durability = .buffered
        options.memtableBytes = 64 << 10
        options.segmentFileBytes = 64 << 10
        options.level1Bytes = 64 << 10
        options.walSegmentBytes = 256 << 10
        options.logger.logLevel = .error
        return options
    }

    /// The sum of the bank's balances as `tx` sees them, or nil and a reason when a balance is
    /// missing or unreadable.
    static func bankSum(_ tx: some ReadableTransaction) throws -> Result<Int, SoakViolation> {
        var sum = 0
        for i in 0..<accounts {
            guard let bytes = try tx.get(account(i)), let balance = Int(String(decoding: bytes, as: UTF8.self)), balance >= 0 else {
                return .failure(SoakViolation("account \(i) is missing or not a balance"))
            }
            sum += balance
        }
        return .success(sum)
    }
}

/// A broken promise the soak found.
struct SoakViolation: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
