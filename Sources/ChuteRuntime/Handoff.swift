import ChuteCore
import Foundation
import SystemPackage

/// A job whose file this agent cannot see, run on a copy fetched from the agent that found it (``HandoffFetcher``):
/// its outputs are converted here and sent back to that agent, which renames them into place (``HandoffDesk``).
package struct Handoff: Sendable {
    /// The agent that found the file, and how to reach it.
    package var owner: any HandoffTransport
    /// This agent's folder for the job: the fetched copy, and the outputs until they are sent back.
    package var folder: FilePath
    /// The fetched copy of the source, its SHA-256 checked against the store's, its modification time the source's.
    package var copy: FilePath

    package init(owner: any HandoffTransport, folder: FilePath, copy: FilePath) {
        self.owner = owner
        self.folder = folder
        self.copy = copy
    }
}

/// The requests of an agent that runs a job of another agent's file (``Handoff``) to that agent, each carrying the
/// claim's lease token and hand-off key; the other side is ``HandoffDesk``.
package protocol HandoffTransport: Sendable {
    /// The agent's name, for the log.
    var owner: String { get }

    /// Streams the source into `file` (created or replaced).
    ///
    /// - Returns: the SHA-256 of the bytes received.
    func fetchSource(to file: FilePath) async throws -> String

    /// Sends a converted output, to be kept under the temporary name `name` in the job's output folder.
    ///
    /// - Returns: the inode it has there.
    /// - Throws: ``HandoffError/corrupted`` when what arrived does not have the SHA-256 `sha256`.
    func deliver(_ file: FilePath, as name: String, sha256: String) async throws -> UInt64

    /// Renames the outputs sent into place, as ``OutputCommitter/commit(_:as:policy:)`` does.
    func place(_ placement: HandoffPlacement) async throws -> HandoffPlaced

    /// Writes the job's sidecar, named after the output `name` (a file name in the job's output folder).
    func writeSidecar(_ sidecar: Sidecar, namedAfter name: FilePath.Component) async throws

    /// Removes outputs sent under temporary names that are not to be placed.
    func discard(_ names: [String]) async
}

/// A hand-off request that failed.
package enum HandoffError: Error, CustomStringConvertible {
    /// The bytes that arrived do not have the SHA-256 they were sent with: changed in flight.
    case corrupted(String)
    /// The other agent refused the request (its lease lost, its file changed or gone), with its message.
    case refused(status: Int, message: String)

    package var description: String {
        switch self {
        case .corrupted(let message): message
        case .refused(let status, let message): "refused (\(status)): \(message)"
        }
    }
}

/// What ``HandoffTransport/place(_:)`` renames into place.
package struct HandoffPlacement: Sendable, Codable, Equatable {
    /// The temporary name of the output, or of the set's base (``OutputPart/temporaryPath(beside:)``).
    package var temporary: String
    /// The output's planned name, its bytes.
    package var name: Data
    /// The parts of a job with several outputs, empty for one.
    package var parts: [OutputPart]
    package var policy: ConflictPolicy

    package init(temporary: String, name: Data, parts: [OutputPart], policy: ConflictPolicy) {
        self.temporary = temporary
        self.name = name
        self.parts = parts
        self.policy = policy
    }
}

/// What ``HandoffTransport/place(_:)`` put in place: the path the sidecar is named after, every final path (bytes),
/// and the warnings of the renames.
package struct HandoffPlaced: Sendable, Codable, Equatable {
    package var named: Data
    package var finals: [Data]
    package var warnings: [String]

    package init(named: FilePath, finals: [FilePath], warnings: [String]) {
        self.named = Data(named.bytes)
        self.finals = finals.map { Data($0.bytes) }
        self.warnings = warnings
    }
}
