import ArgumentParser
import Strata

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "A short tour: transactions, a snapshot, a prefix scan and stats; --app for typed records.",
        discussion: """
            Writes a few hundred `user:` and `order:` records into the store (creating it \
            when missing), then shows a snapshot keeping its view while newer writes land.

            With --app: typed records (StrataRecords) as an app uses them: a note collection \
            with an index by folder, a query, an observation updating while another task \
            writes, a suspension that refuses a write with the retryable .suspended and loses \
            nothing, and a checkpoint beside the store (STORE-checkpoint-vN, or with -2, -3, ... when \
            that name is taken) opened as a store of its own. It may run again on the same \
            store: it adds to the notes already there, and writes a new checkpoint.
            """
    )

    @Argument(help: "The store's directory; created when missing.")
    var path: String

    @Flag(help: "Show typed records, observation, suspension and a checkpoint instead of the byte API.")
    var app = false

    @OptionGroup
    var opening: StoreOpeningOptions

    func run() throws {
        if app {
            try withStore(path, opening) { store in
                Console.printOut("Opened \(path) at version \(store.version).")
                try AppDemo.run(store, path: path, opening: opening)
            }
            return
        }
        try withStore(path, opening) { store in
            let say = Console.printOut
            let recovery = store.recovery
            say("Opened \(path) at version \(store.version) (\(recovery.transactionsReplayed) transactions replayed from the log).")

            // Three transactions: each commits all of its writes at once, or none.
            try store.write { tx in
                for i in 0..<150 { try tx.put(Self.user(i), "Ada \(Self.number(i))") }
            }
            try store.write { tx in
                for i in 150..<300 { try tx.put(Self.user(i), "Ada \(Self.number(i))") }
            }
            try store.write { tx in
                for i in 0..<100 { try tx.put("order:\(Self.number(i))", "\(i % 7 + 1) items") }
            }
            say("Wrote 400 records in 3 transactions: user:0000...user:0299, order:0000...order:0099. Version \(store.version).")

            let snapshot = store.snapshot()
            defer { snapshot.close() }
            say("Took a snapshot at version \(snapshot.version).")

            try store.write { tx in
                for i in 0..<50 { try tx.put(Self.user(i), "Grace \(Self.number(i))") }
                for i in 0..<10 { try tx.delete("order:\(Self.number(i))") }
            }
            say("Overwrote user:0000...user:0049 and deleted order:0000...order:0009. Version \(store.version).")

            let key = Self.user(7)
            let old = try snapshot.read { tx in try tx.get(key) }
            let new = try store.read { tx in try tx.get(key) }
            say("  the snapshot still reads \(key) = \(Self.text(old))")
            say("  a new read sees         \(key) = \(Self.text(new))")
            let oldOrders = try snapshot.read { tx in try tx.scan(prefix: Array("order:".utf8)).count }
            let newOrders = try store.read { tx in try tx.scan(prefix: Array("order:".utf8)).count }
            say("  orders: \(oldOrders) in the snapshot, \(newOrders) now")

            let prefix = "user:004"
            let matches = try store.read { tx in Array(try tx.scan(prefix: Array(prefix.utf8))) }
            say("Prefix scan \"\(prefix)\": \(matches.count) entries")
            for entry in matches.prefix(3) {
                say("  \(Self.text(entry.key)) = \(Self.text(entry.value))")
            }
            if matches.count > 3 { say("  ...") }

            let stats = try store.stats()
            say(
                "Stats: version \(stats.version), \(stats.memtableEntries) memtable entries (\(stats.memtableBytes) bytes), "
                    + "\(stats.walSegments) WAL segment(s) holding \(stats.walBytes) bytes, \(stats.liveSnapshots) live snapshot(s).")
            snapshot.close()
            say("Closed the store. Next: swift run strata get \(path) \(key)  (or .build/debug/strata get ...)")
        }
    }

    private static func number(_ i: Int) -> String {
        let digits = String(i)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func user(_ i: Int) -> String { "user:" + number(i) }

    private static func text(_ bytes: [UInt8]?) -> String {
        guard let bytes else { return "(none)" }
        return ByteEncoding.display(bytes)
    }
}
