@_spi(Engine) import StrataFormat
import StrataIO

/// What an observation delivers: the operation's value at a version, the news that the
/// store could not be read for a while, or the operation's own error. After either of the
/// last two the observation goes on by itself, and reads again after the next `resume()` or
/// commit.
public enum Observed<Value: Sendable>: Sendable {
    /// The operation's value as of commit `version`.
    case value(Value, version: UInt64)
    /// The store could not serve the operation's reads: it is suspended (code
    /// ``StoreError/Code/suspended``), or reading met an I/O failure (`.io`, `.diskFull`) or
    /// damage (`.corruption`, `.formatVersion`). The observation waits and tries again after
    /// the next `resume()` or commit.
    case interrupted(StoreError)
    /// The operation itself threw `error`, reported as thrown: a record that does not decode
    /// (`RecordError` `.decoding`), an app error, a `StoreError` about the operation's own
    /// arguments (`.invalidArgument`). The observation tries again after the next commit,
    /// which may fix what the operation read.
    case failed(any Error)
}

/// The values of a read-only operation over time: the current value at once, then a new one
/// after each commit that wrote a key the operation read (or into a range it scanned). A
/// slow consumer gets the latest value, never a backlog: values it did not take in time are
/// replaced by newer ones. It ends when the store closes or the consuming task is cancelled.
///
/// ```swift
/// for await update in store.observe(.scan(prefix: Array("mail/".utf8))) {
///     if case .value(let mails, let version) = update { show(mails, at: version) }
/// }
/// ```
public struct Observation<Value: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Observed<Value>
    let stream: AsyncStream<Observed<Value>>

    public func makeAsyncIterator() -> AsyncStream<Observed<Value>>.Iterator {
        stream.makeAsyncIterator()
    }
}

extension Store {
    /// Observes a read-only operation (see ``Observation``). The operation runs on a
    /// snapshot, on a task of its own, never inside a transaction or on the writer queue.
    public func observe<Value: Sendable>(_ operation: StoreIO<ReadOnly, Value>) -> Observation<Value> {
        let (output, results) = AsyncStream.makeStream(of: Observed<Value>.self, bufferingPolicy: .bufferingNewest(1))
        let observer = Observer()
        let published = self.published
        let listeners = self.listeners
        listeners.add(observer)
        let task = Task {
            // The version of the last value delivered, nil after an interruption (whose
            // consumer needs the value again). A commit that lands while an evaluation is
            // under way signals again even when that evaluation's view already held it; the
            // next evaluation then reads the same version, whose value was delivered.
            var delivered: UInt64? = nil
            for await _ in observer.triggers {
                if Task.isCancelled { break }
                listeners.evaluationStarted(observer)
                do {
                    let view = try published.current()
                    let base = ReadTransaction(view: view)
                    let recording = RecordingTransaction(base)
                    let value = try base.run { _ in
                        try operation.run(in: IONode.Context(readable: recording, writable: nil))
                    }
                    listeners.evaluationEnded(observer, reading: recording.readSet)
                    if delivered != view.sequence {
                        delivered = view.sequence
                        results.yield(.value(value, version: view.sequence))
                    }
                } catch let error as StoreError where error.code == .closed {
                    break
                } catch {
                    listeners.evaluationEnded(observer, reading: nil)
                    delivered = nil
                    results.yield(Self.observed(failure: error))
                }
            }
            listeners.remove(observer)
            results.finish()
        }
        results.onTermination = { _ in
            task.cancel()
            observer.finish()
            listeners.remove(observer)
        }
        observer.trigger()
        return Observation(stream: output)
    }
}

extension Store {
    /// What an observation reports for an evaluation that threw: the store's failures to
    /// serve reads as interruptions, everything else as the operation's own error. Errors of
    /// the file system and the formats are the store's, named as the store names them.
    static func observed<Value>(failure error: any Error) -> Observed<Value> {
        switch error {
        case let error as StoreError where [.suspended, .io, .diskFull, .corruption, .formatVersion].contains(error.code):
            return .interrupted(error)
        case is IOError, is FormatError:
            return .interrupted(StoreError.wrapping(error, while: "evaluating an observed operation"))
        default:
            return .failed(error)
        }
    }
}

/// One observation's link to the commit path: a coalescing signal to its evaluating task.
/// Which commits signal it is `CommitListeners`' business (its read set lives there).
final class Observer: Sendable {
    let triggers: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (triggers, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func trigger() { continuation.yield() }

    func finish() { continuation.finish() }
}
