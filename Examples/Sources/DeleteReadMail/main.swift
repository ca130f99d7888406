// delete-read-mail: the UI hands a query reference to a background deletion of read mail,
// and a mail marked unread in between is not deleted (MailKit/DeleteReadMail.swift). Exits 1
// if a check failed.
//
//   swift run --package-path Examples delete-read-mail [directory]
import Foundation
import MailKit

let arguments = CommandLine.arguments.dropFirst()
let directory = arguments.first ?? FileManager.default.temporaryDirectory.appendingPathComponent("delete-read-mail-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let report = try await runDeleteReadMailScenario(directory: directory)
if arguments.isEmpty { try? FileManager.default.removeItem(atPath: directory) }

func list(_ ids: [Int]) -> String { ids.map(String.init).joined(separator: ", ") }

print("inbox:")
for mail in report.inboxBefore { print("  \(mail)") }
print("the UI lists read mail \(list(report.listedAsRead)) and takes a reference to that query (version \(report.referenceVersion))")
print("meanwhile a sync from another device marks mail \(report.markedUnread) unread")
print("the user taps \"Delete read mail\": the deletion is queued with asyncWrite, given only the reference")
print("  changedSince(reference): \(report.deletion.changedSinceReference) (the read mail changed after the UI listed it)")
print("  the query run again now finds read mail \(list(report.deletion.deleted)): deleted those")
let spared = Set(report.listedAsRead).subtracting(report.deletion.deleted).sorted()
if !spared.isEmpty {
    print("  spared \(list(spared)): deleting the UI's list would have removed mail the user has not read")
}
print("inbox now:")
for mail in report.inboxAfter { print("  \(mail)") }

for failure in report.failures { print("FAILED: \(failure)") }
print(report.failures.isEmpty ? "PASS" : "FAIL")
exit(report.failures.isEmpty ? 0 : 1)
