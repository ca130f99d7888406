/// The description a composed ``StoreIO`` holds: a tree of steps that `IOInterpreter` walks
/// with a loop and an explicit stack, never by recursion, so a composition of any depth (ten
/// thousand chained `flatMap`s) runs without growing the thread's stack. A primitive on its
/// own, or as an element of a sequence, needs no node: the `StoreIO` holds its closure.
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

    /// What comes after a step: its value, or a node to run for the value.
    enum Next {
        case value(Any)
        case node(IONode)
    }

    /// `StoreIO`'s own methods build `.then` and `.elements`; `.pure`, `.bind` and `.sequence`
    /// remain for steps built elsewhere in the module, and run as before.
    enum Kind {
        case pure(Any)
        case primitive((Context) throws -> Any)
        /// Runs `inner`, then the node `next` makes of its value.
        case bind(IONode, Continuation)
        /// Runs `inner`, then `next` on its value in the same transaction: `next` gives a value
        /// at once when it can (a transform, or a primitive it runs itself), so that running
        /// `map` and `flatMap` makes no node.
        case then(IONode, (Any, Context) throws -> Next)
        /// Runs each node in order and hands `finish` their values.
        case sequence([IONode], finish: ([Any]) -> Any)
        /// Runs a list of steps: `start` makes the state of one run (`StoreIO.sequence`).
        case elements(start: () -> any IOElementsRun)

        /// The node this one runs first and holds alone in a left-nested chain.
        var inner: IONode? {
            switch self {
            case .bind(let inner, _), .then(let inner, _): inner
            case .pure, .primitive, .sequence, .elements: nil
            }
        }
    }

    private(set) var kind: Kind?

    init(_ kind: Kind) {
        self.kind = kind
    }

    deinit {
        // A left-nested chain (`io.flatMap(f).flatMap(g)...`) would be released one level per
        // recursive call: unlink it here instead, while this loop owns each next node alone.
        guard var child = kind?.inner else { return }
        kind = nil
        while isKnownUniquelyReferenced(&child) {
            guard let grandchild = child.kind?.inner else { break }
            child.kind = nil
            child = grandchild
        }
    }
}

/// One run of a list of steps. It runs the steps it can itself (primitives, in a loop, with
/// their values typed) and hands the interpreter the others one at a time, getting each one's
/// value back through `receive`.
protocol IOElementsRun: AnyObject {
    /// Runs the steps left until one is a node for the interpreter (`.node`) or none is left
    /// (`.value`: the list's value).
    func advance(in context: IONode.Context) throws -> IONode.Next
    /// The value of the node `advance` handed out last.
    func receive(_ value: Any)
}

/// Runs an `IONode` tree in one transaction.
enum IOInterpreter {
    private enum Frame {
        case continuation(IONode.Continuation)
        case then((Any, IONode.Context) throws -> IONode.Next)
        case elements(any IOElementsRun)
    }

    static func run(_ root: IONode, in context: IONode.Context) throws -> Any {
        var stack: [Frame] = []
        var next = IONode.Next.node(root)
        while true {
            switch next {
            case .node(let node):
                switch node.kind! {
                case .pure(let value):
                    next = .value(value)
                case .primitive(let body):
                    next = .value(try body(context))
                case .bind(let inner, let continuation):
                    stack.append(.continuation(continuation))
                    next = .node(inner)
                case .then(let inner, let continuation):
                    stack.append(.then(continuation))
                    next = .node(inner)
                case .sequence(let nodes, let finish):
                    next = try advance(NodeListRun(nodes, finish: finish), in: context, stack: &stack)
                case .elements(let start):
                    next = try advance(start(), in: context, stack: &stack)
                }
            case .value(let value):
                // Hand the value to the innermost waiting frame.
                guard let frame = stack.popLast() else { return value }
                switch frame {
                case .continuation(let continuation):
                    next = .node(try continuation(value))
                case .then(let continuation):
                    next = try continuation(value, context)
                case .elements(let run):
                    run.receive(value)
                    next = try advance(run, in: context, stack: &stack)
                }
            }
        }
    }

    /// Advances a list; when it hands out a node, leaves a frame to take that node's value.
    private static func advance(_ run: any IOElementsRun, in context: IONode.Context, stack: inout [Frame]) throws -> IONode.Next {
        let next = try run.advance(in: context)
        if case .node = next { stack.append(.elements(run)) }
        return next
    }
}

/// One run of a `.sequence` node: its values as `Any`, in an array this run owns alone, so
/// appending never copies it.
private final class NodeListRun: IOElementsRun {
    private let nodes: [IONode]
    private let finish: ([Any]) -> Any
    private var index = 0
    private var values: [Any] = []

    init(_ nodes: [IONode], finish: @escaping ([Any]) -> Any) {
        self.nodes = nodes
        self.finish = finish
        values.reserveCapacity(nodes.count)
    }

    func advance(in context: IONode.Context) throws -> IONode.Next {
        while index < nodes.count {
            let node = nodes[index]
            index += 1
            switch node.kind! {
            case .pure(let value): values.append(value)
            case .primitive(let body): values.append(try body(context))
            case .bind, .then, .sequence, .elements: return .node(node)
            }
        }
        return .value(finish(values))
    }

    func receive(_ value: Any) {
        values.append(value)
    }
}
