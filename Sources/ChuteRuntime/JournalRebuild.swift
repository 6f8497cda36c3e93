import ChuteCore
import Foundation
import Glibc
import SystemPackage

/// What a journal that was lost or damaged knew, read back from the sidecars of earlier runs, so that a restart does
/// not convert again what was converted.
///
/// Each sidecar below a rule's output folder (or its `sidecars` folder) records its job's source (path, size,
/// modification time, SHA-256), outcome and output. A source still at its path with the recorded size and
/// modification time is the file the job took: its row gets the source's fingerprint as it is now, so that the intake
/// knows it as handled. A source gone or changed gets a row that matches no file, which still records the output
/// (Chute never takes its own outputs as new files) and its source's hash (`onDuplicate`). Group jobs, whose source
/// is a folder, are left out: their folders are taken once again.
package enum JournalRebuild {
    /// What the sidecars gave.
    package struct Findings: Sendable {
        /// The jobs to restore, one per readable sidecar of a single-file job.
        package var jobs: [RestoredJob] = []
        /// Sidecars found.
        package var sidecars = 0
        /// Sidecars that could not be read or decoded.
        package var unreadable = 0
        /// Jobs whose source is gone or changed since (their rows record only the output).
        package var sourcesChanged = 0
        /// Group jobs, left out.
        package var groups = 0
    }

    /// Reads every sidecar below the folders `config`'s rules write sidecars to.
    ///
    /// - Important: Blocking: it lists folders and reads files; run it off Swift's cooperative pool.
    package static func findings(for config: ChuteConfig) -> Findings {
        var findings = Findings()
        for folder in Self.sidecarFolders(of: config) {
            for path in Self.sidecarFiles(below: folder) {
                findings.sidecars += 1
                guard let data = try? SystemCall.contents(of: path),
                    let sidecar = try? JSONDecoder().decode(Sidecar.self, from: data)
                else {
                    findings.unreadable += 1
                    continue
                }
                guard sidecar.inputs == nil else {
                    findings.groups += 1
                    continue
                }
                let job = Self.restoredJob(from: sidecar, at: path)
                if job.fingerprint == nil { findings.sourcesChanged += 1 }
                findings.jobs.append(job)
            }
        }
        return findings
    }

    /// The folders to look in: each rule's output folder, or its `sidecars` folder; a folder inside another is
    /// looked at once, through the outer one.
    static func sidecarFolders(of config: ChuteConfig) -> [FilePath] {
        let folders = Set(
            config.rules.map { rule in
                if case .folder(let folder) = rule.sidecars { return folder }
                return rule.output
            }
        )
        return folders.filter { folder in !folders.contains { $0 != folder && folder.starts(with: $0) } }.sorted {
            $0.string < $1.string
        }
    }

    /// The sidecar files below `folder`, at any depth, without following symbolic links. The corresponding C
    /// functions are `opendir` and `readdir`: names keep their bytes, whatever their encoding.
    static func sidecarFiles(below folder: FilePath) -> [FilePath] {
        var found: [FilePath] = []
        var pending = [folder]
        while let current = pending.popLast() {
            guard let directory = current.withPlatformString({ opendir($0) }) else { continue }
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    FilePath(platformString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                guard let component = name.lastComponent, component.string != ".", component.string != ".." else {
                    continue
                }
                let path = current.appending(component)
                switch Int32(entry.pointee.d_type) {
                case Int32(DT_DIR):
                    pending.append(path)
                case Int32(DT_REG):
                    if component.string.hasSuffix(Sidecar.fileSuffix) { found.append(path) }
                case Int32(DT_UNKNOWN):
                    // Some file systems do not fill in the type: ask.
                    guard let status = try? SourceInspector.status(of: path) else { continue }
                    if status.isDirectory {
                        pending.append(path)
                    } else if status.isRegularFile, component.string.hasSuffix(Sidecar.fileSuffix) {
                        found.append(path)
                    }
                default:
                    continue
                }
            }
        }
        return found
    }

    /// The journal row a sidecar stands for, with the source's fingerprint as it is now when it is still the file
    /// the sidecar describes, and the output's inode when it is still there.
    static func restoredJob(from sidecar: Sidecar, at path: FilePath) -> RestoredJob {
        let iso = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let source = sidecar.source.filePath
        var fingerprint: SourceFingerprint?
        if let status = try? SourceInspector.status(of: source), status.isRegularFile,
            status.fingerprint.size == sidecar.source.size,
            status.fingerprint.modified.formatted(iso) == sidecar.source.mtime
        {
            fingerprint = status.fingerprint
        }
        let output = sidecar.output.map(\.filePath)
        let outputInode = output.flatMap { output in
            (try? SourceInspector.status(of: output)).flatMap { $0.isRegularFile ? $0.fingerprint.inode : nil }
        }
        let failure = sidecar.error.map { error in
            ConversionFailure(ConversionFailure.Code(rawValue: error.code) ?? .internalError, error.message)
        }
        return RestoredJob(
            id: sidecar.jobID,
            rule: sidecar.rule,
            source: source,
            fingerprint: fingerprint,
            sourceSize: sidecar.source.size,
            sha256: sidecar.source.sha256,
            status: sidecar.status,
            failure: failure,
            output: output,
            outputInode: outputInode,
            outputFolder: (output ?? path).removingLastComponent(),
            sidecar: path,
            startedAt: try? Date(sidecar.startedAt, strategy: iso),
            endedAt: try? Date(sidecar.endedAt, strategy: iso)
        )
    }
}
