import ChuteCore
import Foundation
import SystemPackage

/// The folder beside the journal where files uploaded through the API wait for their jobs, and where their outputs
/// and sidecars stay until `uploadRetention` after the job ended (unless the rule says `uploadOutput: folder`).
///
/// Each upload has a folder of its own named after its job's id: `spool/JOB/in/NAME` is the uploaded file, under a
/// name made safe from the client's (``fileName(_:)``), and `spool/JOB/out/` holds its outputs. The body is written to
/// `spool/JOB/in/.chute-upload.partial` first and renamed once whole, so that an upload cut short never becomes a
/// job; ``sweep(store:retention:now:)`` removes what such an upload left, and what an ended job's retention is over
/// for.
package struct UploadSpool: Sendable {
    /// The spool folder.
    package let folder: FilePath

    /// The name an upload's body is written under until it is whole.
    package static let partialName: FilePath.Component = ".chute-upload.partial"

    package init(folder: FilePath) {
        self.folder = folder
    }

    /// The spool beside the journal at `journal`: `spool` in its folder.
    package init(journal: FilePath) {
        self.folder = journal.removingLastComponent().appending("spool")
    }

    /// The folder of the upload of job `jobID`.
    package func directory(of jobID: String) -> FilePath { self.folder.appending(jobID) }

    /// The folder the uploaded file of job `jobID` is in.
    package func inputFolder(of jobID: String) -> FilePath { self.directory(of: jobID).appending("in") }

    /// The folder the outputs of job `jobID` go to, when its rule keeps them in the spool.
    package func outputFolder(of jobID: String) -> FilePath { self.directory(of: jobID).appending("out") }

    /// Whether `path` is below the spool.
    package func contains(_ path: FilePath) -> Bool { path.starts(with: self.folder) && path != self.folder }

    /// A file name for an upload from what the client called it: its last path component, without control
    /// characters, never hidden (no leading dot) and never a Chute or temporary name; `upload` when nothing is left.
    /// The client's name is never used as a path.
    package static func fileName(_ client: String?) -> FilePath.Component {
        let last = (client ?? "").split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var name = String(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
        while name.hasPrefix(".") { name.removeFirst() }
        name = name.trimmingCharacters(in: .whitespaces)
        if name.utf8.count > 200 {
            // Kept short enough for any file system, with its extension.
            let ext = (name as NSString).pathExtension
            name = String(name.prefix(150)) + (ext.isEmpty ? "" : ".\(ext)")
        }
        return FilePath.Component(name) ?? "upload"
    }

    /// Makes the upload folder of job `jobID`, readable by the daemon's user only.
    ///
    /// - Throws: ``ConversionFailure`` with code `outputFailed` when it cannot be made.
    package func makeFolders(for jobID: String) throws(ConversionFailure) {
        for folder in [self.folder, self.directory(of: jobID), self.inputFolder(of: jobID)] {
            guard mkdir(folder.string, 0o700) == 0 || errno == EEXIST else {
                throw ConversionFailure(
                    .outputFailed,
                    "cannot make the spool folder \(folder): \(Errno(rawValue: errno))"
                )
            }
        }
    }

    /// Removes the upload of job `jobID`: its file, its outputs in the spool and their sidecars.
    package func remove(_ jobID: String) {
        try? FileManager.default.removeItem(atPath: self.directory(of: jobID).string)
    }

    /// The job an uploaded file becomes for `rule`, decided as for a dropped file: the rule's `match` patterns against
    /// its name, its filters and its target against the sniffed content, and an engine that reads that content.
    ///
    /// - Parameters:
    ///   - file: the uploaded file, in ``inputFolder(of:)``.
    ///   - reads: whether an engine reads a sniffed type, for the target's engine (the engine registry's answer).
    /// - Returns: the job (origin ``JobOrigin/upload``, output in the spool unless `uploadOutput: folder`), or why the
    ///   rule does not take the file.
    package func job(
        _ jobID: String,
        file: FilePath,
        rule: Rule,
        now: Date = Date(),
        reads: (EngineKind, MediaType) -> Bool
    ) -> Result<Job, UploadRefusal> {
        let root = self.inputFolder(of: jobID)
        guard let status = try? SourceInspector.status(of: file, beneath: root), status.isRegularFile else {
            return .failure(UploadRefusal("the uploaded file is gone from the spool"))
        }
        var single = rule
        single.watches = []
        let matcher = RuleMatcher(config: ChuteConfig(watches: [WatchConfig(path: root)], rules: [single]))
        let sniffed = SourceInspector.sniff(file, beneath: root)
        let facts = FileFacts(size: status.fingerprint.size, modified: status.fingerprint.modified, sniffed: sniffed)
        let decision = matcher.decide(
            path: file,
            root: root,
            facts: facts,
            now: now,
            date: now
        )
        switch decision {
        case .ignored(let reason):
            return .failure(UploadRefusal("rule '\(rule.name)' does not take it: \(reason)"))
        case .noRule:
            let name = file.lastComponent.map { FilePath(root: nil, [$0]).readableString } ?? ""
            let patterns = rule.match.map(\.pattern).joined(separator: ", ")
            return .failure(
                UploadRefusal("rule '\(rule.name)' does not take '\(name)': it matches \(patterns)")
            )
        case .filtered(let reasons):
            return .failure(UploadRefusal(reasons.joined(separator: "; ")))
        case .notYet(_, let after):
            return .failure(
                UploadRefusal("rule '\(rule.name)' takes files only once they are older (minAge; in \(after))")
            )
        case .matched(let matched, var plan, _):
            if rule.grouping != nil {
                return .failure(
                    UploadRefusal("rule '\(rule.name)' joins the files of a folder (groupBy), not one upload")
                )
            }
            let engine = matched.to.engine(reading: sniffed)
            guard let sniffed else {
                return .failure(
                    UploadRefusal(
                        "the content is not in a format Chute recognises; the \(engine.rawValue) engine would refuse it"
                    )
                )
            }
            guard reads(engine, sniffed) else {
                return .failure(UploadRefusal("the \(engine.rawValue) engine cannot read \(sniffed.rawValue) content"))
            }
            if rule.uploadOutput == .spool {
                plan.directory = self.outputFolder(of: jobID)
            } else {
                plan.directory = rule.output
            }
            var job = Job(
                id: jobID,
                source: file,
                root: root,
                rule: matched,
                plan: plan,
                fingerprint: status.fingerprint,
                sniffed: sniffed
            )
            job.origin = .upload
            // Sidecars of spooled outputs stay beside them, in the spool, whatever the rule says for its folder.
            if rule.uploadOutput == .spool { job.rule.sidecars = .besideOutput }
            job.rule.sourcePolicy = .keep
            job.rule.quarantine = nil
            return .success(job)
        }
    }

    /// The uploaded file of job `jobID`, if it is there whole: what a restart submits again.
    package func uploadedFile(of jobID: String) -> FilePath? {
        guard let names = try? SystemCall.entries(of: self.inputFolder(of: jobID)) else { return nil }
        return names.first { $0 != Self.partialName }.map { self.inputFolder(of: jobID).appending($0) }
    }

    /// Removes the uploads whose time is over: those of jobs that ended longer than `retention` ago, and those that
    /// no job records (an upload cut short by a lost client or a kill, before its job was accepted). At start-up, the
    /// temporary outputs a killed job left in the spool go too.
    ///
    /// - Parameters:
    ///   - receiving: the uploads whose bodies are being received now, which no job records yet.
    ///   - atStart: whether no job runs yet (start-up), so that temporary outputs in the spool are stale.
    /// - Returns: how many uploads were removed.
    package func sweep(
        store: any JobStore,
        retention: Duration,
        receiving: Set<String> = [],
        atStart: Bool = false,
        now: Date = Date()
    ) async throws -> Int {
        guard let ids = try? SystemCall.entries(of: self.folder) else { return 0 }
        var removed = 0
        for component in ids where !receiving.contains(component.string) {
            let id = component.string
            let entry = try await store.entry(id)
            let over: Bool
            if let entry {
                let ended = JobState.history.contains(entry.state)
                over = ended && now.timeIntervalSince(entry.updatedAt) >= Double(retention.components.seconds)
            } else {
                over = true
            }
            if over {
                self.remove(id)
                removed += 1
            } else if atStart {
                _ = OutputCommitter.removeStaleTemporaries(below: self.outputFolder(of: id))
            }
        }
        return removed
    }
}

/// Why a rule does not take an uploaded file (answered 415).
package struct UploadRefusal: Error, Sendable, Equatable {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }
}
