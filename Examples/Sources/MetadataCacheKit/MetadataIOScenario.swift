// The StoreIO helpers of MetadataIO.swift at work: a folder sync pass composed of several
// read-modify-writes, two additions and an eviction pass runs as one commit; a pass whose
// step fails applies nothing.
import Foundation
import Strata

/// What ``runMetadataIOScenario(directory:)`` saw; `failures` is empty when every check passed.
public struct MetadataIOReport: Sendable {
    public var seeded: [FileMetadata] = []
    public var commitsToSeed: UInt64 = 0
    /// The sync pass: what it did, how many commits it took, and the cache afterwards.
    public var pass = SyncPassResult(touched: [], added: [], evicted: [])
    public var commitsForPass: UInt64 = 0
    public var afterPass: [FileMetadata] = []
    /// The pass that touches Notes.txt, then a path the cache does not hold.
    public var failedPassError: NotCached? = nil
    public var commitsForFailedPass: UInt64 = 0
    public var afterFailedPass: [FileMetadata] = []
    public var failures: [String] = []
}

/// Runs the scenario against a new store in `directory` and checks its outcome.
public func runMetadataIOScenario(directory: String) async throws -> MetadataIOReport {
    let store = try Store(path: directory + "/metadata-io.strata")
    defer { try? store.close() }
    var report = MetadataIOReport()

    // Four files, cached in one commit: `record` four times, composed with `sequence`.
    let seed = [
        file("/Documents/Budget.numbers", size: 40_960, day: 1),
        file("/Documents/Notes.txt", size: 1_024, day: 2),
        file("/Documents/Photo.heic", size: 2_500_000, day: 3),
        file("/Documents/Report.pdf", size: 180_000, day: 4)
    ]
    var before = store.version
    _ = try await store.run(StoreIO.sequence(seed.map(MetadataIO.record)))
    report.commitsToSeed = store.version - before
    report.seeded = try await store.run(MetadataIO.all())

    // The sync pass: two files changed on disk, two are new, and the cache keeps at most five
    // records. Budget.numbers was the oldest record, but this pass touches it first; the
    // eviction, in the same transaction, sees the new date and removes Photo.heic instead.
    let pass = MetadataIO.syncPass(
        changed: [
            FileChange(path: "/Documents/Notes.txt", size: 2_048, modified: day(10)),
            FileChange(path: "/Documents/Budget.numbers", size: 41_000, modified: day(11))
        ],
        added: [file("/Documents/Slides.key", size: 900_000, day: 12), file("/Documents/Todo.txt", size: 300, day: 13)],
        limit: 5)
    before = store.version
    report.pass = try await store.run(pass)
    report.commitsForPass = store.version - before
    report.afterPass = try await store.run(MetadataIO.all())

    // A pass that touches Notes.txt, then a file the cache never held: the second `touch`
    // throws, and nothing of the pass is applied, the first touch included.
    let failing = MetadataIO.syncPass(
        changed: [
            FileChange(path: "/Documents/Notes.txt", size: 4_096, modified: day(14)),
            FileChange(path: "/Documents/Missing.txt", size: 1, modified: day(14))
        ],
        added: [file("/Documents/Draft.txt", size: 512, day: 14)],
        limit: 5)
    before = store.version
    do {
        _ = try await store.run(failing)
        report.failures.append("a pass touching an uncached file succeeded")
    } catch let error as NotCached {
        report.failedPassError = error
    }
    report.commitsForFailedPass = store.version - before
    report.afterFailedPass = try await store.run(MetadataIO.all())

    // The checks.
    if report.commitsToSeed != 1 { report.failures.append("seeding took \(report.commitsToSeed) commits, not one") }
    if report.commitsForPass != 1 { report.failures.append("the sync pass took \(report.commitsForPass) commits, not one") }
    let expected = [
        file("/Documents/Budget.numbers", size: 41_000, day: 11),
        file("/Documents/Notes.txt", size: 2_048, day: 10),
        file("/Documents/Report.pdf", size: 180_000, day: 4),
        file("/Documents/Slides.key", size: 900_000, day: 12),
        file("/Documents/Todo.txt", size: 300, day: 13)
    ]
    if report.afterPass != expected { report.failures.append("after the sync pass the cache holds \(report.afterPass.map(\.path))") }
    if report.pass.evicted != ["/Documents/Photo.heic"] { report.failures.append("the pass evicted \(report.pass.evicted)") }
    if report.commitsForFailedPass != 0 { report.failures.append("the failed pass made \(report.commitsForFailedPass) commits") }
    if report.afterFailedPass != expected { report.failures.append("the failed pass changed the cache: \(report.afterFailedPass.map(\.path))") }
    return report
}

/// A day of the example's calendar, so that dates, and so eviction, are the same every run.
private func day(_ number: Int) -> Date {
    Date(timeIntervalSince1970: 1_750_000_000 + Double(number) * 86_400)
}

private func file(_ path: String, size: Int64, day number: Int) -> FileMetadata {
    FileMetadata(path: path, size: size, modified: day(number), contentType: contentType(of: path))
}

private func contentType(of path: String) -> String {
    switch path.split(separator: ".").last {
    case "txt": "public.plain-text"
    case "pdf": "com.adobe.pdf"
    case "heic": "public.heic"
    default: "public.data"
    }
}
