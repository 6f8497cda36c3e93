import ChuteCore
import Foundation
import SystemPackage

/// What happens to a source after its job: as the rule's `source` says once the output is verified and in place
/// (kept, moved to the done folder, deleted), or, when the job failed because of the file itself, moved into the
/// rule's `quarantine` folder with a reason file.
///
/// A source is only moved or deleted while it is still the version the job converted (same fingerprint), and
/// after a success only while the output is still in place. Moved files keep their sub-folder path below the
/// watched folder; a taken name gets `-1`, `-2`, … before the extension, so nothing is ever replaced. Across file
/// systems a move is a copy that is synced before the original is removed.
package enum SourceDisposal {
    /// Applies the rule's source policy after a completed job.
    ///
    /// - Parameters:
    ///   - job: the job; its rule's `sourcePolicy` decides.
    ///   - output: the output that was put in place.
    ///   - marker: the source's `doneSuffix` marker, moved or deleted along with it.
    /// - Returns: where the source went (`nil` when it was kept or deleted).
    /// - Throws: ``ConversionFailure`` (`.outputFailed`) when the output is gone, the source changed, or the move
    ///   or delete failed; the source is then where it was.
    package static func afterSuccess(
        _ job: Job,
        output: FilePath,
        marker: FilePath?
    ) throws(ConversionFailure) -> FilePath? {
        guard job.rule.sourcePolicy != .keep else { return nil }
        guard let status = try? SourceInspector.status(of: output), status.isRegularFile else {
            throw ConversionFailure(
                .outputFailed,
                "the output \(LogText.escaped(output)) is gone; the source was left in place"
            )
        }
        try Self.checkUnchanged(job)
        switch job.rule.sourcePolicy {
        case .keep:
            return nil
        case .delete:
            guard SystemCall.unlink(job.source) == 0 else {
                throw ConversionFailure(.outputFailed, "cannot delete the source: \(Errno(rawValue: errno))")
            }
            if let marker { SystemCall.unlink(marker) }
            return nil
        case .move(let folder):
            let moved = try Self.move(job, into: folder)
            if let marker { SystemCall.unlink(marker) }
            return moved
        }
    }

    /// Moves the source of a failed job into `folder` and writes a reason file beside it (`NAME.reason.txt`).
    ///
    /// - Returns: the quarantined file.
    /// - Throws: ``ConversionFailure`` (`.outputFailed`) when the source changed or cannot be moved.
    package static func quarantine(
        _ job: Job,
        into folder: FilePath,
        failure: ConversionFailure,
        sidecar: FilePath
    ) throws(ConversionFailure) -> FilePath {
        try Self.checkUnchanged(job)
        let moved = try Self.move(job, into: folder)
        let reason = """
            Chute could not convert this file, and its rule moved it here.
            file: \(LogText.escaped(job.source))
            rule: \(LogText.escaped(job.rule.name))
            job: \(job.id)
            error: \(failure.code.rawValue)
            message: \(LogText.escaped(failure.message))
            sidecar: \(LogText.escaped(sidecar))
            time: \(Date().formatted(.iso8601))
            To try again, move the file back into the watched folder.

            """
        let reasonPath = Self.reasonPath(of: moved)
        do throws(SystemCallError) {
            let temporaryName = "\(OutputCommitter.temporaryPrefix)\(job.id).reason"
            try TemporaryFile.write(Data(reason.utf8), replacing: reasonPath, temporaryName: temporaryName)
        } catch {
            throw ConversionFailure(
                .outputFailed,
                "moved to \(LogText.escaped(moved)), but cannot write its reason file: \(error.cause)"
            )
        }
        return moved
    }

    /// The reason file written beside a quarantined file: `NAME.reason.txt`.
    package static func reasonPath(of quarantined: FilePath) -> FilePath {
        quarantined.appendingToLastComponent(".reason.txt")
    }

    /// Fails unless the source is still the version the job converted.
    private static func checkUnchanged(_ job: Job) throws(ConversionFailure) {
        guard let now = try? SourceInspector.status(of: job.source, beneath: job.root),
            now.fingerprint == job.fingerprint
        else {
            throw ConversionFailure(.inputChanged, "the source changed or vanished after its job; it was left alone")
        }
    }

    /// Moves the source below `folder`, keeping its path below the watched folder, under a free name.
    private static func move(_ job: Job, into folder: FilePath) throws(ConversionFailure) -> FilePath {
        var relative = job.source
        _ = relative.removePrefix(job.root)
        let directory = folder.appending(relative.removingLastComponent().components)
        try OutputCommitter.makeDirectory(directory)
        for name in OutputCommitter.candidateNames(job.source.lastComponent ?? FilePath.Component(job.id)!) {
            let target = directory.appending(name)
            switch OutputCommitter.renameWithoutReplacing(job.source, target) {
            case .success:
                try OutputCommitter.syncDirectory(directory)
                return target
            case .failure(.fileExists):
                continue
            case .failure(.improperLink):
                try Self.copyThenRemove(job, to: target, directory: directory)
                return target
            case .failure(let error):
                throw ConversionFailure(.outputFailed, "cannot move the source to \(LogText.escaped(target)): \(error)")
            }
        }
        throw ConversionFailure(
            .outputFailed,
            "no free name for the source in \(LogText.escaped(directory)) after \(OutputCommitter.nameAttempts) attempts"
        )
    }

    /// A move across file systems: copies to a hidden name in the target folder, syncs, renames into place (never
    /// replacing), and only then removes the original.
    private static func copyThenRemove(
        _ job: Job,
        to target: FilePath,
        directory: FilePath
    ) throws(ConversionFailure) {
        let temporary = directory.appending("\(OutputCommitter.temporaryPrefix)\(job.id).moving")
        do {
            let input = try FileDescriptor.open(job.source, .readOnly, options: [.noFollow, .closeOnExec])
            try input.closeAfter {
                let output = try TemporaryFile(creatingAt: temporary)
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                while true {
                    let count = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
                    guard count > 0 else { break }
                    try buffer.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                }
                try output.keep()
            }
            if case .failure(let error) = OutputCommitter.renameWithoutReplacing(temporary, target) {
                throw error
            }
            try OutputCommitter.syncDirectory(directory)
        } catch {
            SystemCall.unlink(temporary)
            let cause = SystemCallError.cause(of: error)
            throw ConversionFailure(.outputFailed, "cannot copy the source to \(LogText.escaped(target)): \(cause)")
        }
        guard SystemCall.unlink(job.source) == 0 else {
            throw ConversionFailure(
                .outputFailed,
                "copied the source to \(LogText.escaped(target)) but cannot remove the original: \(Errno(rawValue: errno))"
            )
        }
    }
}
