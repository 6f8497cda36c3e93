import ChuteCore
import Foundation
import Logging
import SystemPackage

/// Makes the job of a file that another agent found and this agent cannot see (``JobClaims``, for an agent whose
/// `watch: false` claims such files): the file is fetched from that agent into a folder of this agent's own, and
/// checked against the SHA-256 that agent recorded in the store as it served it; a copy that does not match (changed
/// in flight) is fetched again, up to ``attempts`` times, and never converted.
package struct HandoffFetcher: Sendable {
    private let store: any SharedQueue
    private let intake: Intake
    /// Where each job's folder is made (`.chute/handoff`).
    private let folder: FilePath
    private let connect: @Sendable (HandoffTicket, SharedClaim) -> any HandoffTransport
    private let logger: Logger

    /// How many times a copy whose SHA-256 does not match is fetched before the job is given back.
    package static let attempts = 3

    /// - Parameters:
    ///   - folder: where each job's folder is made; what an earlier run left there is removed.
    ///   - connect: the transport to the agent that found a claimed job's file.
    package init(
        store: any SharedQueue,
        intake: Intake,
        folder: FilePath,
        logger: Logger,
        connect: @escaping @Sendable (HandoffTicket, SharedClaim) -> any HandoffTransport
    ) {
        self.store = store
        self.intake = intake
        self.folder = folder
        self.logger = logger
        self.connect = connect
        try? FileManager.default.removeItem(atPath: folder.string)
    }

    /// The job of `claim`, run on a copy fetched from the agent `ticket` names, or `nil` when the copy cannot be had
    /// whole, or the rule no longer takes it.
    package func job(for claim: SharedClaim, ticket: HandoffTicket) async -> Job? {
        var logger = self.logger
        logger[metadataKey: "job.id"] = "\(claim.id)"
        logger[metadataKey: "input.path"] = "\(LogText.escaped(claim.source))"
        logger[metadataKey: "handoff.owner"] = "\(ticket.owner)"
        guard let handoff = await self.fetch(claim, ticket: ticket, logger: logger) else { return nil }
        guard let job = await self.intake.job(for: claim, handoff: handoff) else {
            logger.warning("The fetched source is not taken by its rule here; the job is given back")
            Self.remove(handoff)
            return nil
        }
        return job
    }

    /// Removes a hand-off's folder: its copy, and outputs not sent back.
    package static func remove(_ handoff: Handoff) {
        try? FileManager.default.removeItem(atPath: handoff.folder.string)
    }

    private func fetch(_ claim: SharedClaim, ticket: HandoffTicket, logger: Logger) async -> Handoff? {
        let folder = self.folder.appending(claim.id)
        let copy = folder.appending(claim.source.lastComponent ?? FilePath.Component("source"))
        do {
            try? FileManager.default.removeItem(atPath: folder.string)
            try FileManager.default.createDirectory(
                atPath: folder.string,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            logger.error("Cannot make the hand-off folder", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            return nil
        }
        let transport = self.connect(ticket, claim)
        for attempt in 1...Self.attempts {
            do {
                let received = try await transport.fetchSource(to: copy)
                let expected = try await self.store.sourceHash(of: claim.id)
                let size = (try? SourceInspector.status(of: copy))?.fingerprint.size
                guard received == expected, size == claim.size else {
                    logger.warning(
                        attempt < Self.attempts
                            ? "The source fetched does not match the store's SHA-256; fetching it again"
                            : "The source fetched does not match the store's SHA-256; giving the job back",
                        metadata: [
                            "attempt": "\(attempt)", "sha256": "\(received)", "expected": "\(expected ?? "none")",
                            "bytes": "\(size ?? -1)", "expected.bytes": "\(claim.size)",
                        ]
                    )
                    continue
                }
                // The copy keeps the source's modification time, which the sidecar and the job's identity carry.
                let modified = timespec(
                    tv_sec: Int(claim.modifiedNanoseconds / 1_000_000_000),
                    tv_nsec: Int(claim.modifiedNanoseconds % 1_000_000_000)
                )
                var times = [modified, modified]
                guard utimensat(AT_FDCWD, copy.string, &times, 0) == 0 else { throw Errno(rawValue: errno) }
                logger.info(
                    "Source fetched from the agent that has it",
                    metadata: ["bytes": "\(claim.size)", "sha256": "\(received)", "attempt": "\(attempt)"]
                )
                return Handoff(owner: transport, folder: folder, copy: copy)
            } catch {
                logger.error(
                    "Cannot fetch the source from the agent that has it; the job is given back",
                    metadata: ["error": "\(LogText.escaped("\(error)"))"]
                )
                break
            }
        }
        try? FileManager.default.removeItem(atPath: folder.string)
        return nil
    }
}
