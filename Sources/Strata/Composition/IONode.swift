/// The description a ``StoreIO`` holds: a tree of steps that `IOInterpreter` walks with a
/// loop and an explicit stack, never by recursion, so a composition of any depth (ten
/// thousand chained `flatMap`s) runs without growing the thread's stack.
///
/// Values travel between steps as `Any`; each step is built by a typed `StoreIO` method that
/// casts them back, so a cast can only fail if that method is wrong.
///
/// Invariant: `kind` is set once, at init, and cleared only by `deinit` (which takes a chain
/// of nodes apart in a loop, as its release would otherwise recurse once per node).
final class IONode {
    /// A step's access to the transaction it runs in.
    struct Context {
        let readable: any ReadableTransaction
        /// Nil in a read transaction or a snapshot: the types keep writing steps out of them.
        let writable: WriteTransaction?
    }

    typealias Continuation = (Any) throws -> IONode

    enum Kind {
        case pure(Any)
        case primitive((Context) throws -> Any)
        /// Runs `inner`, then the node `next` makes of its value.
        case bind(IONode, Continuation)
        /// Runs each node in order and hands `finish` their values.
        case sequence([IONode], finish: ([Any]) -> Any)
    }

    private(set) var kind: Kind?

    init(_ kind: Kind) {
        self.kind = kind
    }

    deinit {
        // A left-nested chain (`io.flatMap(f).flatMap(g)...`) would be released one level per
        // recursive call: unlink it here instead, while this loop owns each next node alone.
        guard case .bind(var child, _)? = kind else { return }
        kind = nil
        while isKnownUniquelyReferenced(&child) {
            guard case .bind(let grandchild, _)? = child.kind else { break }
            child.kind = nil
            child = grandchild
        }
    }
}

/// Runs an `IONode` tree in one transaction.
enum IOInterpreter {
    private enum Frame {
        case continuation(IONode.Continuation)
        case collect(remaining: ArraySlice<IONode>, values: [Any], finish: ([Any]) -> Any)
    }

    static func run(_ root: IONode, in context: IONode.Context) throws -> Any {
        var stack: [Frame] = []
        var current = root
        while true {
            var value: Any
            switch current.kind! {
            case .pure(let pure):
                value = pure
            case .primitive(let body):
                value = try body(context)
            case .bind(let inner, let next):
                stack.append(.continuation(next))
                current = inner
                continue
            case .sequence(let nodes, let finish):
                guard let first = nodes.first else {
                    value = finish([])
                    break
                }
                stack.append(.collect(remaining: nodes.dropFirst(), values: [], finish: finish))
                current = first
                continue
            }
            // Hand the value to the innermost waiting frame.
            while true {
                guard let frame = stack.popLast() else { return value }
                switch frame {
                case .continuation(let next):
                    current = try next(value)
                case .collect(let remaining, var values, let finish):
                    values.append(value)
                    if let following = remaining.first {
                        stack.append(.collect(remaining: remaining.dropFirst(), values: values, finish: finish))
                        current = following
                    } else {
                        value = finish(values)
                        continue
                    }
                }
                break
            }
        }
    }
}
