import CChuteLinux
import ChuteCore
import Foundation
import SystemPackage

/// Moves finished outputs from their hidden temporary names into place, applying the rule's collision policy, and
/// writes sidecars. Every step is a rename within one folder, so a reader sees either nothing or a whole file.
package enum OutputCommitter {
    /// How a refusal to replace an existing output ends: the rules file's word for it (``ConflictPolicy``), which
    /// `chute convert` says in its own (`--overwrite`).
    package static let skipNote = "and the rule says onConflict: skip"

    /// The prefix of every temporary file Chute writes; the watcher ignores such names.
    package static let temporaryPrefix = ".chute-"

    /// The hidden temporary path a job's worker writes to, in the output's own folder: named after the job, and after
    /// its claim in a store that agents share (``Job/claim``); for a job of a file another agent found, in its
    /// hand-off folder, from which the output is sent back (``Job/handoff``).
    package static func temporaryPath(for job: Job) -> FilePath {
        (job.handoff?.folder ?? job.plan.directory).appending(
            "\(self.temporaryPrefix)\(job.id)\(job.claim.map { ".\($0)" } ?? "").partial"
        )
    }

    /// The sidecar path for an output path.
    package static func sidecarPath(for output: FilePath) -> FilePath {
        output.appendingToLastComponent(Sidecar.fileSuffix)
    }

    /// Creates a folder and its missing parents, each owned and permitted as ``OutputOwnership`` says for a folder
    /// created in its parent.
    ///
    /// - Parameter beforeCommit: whether nothing of the job is in place yet (the output's folder before the worker
    ///   starts): a read-only target is then `targetReadOnly`, tried again later (``ConversionFailure/creating(_:_:)``).
    /// - Throws: ``ConversionFailure`` (`.outputFailed`, `.diskFull`, `.targetReadOnly`) with the system's message.
    package static func makeDirectory(
        _ directory: FilePath,
        ownership: OutputOwnership = OutputOwnership(),
        beforeCommit: Bool = false
    ) throws(ConversionFailure) {
        var missing: [FilePath] = []
        var folder = directory
        while !folder.isEmpty, folder != folder.removingLastComponent(), SystemCall.access(folder, F_OK) != 0 {
            missing.append(folder)
            folder.removeLastComponent()
        }
        for folder in missing.reversed() {
            // Private until it has its final owner and permissions; another job may create it at the same time.
            if SystemCall.mkdir(folder, 0o700) == 0 {
                _ = self.applyOwnership(ownership, to: folder, isFolder: true)
            } else if errno != EEXIST {
                let action = "cannot create the output folder \(folder)"
                throw beforeCommit
                    ? ConversionFailure.creating(action, Errno(rawValue: errno))
                    : ConversionFailure.writing(action, Errno(rawValue: errno))
            }
        }
    }

    /// Gives a file or folder Chute created (a file still under its temporary name) its owner, group and permissions:
    /// what the rule sets, the rest from the folder it is in (``OutputOwnership``). The corresponding C functions are
    /// `lchown` and `chmod`.
    ///
    /// - Returns: a warning when the rule's own owner or group could not be set (a daemon that is not root cannot give
    ///   files away). An inherited owner that cannot be set is left as it is, and the folder's group is still tried
    ///   alone, which a member of that group may set.
    package static func applyOwnership(
        _ ownership: OutputOwnership,
        to path: FilePath,
        isFolder: Bool = false
    ) -> String? {
        var folder = stat()
        guard SystemCall.stat(path.removingLastComponent(), &folder) == 0 else { return nil }
        let owner = ownership.owner ?? folder.st_uid
        let group = ownership.group ?? folder.st_gid
        var warning: String?
        if SystemCall.lchown(path, owner, group) != 0 {
            let error = Errno(rawValue: errno)
            if ownership.setsAccount {
                warning = "could not give the output owner \(owner) and group \(group): \(error)"
            } else {
                _ = SystemCall.lchown(path, uid_t.max, group)
            }
        }
        let folderMode = UInt32(folder.st_mode)
        let mode =
            isFolder
            ? ownership.folderMode(inFolderWithMode: folderMode) : ownership.fileMode(inFolderWithMode: folderMode)
        // After the owner, since a change of owner clears set-ID bits. Some network file systems refuse both; what
        // they give the file then is theirs to decide.
        SystemCall.chmod(path, mode_t(mode))
        return warning
    }

    /// Renames `temporary` to the planned output name, or to a free variant of it.
    ///
    /// - Parameters:
    ///   - temporary: the finished, synced output under its hidden name.
    ///   - plan: the planned folder and name.
    ///   - policy: what to do when the name is taken.
    /// - Returns: the final path, and a warning when an existing file was replaced.
    /// - Throws: ``ConversionFailure`` (`.outputFailed`); the temporary file is left for the caller to remove.
    package static func commit(
        _ temporary: FilePath,
        as plan: OutputPlan,
        policy: ConflictPolicy
    ) throws(ConversionFailure) -> (path: FilePath, warning: String?) {
        for name in Self.candidateNames(plan.name) {
            let candidate = plan.directory.appending(name)
            if policy == .overwrite {
                let existed = (try? SourceInspector.status(of: candidate)) != nil
                guard SystemCall.rename(temporary, candidate) == 0 else {
                    throw ConversionFailure(.outputFailed, "cannot rename into \(candidate): \(Errno(rawValue: errno))")
                }
                try self.syncDirectory(plan.directory)
                return (candidate, existed ? "replaced the existing file \(candidate) (onConflict: overwrite)" : nil)
            }
            switch Self.renameWithoutReplacing(temporary, candidate) {
            case .success:
                try self.syncDirectory(plan.directory)
                return (candidate, nil)
            case .failure(.fileExists) where policy == .rename:
                continue
            case .failure(.fileExists):
                throw ConversionFailure(
                    .outputFailed,
                    "the output \(candidate) already exists " + Self.skipNote
                )
            case .failure(let errno):
                throw ConversionFailure(.outputFailed, "cannot rename into \(candidate): \(errno)")
            }
        }
        throw ConversionFailure(.outputFailed, "no free name for \(plan.path) after \(Self.nameAttempts) attempts")
    }

    /// How ``makeLinkedCopy(of:at:)`` made a second output of the same bytes.
    package enum Link: String, Sendable {
        /// A copy that shares the first file's blocks (Btrfs, XFS, bcachefs): the two are independent files.
        case reflink
        /// A second name of the same file (other file systems): both names show every later change of either.
        case hardLink = "hard link"
    }

    /// Makes `temporary` a file with the bytes of `existing` without copying them: a reflink where the file system
    /// can, else a hard link. The corresponding C calls are `ioctl(FICLONE)` and `link`.
    ///
    /// - Returns: how, or `nil` when neither works here (another file system, one without links): the caller
    ///   converts instead. Nothing is left at `temporary` then.
    package static func makeLinkedCopy(of existing: FilePath, at temporary: FilePath) -> Link? {
        if let source = try? FileDescriptor.open(existing, .readOnly) {
            defer { try? source.close() }
            if let clone = try? FileDescriptor.open(
                temporary,
                .writeOnly,
                options: [.create, .exclusiveCreate],
                permissions: [.ownerReadWrite]
            ) {
                let cloned = chute_clone_file(clone.rawValue, source.rawValue) == 0 && fsync(clone.rawValue) == 0
                try? clone.close()
                if cloned { return .reflink }
                _ = temporary.withPlatformString { unlink($0) }
            }
        }
        let linked = existing.withPlatformString { from in temporary.withPlatformString { link(from, $0) } }
        return linked == 0 ? .hardLink : nil
    }

    /// Renames the parts of a job with several outputs (``OutputPart``) into place, all of them or none, applying the
    /// rule's collision policy to the set: the set is named after the plan (`photo.png`: `photo-r1c1.png`, …), and
    /// with `rename` the whole set moves to the first free variant of that name (`photo-1-r1c1.png`, …) rather than
    /// one part alone.
    ///
    /// A part that finds its name taken sends the parts already renamed back to their temporary names before the next
    /// name is tried, or before the failure. A kill in the middle leaves a partial set, which ``SQLiteJobStore/recover()``
    /// withdraws at the next start.
    ///
    /// - Parameters:
    ///   - parts: the parts, synced under their temporary names (``OutputPart/temporaryPath(beside:)``).
    ///   - temporary: the job's temporary output, beside which the parts were written.
    ///   - plan: the planned folder and the name of the set.
    ///   - policy: what to do when a name is taken.
    /// - Returns: the name of the set (where its sidecar goes), the parts' final paths in order, and a warning for
    ///   each existing file replaced.
    /// - Throws: ``ConversionFailure`` (`.outputFailed`); the parts are all under their temporary names again, for the
    ///   caller to remove.
    package static func commit(
        _ parts: [OutputPart],
        beside temporary: FilePath,
        as plan: OutputPlan,
        policy: ConflictPolicy
    ) throws(ConversionFailure) -> (set: FilePath, paths: [FilePath], warnings: [String]) {
        let temporaries = parts.map { $0.temporaryPath(beside: temporary) }
        func putBack(_ renamed: [FilePath]) {
            for (index, path) in renamed.enumerated().reversed() {
                SystemCall.rename(path, temporaries[index])
            }
        }
        for name in policy == .overwrite ? [plan.name] : Array(Self.candidateNames(plan.name)) {
            var renamed: [FilePath] = []
            var warnings: [String] = []
            var taken: FilePath?
            for (index, part) in parts.enumerated() {
                let candidate = plan.directory.appending(part.name(forSetNamed: name))
                if policy == .overwrite {
                    if (try? SourceInspector.status(of: candidate)) != nil {
                        warnings.append("replaced the existing file \(candidate) (onConflict: overwrite)")
                    }
                    guard SystemCall.rename(temporaries[index], candidate) == 0 else {
                        let error = Errno(rawValue: errno)
                        putBack(renamed)
                        throw ConversionFailure(.outputFailed, "cannot rename into \(candidate): \(error)")
                    }
                } else {
                    switch Self.renameWithoutReplacing(temporaries[index], candidate) {
                    case .success:
                        break
                    case .failure(.fileExists):
                        taken = candidate
                    case .failure(let error):
                        putBack(renamed)
                        throw ConversionFailure(.outputFailed, "cannot rename into \(candidate): \(error)")
                    }
                }
                if taken != nil { break }
                renamed.append(candidate)
                CrashPoint.afterPartRename.reached()
            }
            if let taken {
                putBack(renamed)
                guard policy == .rename else {
                    throw ConversionFailure(
                        .outputFailed,
                        "the output \(taken) already exists " + Self.skipNote
                    )
                }
                continue
            }
            try self.syncDirectory(plan.directory)
            return (plan.directory.appending(name), renamed, warnings)
        }
        throw ConversionFailure(.outputFailed, "no free name for \(plan.path) after \(Self.nameAttempts) attempts")
    }

    /// Removes a job's temporary output and the temporary parts written beside it (``OutputPart``), whichever exist:
    /// after a failure, a crash of its worker or a cancellation, the supervisor does not know which parts were
    /// written.
    package static func removeTemporaries(of temporary: FilePath) {
        SystemCall.unlink(temporary)
        let prefix = (temporary.lastComponent?.bytes ?? []) + [UInt8(ascii: "-")]
        let folder = temporary.removingLastComponent()
        guard let names = try? SystemCall.entries(of: folder) else { return }
        for name in names where name.bytes.starts(with: prefix) {
            SystemCall.unlink(folder.appending(name))
        }
    }

    /// The names tried for a file that must not replace another: `name` itself, then `-1`, `-2`, … before its
    /// extension, up to ``nameAttempts`` in all, with the bytes of `name` (which need not be valid UTF-8).
    static func candidateNames(_ name: FilePath.Component) -> some Sequence<FilePath.Component> {
        let (stem, ext) = name.stemAndExtensionBytes
        let suffix = ext.isEmpty ? [] : [UInt8(ascii: ".")] + ext
        // A stem with `-N` and the extension it had is a name again.
        return (0..<Self.nameAttempts).lazy.map { attempt in
            attempt == 0 ? name : FilePath.Component(bytes: stem + "-\(attempt)".utf8 + suffix)!
        }
    }

    /// How many names ``candidateNames(_:)`` offers.
    static let nameAttempts = 1000

    /// Writes a job's sidecar as pretty-printed JSON, atomically (temporary name, sync, rename), owned and permitted
    /// like the output (``applyOwnership(_:to:isFolder:)``).
    ///
    /// - Throws: ``ConversionFailure`` (`.outputFailed`) with the system's message.
    package static func writeSidecar(
        _ sidecar: Sidecar,
        at path: FilePath,
        ownership: OutputOwnership = OutputOwnership()
    ) throws(ConversionFailure) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let directory = path.removingLastComponent()
        let temporaryName = "\(self.temporaryPrefix)\(sidecar.jobID).sidecar"
        do {
            var data = try encoder.encode(sidecar)
            data.append(UInt8(ascii: "\n"))
            try TemporaryFile.write(data, replacing: path, temporaryName: temporaryName) { temporary in
                _ = self.applyOwnership(ownership, to: temporary)
            }
        } catch {
            throw ConversionFailure.writing("cannot write the sidecar \(LogText.escaped(path))", error)
        }
        try self.syncDirectory(directory)
    }

    /// Removes Chute's temporary files left in a folder tree by a process that was killed.
    ///
    /// - Parameter agent: in a store that agents share, this agent's name: only the temporary outputs of its own claims
    ///   go (``Job/claim``), since other agents write into the same folders while it starts.
    /// - Returns: the paths removed.
    @discardableResult
    package static func removeStaleTemporaries(below directory: FilePath, of agent: String? = nil) -> [FilePath] {
        var removed: [FilePath] = []
        let mark = agent.map { Array(".\($0)-".utf8) }
        for relative in SystemCall.files(below: directory) {
            let path = directory.pushing(relative)
            guard let name = path.lastComponent?.bytes, name.starts(with: self.temporaryPrefix.utf8),
                mark.map({ name.firstRange(of: $0) != nil }) ?? true,
                (try? SourceInspector.status(of: path))?.isRegularFile == true
            else { continue }
            if SystemCall.unlink(path) == 0 { removed.append(path) }
        }
        return removed
    }

    static func renameWithoutReplacing(_ source: FilePath, _ target: FilePath) -> Result<Void, Errno> {
        let renamed = source.withPlatformString { source in
            target.withPlatformString { chute_rename_noreplace(AT_FDCWD, source, AT_FDCWD, $0) }
        }
        if renamed == 0 { return .success(()) }
        let error = Errno(rawValue: errno)
        guard error == .invalidArgument || error == .noFunction || error == .notSupported else {
            return .failure(error)
        }
        // File systems without RENAME_NOREPLACE (some FUSE and network mounts): link() refuses an existing name too.
        guard SystemCall.link(source, target) == 0 else { return .failure(Errno(rawValue: errno)) }
        SystemCall.unlink(source)
        return .success(())
    }

    static func syncDirectory(_ directory: FilePath) throws(ConversionFailure) {
        do {
            let descriptor = try FileDescriptor.open(directory, .readOnly, options: [.directory, .closeOnExec])
            defer { try? descriptor.close() }
            try SystemCall.check("fsync") { fsync(descriptor.rawValue) }
        } catch {
            let cause = SystemCallError.cause(of: error)
            throw ConversionFailure(.outputFailed, "cannot sync the folder \(directory): \(cause)")
        }
    }
}
