import ChuteCore
import SystemPackage

/// Settles the jobs a stopped daemon left unfinished; run once at start-up, before the watcher.
///
/// It reads what the store left (``JobStore/unfinishedJobs()``), decides each job from what is on disk and does the
/// file work that needs (a sidecar written, the parts of a half-renamed set removed) on a Dispatch thread, outside any
/// transaction of the store, then records the decisions in one go (``JobStore/settle(_:)``). A kill during recovery
/// leaves the same rows to settle again, and each step is idempotent: a sidecar is written again, a part already
/// removed is not found.
///
/// What becomes of each job:
/// - `queued`, `running` or `interrupted`: nothing was published; the record goes and the file is taken again (its
///   temporary output is removed as stale). An upload, which no scan finds, keeps its record and is submitted again
///   with the same id (``RecoveryAction/resubmit(jobID:)``); so is one whose output was not renamed into place.
/// - `committing`: a rename keeps the inode, so the output is looked up by the recorded inode in its folder. Found,
///   it gets its sidecar and the job completes; not found, the rename never happened and the file runs again. A job
///   with several outputs (``OutputPart``) records the inode of each: all found, the set completes; none, the file
///   runs again; only some (a kill between the renames of the set), those are removed and the file runs again, so
///   that a set is never seen in part once recovery is done.
package enum JobRecovery {
    /// Settles every unfinished job of `store`.
    ///
    /// - Returns: what was settled, for the log.
    /// - Throws: when the store cannot be read or written, or a sidecar cannot be written.
    package static func run(_ store: any JobStore) async throws -> RecoverySummary {
        try await Self.run(store, jobs: try await store.unfinishedJobs())
    }

    /// Settles `jobs` of `store`: this daemon's own at its start, or those an agent takes over from another whose
    /// lease ran out while it committed (``SharedQueue/takeOverCommits()``).
    package static func run(_ store: any JobStore, jobs: [UnfinishedJob]) async throws -> RecoverySummary {
        guard !jobs.isEmpty else { return RecoverySummary() }
        let (actions, summary) = try await Blocking.run { () throws(ConversionFailure) in
            var summary = RecoverySummary()
            var actions: [RecoveryAction] = []
            for job in jobs {
                actions.append(try Self.settle(job, summary: &summary))
            }
            return (actions, summary)
        }
        try await store.settle(actions)
        return summary
    }

    /// Decides one job from what is on disk, and does its file work.
    static func settle(
        _ job: UnfinishedJob,
        summary: inout RecoverySummary
    ) throws(ConversionFailure)
        -> RecoveryAction
    {
        // Only its record knows an upload: it is not found again by a scan.
        let again: RecoveryAction = job.origin == .upload ? .resubmit(jobID: job.id) : .rerun(jobID: job.id)
        if case .resubmit = again, job.stage == .queued || job.stage == .converting {
            summary.resubmitted.append(job.id)
        }
        switch job.stage {
        case .queued:
            summary.queued += 1
            return again
        case .converting:
            summary.interrupted += 1
            return again
        case .committing(let record) where record.parts != nil:
            let action = try Self.settleSet(job, record, summary: &summary)
            if case .rerun = action, case .resubmit = again {
                summary.resubmitted.append(job.id)
                return again
            }
            return action
        case .committing(let record):
            guard let output = Self.file(withInode: record.outputInode, in: record.outputFolder),
                var sidecar = record.sidecar
            else {
                summary.unpublished += 1
                if case .resubmit = again { summary.resubmitted.append(job.id) }
                return again
            }
            let size = (try? SourceInspector.status(of: output))?.fingerprint.size ?? 0
            sidecar.output = Sidecar.Output(path: output, size: size)
            var written: FilePath?
            if record.writesSidecar {
                var path = output.appendingToLastComponent(Sidecar.fileSuffix)
                if let folder = record.sidecarFolder, let name = path.lastComponent { path = folder.appending(name) }
                try OutputCommitter.makeDirectory(path.removingLastComponent())
                try OutputCommitter.writeSidecar(sidecar, at: path)
                written = path
            }
            summary.completed += 1
            return .complete(jobID: job.id, output: output, sidecar: written)
        }
    }

    /// Settles a job with several outputs: the whole set in place completes with its sidecar, named after the set;
    /// none of it runs again; a part of it is removed, and the job runs again.
    private static func settleSet(
        _ job: UnfinishedJob,
        _ record: CommitRecord,
        summary: inout RecoverySummary
    ) throws(ConversionFailure) -> RecoveryAction {
        let parts = record.parts ?? []
        let found = Self.files(withInodes: Set(parts.map(\.inode)), in: record.outputFolder)
        let outputs = parts.compactMap { found[$0.inode] }
        if !parts.isEmpty, outputs.count == parts.count,
            let setName = outputs[0].lastComponent.flatMap({
                OutputPart.setName(ofPartNamed: $0, label: parts[0].label)
            }),
            var sidecar = record.sidecar
        {
            let listed = outputs.map { output in
                Sidecar.Output(path: output, size: (try? SourceInspector.status(of: output))?.fingerprint.size ?? 0)
            }
            sidecar.output = listed[0]
            sidecar.outputs = listed
            var written: FilePath?
            if record.writesSidecar {
                let path = (record.sidecarFolder ?? record.outputFolder).appending(setName)
                    .appendingToLastComponent(Sidecar.fileSuffix)
                try OutputCommitter.makeDirectory(path.removingLastComponent())
                try OutputCommitter.writeSidecar(sidecar, at: path)
                written = path
            }
            summary.completed += 1
            return .complete(jobID: job.id, output: outputs[0], sidecar: written)
        }
        for output in outputs {
            SystemCall.unlink(output)
        }
        if outputs.isEmpty {
            summary.unpublished += 1
        } else {
            try OutputCommitter.syncDirectory(record.outputFolder)
            summary.withdrawn += 1
        }
        return .rerun(jobID: job.id)
    }

    /// The file in `folder` (not a temporary one) whose inode is `inode`: inodes are unique among the files of one
    /// file system, and a rename keeps them.
    private static func file(withInode inode: UInt64, in folder: FilePath) -> FilePath? {
        Self.files(withInodes: [inode], in: folder)[inode]
    }

    /// The files in `folder` (not temporary ones) whose inodes are among `inodes`, by inode.
    private static func files(withInodes inodes: Set<UInt64>, in folder: FilePath) -> [UInt64: FilePath] {
        guard let names = try? SystemCall.entries(of: folder) else { return [:] }
        var found: [UInt64: FilePath] = [:]
        for name in names where !name.bytes.starts(with: OutputCommitter.temporaryPrefix.utf8) {
            let path = folder.appending(name)
            if let status = try? SourceInspector.status(of: path), status.isRegularFile,
                inodes.contains(status.fingerprint.inode)
            {
                found[status.fingerprint.inode] = path
            }
        }
        return found
    }
}
