import StrataIO
import Synchronization

/// Tracks the highest `ack N` a child printed. Partial lines wait for their newline.
final class Acks: Sendable {
    private let state = Locked<(pending: [UInt8], last: Int)>(([], 0))

    var last: Int { state.withLock { $0.last } }

    func consume(_ bytes: [UInt8]) {
        state.withLock { state in
            state.pending.append(contentsOf: bytes)
            while let newline = state.pending.firstIndex(of: 0x0A) {
                let line = String(decoding: state.pending[..<newline], as: UTF8.self)
                state.pending.removeSubrange(...newline)
                if line.hasPrefix("ack "), let count = Int(line.dropFirst(4)), count > state.last {
                    state.last = count
                }
            }
        }
    }
}
