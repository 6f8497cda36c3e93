import ChuteCore
import Foundation
import Logging
import SystemPackage

/// The side of a hand-off on the agent that found a job's file (``Handoff``): it serves the file to the agent that
/// claimed the job, keeps the outputs that agent sends back under their temporary names once their SHA-256 matches,
/// renames them into place under the rule's `onConflict`, and writes the sidecar.
///
/// Every request carries the claim's lease token and hand-off key (`TOKEN.KEY`, as its bearer), and is granted only
/// while the store says they are the job's, its lease runs and this agent found its file: an agent that lost its
/// lease can neither fetch nor place anything (fencing), and nothing else is ever read or written: the source is the
/// path the store holds below one of this agent's watched folders, and the outputs go to the job's output folder,
/// under names that start with the job's temporary prefix.
package struct HandoffDesk: Sendable {
    /// A request the store granted, with its job's rule.
    package struct Granted: Sendable {
        package var grant: HandoffGrant
        package var rule: Rule
    }

    /// Why a request is refused.
    package enum Refusal: Error, CustomStringConvertible {
        /// No claim holds this token and key now (its lease ran out, or another agent holds the job).
        case unauthorized(String)
        /// The file changed or went since it was found, or the request is not what the job allows.
        case conflict(String)
        case badRequest(String)
        /// What arrived does not have the SHA-256 it was sent with.
        case corrupted(String)
        /// The store or the disk failed.
        case failed(String)

        package var description: String {
            switch self {
            case .unauthorized(let message), .conflict(let message), .badRequest(let message),
                .corrupted(let message), .failed(let message):
                message
            }
        }
    }

    private let store: any SharedQueue
    private let rules: @Sendable () -> [Rule]
    private let watchedFolders: [FilePath]
    private let logger: Logger

    /// - Parameter rules: the rules in force now (a reload changes them).
    package init(
        store: any SharedQueue,
        rules: @escaping @Sendable () -> [Rule],
        watchedFolders: [FilePath],
        logger: Logger
    ) {
        self.store = store
        self.rules = rules
        self.watchedFolders = watchedFolders
        self.logger = logger
    }

    /// Grants a request for job `jobID` whose bearer is `bearer` (`TOKEN.KEY`), or says why not.
    package func grant(_ jobID: String, bearer: String?) async throws(Refusal) -> Granted {
        guard let bearer, let dot = bearer.firstIndex(of: "."), let token = Int64(bearer[..<dot]) else {
            throw .unauthorized("a hand-off request carries its claim's TOKEN.KEY as its bearer")
        }
        let key = String(bearer[bearer.index(after: dot)...])
        let found: HandoffGrant?
        do {
            found = try await self.store.handoffGrant(jobID, token: token, key: key)
        } catch {
            throw .failed("cannot ask the store: \(error)")
        }
        guard let grant = found else {
            throw .unauthorized(
                "no claim of job \(jobID) holds this lease and key now: its lease ran out, another agent holds it, or "
                    + "this agent did not find its file"
            )
        }
        guard self.watchedFolders.contains(grant.root), grant.source.starts(with: grant.root),
            let rule = self.rules().first(where: { $0.name == grant.rule })
        else {
            throw .conflict("job \(jobID)'s file is not in a folder this agent watches with the rule '\(grant.rule)'")
        }
        return Granted(grant: grant, rule: rule)
    }

    /// The source of a granted job, to be served, once its SHA-256 is recorded in the store.
    package func source(_ granted: Granted) async throws(Refusal) -> (path: FilePath, size: Int64) {
        let grant = granted.grant
        guard let status = try? SourceInspector.status(of: grant.source, beneath: grant.root), status.isRegularFile,
            status.fingerprint.size == grant.size, status.fingerprint.modifiedNanoseconds == grant.modifiedNanoseconds
        else {
            throw .conflict("the source of job \(grant.jobID) is gone or changed since it was found")
        }
        do {
            let sha256 = try await Blocking.run { try SourceInspector.sha256(of: grant.source, beneath: grant.root) }
            try await self.store.recordSourceHash(grant.jobID, sha256: sha256)
            self.logger.debug(
                "Source served to the agent that claimed its job",
                metadata: [
                    "job.id": "\(grant.jobID)", "agent": "\(grant.claimant)", "sha256": "\(sha256)",
                    "input.path": "\(LogText.escaped(grant.source))",
                ]
            )
        } catch {
            throw .failed("cannot hash the source of job \(grant.jobID): \(error)")
        }
        return (grant.source, status.fingerprint.size)
    }

    /// Where an output sent back under the temporary name `name` is written, its folder made: in the job's output
    /// folder, a name of the job's temporary files (`.chute-ID.…`).
    package func destination(of name: String, for granted: Granted) throws(Refusal) -> FilePath {
        let prefix = "\(OutputCommitter.temporaryPrefix)\(granted.grant.jobID)."
        guard name.hasPrefix(prefix), !name.contains("/"), name.utf8.count <= 255 else {
            throw .badRequest("'\(name)' is not a temporary name of job \(granted.grant.jobID)")
        }
        do throws(ConversionFailure) {
            try OutputCommitter.makeDirectory(
                granted.grant.outputFolder,
                ownership: granted.rule.ownership,
                beforeCommit: true
            )
        } catch {
            throw .failed(error.message)
        }
        return granted.grant.outputFolder.appending(name)
    }

    /// Keeps an output written to `path` (``destination(of:for:)``) if its SHA-256 is `expected`, with the rule's
    /// owner and permissions; removes it if not.
    ///
    /// - Returns: its inode.
    package func received(_ path: FilePath, expected: String, for granted: Granted) async throws(Refusal) -> UInt64 {
        let sha256 = try? await Blocking.run { try SourceInspector.sha256(of: path) }
        guard sha256 == expected else {
            SystemCall.unlink(path)
            self.logger.warning(
                "Output sent back does not match its SHA-256; refused",
                metadata: [
                    "job.id": "\(granted.grant.jobID)", "agent": "\(granted.grant.claimant)",
                    "sha256": "\(sha256 ?? "none")", "expected": "\(expected)",
                ]
            )
            throw .corrupted("what arrived has the SHA-256 \(sha256 ?? "none"), not \(expected)")
        }
        _ = OutputCommitter.applyOwnership(granted.rule.ownership, to: path)
        guard let status = try? SourceInspector.status(of: path) else { throw .failed("the output went") }
        return status.fingerprint.inode
    }

    /// Renames the outputs sent back into place, as the agent that converted them would have on its own folders.
    package func place(_ placement: HandoffPlacement, for granted: Granted) async throws(Refusal) -> HandoffPlaced {
        let grant = granted.grant
        let temporary = try self.destination(of: placement.temporary, for: granted)
        guard let name = FilePath.Component(bytes: placement.name), name.kind == .regular else {
            throw .badRequest("the output's name is not a file name")
        }
        guard OutputPart.areWellFormed(placement.parts) else { throw .badRequest("malformed output parts") }
        let plan = OutputPlan(directory: grant.outputFolder, name: name)
        let (policy, warning) = await JobRunner.guardedPolicy(
            placement.policy,
            plan: plan,
            parts: placement.parts,
            sources: [grant.source],
            watchedFolders: self.watchedFolders,
            journal: self.store,
            logger: self.logger
        )
        let parts = placement.parts
        do throws(ConversionFailure) {
            let placed = try await Blocking.run { () throws(ConversionFailure) -> HandoffPlaced in
                if parts.isEmpty {
                    let (final, replaced) = try OutputCommitter.commit(temporary, as: plan, policy: policy)
                    return HandoffPlaced(
                        named: final,
                        finals: [final],
                        warnings: [warning, replaced].compactMap(\.self)
                    )
                }
                let set = try OutputCommitter.commit(parts, beside: temporary, as: plan, policy: policy)
                return HandoffPlaced(
                    named: set.set,
                    finals: set.paths,
                    warnings: [warning].compactMap(\.self) + set.warnings
                )
            }
            self.logger.info(
                "Output of another agent placed",
                metadata: [
                    "job.id": "\(grant.jobID)", "agent": "\(grant.claimant)",
                    "output.path": "\(LogText.escaped(FilePath(bytes: placed.named)))",
                ]
            )
            return placed
        } catch {
            throw .conflict(error.message)
        }
    }

    /// Writes the sidecar of a granted job, named after the output `name` in its output folder as its rule says.
    package func writeSidecar(
        _ sidecar: Sidecar,
        namedAfter name: FilePath.Component,
        for granted: Granted
    )
        async throws(Refusal)
    {
        guard sidecar.jobID == granted.grant.jobID else { throw .badRequest("the sidecar is another job's") }
        let path = granted.rule.sidecarPath(for: granted.grant.outputFolder.appending(name))
        let ownership = granted.rule.ownership
        do throws(ConversionFailure) {
            try await Blocking.run { () throws(ConversionFailure) in
                try OutputCommitter.makeDirectory(path.removingLastComponent(), ownership: ownership)
                try OutputCommitter.writeSidecar(sidecar, at: path, ownership: ownership)
            }
        } catch {
            throw .failed(error.message)
        }
    }

    /// Removes outputs sent back under the temporary names `names`, which are not to be placed.
    package func discard(_ names: [String], for granted: Granted) {
        for name in names {
            guard let path = try? self.destination(of: name, for: granted) else { continue }
            SystemCall.unlink(path)
        }
    }
}
