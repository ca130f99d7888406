import Logging
import StrataIO

/// The store's `aside/` directory (docs/format/store.md): where recovery and salvage put
/// files they will not delete, because the store cannot prove it wrote them, or because they
/// hold damaged data someone may still want to look at.
enum AsideDirectory {
    static let name = "aside"

    /// Moves `name` from the store directory into `aside/` (creating it), under a free name:
    /// `aside/NAME`, or `aside/NAME.1`, `.2`, ... The rename and both directories are synced
    /// before it returns, so the move survives a crash. Returns the new path relative to the
    /// store directory; reports and logs the move.
    @discardableResult
    static func move(
        _ name: String, in directory: String, reason: String, options: StoreOptions, report: inout RecoveryReport
    ) throws -> String {
        let fs = options.fileSystem
        let aside = fs.path(directory, Self.name)
        switch try fs.kind(of: aside) {
        case nil:
            try fs.createDirectory(aside)
            try fs.syncDirectory(directory)
        case .directory:
            break
        case .file, .other:
            throw StoreError(
                .corruption, "\(aside) is not a directory, so the store has nowhere to set \(name) aside; move it out of the store directory",
                file: aside)
        }
        var target = name
        var suffix = 0
        while try fs.kind(of: fs.path(aside, target)) != nil {
            suffix += 1
            target = "\(name).\(suffix)"
        }
        try fs.rename(fs.path(directory, name), to: fs.path(aside, target))
        try fs.syncDirectory(aside)
        try fs.syncDirectory(directory)
        let movedTo = "\(Self.name)/\(target)"
        report.movedAside.append(RecoveryReport.MovedFile(name: name, movedTo: movedTo, reason: reason))
        options.logger.warning(
            "set a file aside instead of removing it", metadata: ["file": "\(name)", "movedTo": "\(movedTo)", "reason": "\(reason)"])
        return movedTo
    }
}
