import Foundation
import SystemPackage

extension TemporaryFile {
    /// Writes an engine's output in one go at `path` (the job's temporary output, or a part beside it,
    /// ``OutputPart``), synced and left there for the supervisor to rename into place; a file that cannot be finished
    /// is removed.
    ///
    /// - Throws: ``ConversionFailure/writingOutput(_:)``: `outputFailed`, saying whether the name was taken;
    ///   `diskFull` for `ENOSPC` and `EDQUOT`; `targetReadOnly` when the folder cannot be written to now.
    package static func writeOutput(_ bytes: some ContiguousBytes, at path: FilePath) throws(ConversionFailure) {
        do throws(SystemCallError) {
            let file = try TemporaryFile(creatingAt: path)
            try Self.write(bytes, to: file)
            try file.keep()
        } catch {
            throw .writingOutput(error)
        }
    }

    /// Writes `bytes` to `path` through the temporary name `temporaryName` beside it, synced and renamed into place,
    /// so that a reader sees the old file or the whole new one (a sidecar, a quarantined file's reason). The
    /// corresponding C functions are `open`, `write`, `fsync`, `close` and `rename`.
    ///
    /// - Parameters:
    ///   - temporaryName: a hidden name of the job's own (``OutputCommitter``'s temporary prefix and the job id): a
    ///     file left under it by a process that was killed while writing it is replaced.
    ///   - beforeRename: called with the synced temporary file before it is renamed (to set its owner).
    /// - Throws: ``SystemCallError`` when a step fails; the temporary file is then removed.
    package static func write(
        _ bytes: some ContiguousBytes,
        replacing path: FilePath,
        temporaryName: String,
        beforeRename: (FilePath) -> Void = { _ in }
    ) throws(SystemCallError) {
        let temporary = path.removingLastComponent().appending(temporaryName)
        SystemCall.unlink(temporary)
        let file = try TemporaryFile(creatingAt: temporary)
        try Self.write(bytes, to: file)
        try file.rename(to: path, beforeRename: beforeRename)
    }

    /// Writes all of `bytes` to `file`. `ContiguousBytes.withUnsafeBytes` only rethrows untyped errors, so the typed
    /// error travels out in a `Result`.
    private static func write(_ bytes: some ContiguousBytes, to file: borrowing TemporaryFile) throws(SystemCallError) {
        try bytes.withUnsafeBytes { buffer in Result { () throws(SystemCallError) in try file.write(buffer) } }.get()
    }
}
