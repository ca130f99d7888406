// SQLite's rows: the same records as a table of typed columns, written with a prepared
// INSERT bound per field and read with a prepared SELECT into the same Swift struct.
// WAL mode and synchronous=NORMAL (commits are not synced, as Strata's `.buffered` ones
// are not); the end-of-fill sync is `PRAGMA wal_checkpoint(FULL)`, as in strata-bench.
import CSQLitePeer
import Foundation
import PeerSupport

struct SQLiteRows {
    let api: SQLiteAPI
    let root: String
    let people: [Person]

    static let table = "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, email TEXT, age INTEGER)"

    func path(_ name: String) -> String {
        (root as NSString).appendingPathComponent(name + ".sqlite")
    }

    /// Seconds to insert records `0..<count`, `batch` per BEGIN IMMEDIATE/COMMIT, and to
    /// checkpoint at the end; then, untimed, a check of the row count.
    func fill(_ name: String, count: Int, batch: Int) throws -> Double {
        sync()
        let connection = try SQLiteConnection(api: api, path: path(name))
        defer { connection.close() }
        try connection.exec("PRAGMA journal_mode=WAL")
        try connection.exec("PRAGMA synchronous=NORMAL")
        try connection.exec(Self.table)
        let begin = try connection.prepare("BEGIN IMMEDIATE")
        let commit = try connection.prepare("COMMIT")
        let insert = try connection.prepare("INSERT INTO person (id, name, email, age) VALUES (?1, ?2, ?3, ?4)")
        let start = DispatchTime.now().uptimeNanoseconds
        var next = 0
        while next < count {
            let end = min(next + batch, count)
            try connection.run(begin, "BEGIN")
            for i in next..<end {
                let person = people[i]
                var name = person.name
                var email = person.email
                try connection.bind(insert, 1, Int64(person.id))
                try name.withUTF8 { name in
                    try email.withUTF8 { email in
                        try connection.bind(insert, 2, text: name)
                        try connection.bind(insert, 3, text: email)
                        try connection.bind(insert, 4, Int64(person.age))
                        try connection.run(insert, "INSERT")
                    }
                }
            }
            try connection.run(commit, "COMMIT")
            next = end
        }
        try connection.exec("PRAGMA wal_checkpoint(FULL)")
        let seconds = elapsed(since: start)
        let counter = try connection.prepare("SELECT count(*) FROM person")
        guard api.step(counter) == SQLITE_ROW else { throw connection.fail("SELECT count(*)", 0) }
        let stored = Int(api.columnInt64(counter, 0))
        _ = api.reset(counter)
        guard stored == count else { throw WrongAnswer("SQLite table \(name) holds \(stored) rows after inserting \(count)") }
        return seconds
    }

    /// Seconds for one SELECT per id of `ids` on a new connection, each row read into a
    /// `Person` and compared with the record written.
    func gets(_ name: String, _ ids: [Int]) throws -> Double {
        let connection = try SQLiteConnection(api: api, path: path(name))
        defer { connection.close() }
        let select = try connection.prepare("SELECT name, email, age FROM person WHERE id = ?1")
        var wrong = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for id in ids {
            try connection.bind(select, 1, Int64(id))
            switch api.step(select) {
            case SQLITE_ROW:
                let person = Person(
                    id: id, name: connection.text(select, 0), email: connection.text(select, 1),
                    age: Int(api.columnInt64(select, 2)))
                if person != people[id] { wrong += 1 }
            case SQLITE_DONE:
                wrong += 1
            case let code:
                throw connection.fail("SELECT", code)
            }
            _ = api.reset(select)
        }
        let seconds = elapsed(since: start)
        guard wrong == 0 else { throw WrongAnswer("\(wrong) of \(ids.count) SQLite gets gave a wrong or no row") }
        return seconds
    }
}
