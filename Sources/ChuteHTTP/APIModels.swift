import ChuteCore
import ChuteRuntime
import Foundation

/// The JSON documents of the status API, shared by the daemon that writes them and the CLI that reads them.
package enum API {
    /// A job, live or from the history.
    package typealias Job = JobStatusBoard.Entry

    /// `GET /api/health`.
    package struct Health: Codable, Sendable {
        package var status: String
        package var version: String
        package var pid: Int32
        package var paused: Bool
    }

    /// `GET /api/status`: how many jobs are in each state, and the running ones.
    package struct Status: Codable, Sendable {
        package var paused: Bool
        /// Live: `waiting`, `queued`, `running`; from the journal: `completed`, `failed`, `cancelled`, `retried`.
        package var counts: [String: Int]
        package var running: [Job]
    }

    /// `GET /api/jobs`.
    package struct JobList: Codable, Sendable {
        package var jobs: [Job]
        package var limit: Int
        package var offset: Int
    }

    /// One output of a job, as it is on disk now.
    package struct Output: Codable, Sendable {
        package var path: String
        /// Its size, or `nil` when it is gone.
        package var size: Int64?
    }

    /// `GET /api/jobs/{id}`.
    package struct JobDetail: Codable, Sendable {
        package var job: Job
        package var sidecar: Sidecar?
        package var outputs: [Output]
    }

    /// `POST /api/retry`.
    package struct RetryReport: Codable, Sendable {
        package var retried: [String]
        /// Failed jobs that could not be queued again, with why.
        package var skipped: [String: String]
    }

    /// `GET /api/rules`: one rule in force.
    package struct RuleInfo: Codable, Sendable {
        package var name: String
        package var match: [String]
        package var to: String
        package var output: String
        package var options: ConversionOptions
    }

    /// `POST /api/queue`'s body.
    package struct QueueRequest: Codable, Sendable {
        package var path: String
    }

    /// An answer that is only a state (`pause`, `resume`, `cancel`, `retry`, `queue`).
    package struct Acknowledgement: Codable, Sendable {
        package var state: String
        package var id: String?
        package var paused: Bool?
    }

    /// Every refusal.
    package struct Problem: Codable, Sendable, Error {
        package var error: String
    }

    /// The encoder every document goes out with: ISO 8601 dates, sorted keys.
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The decoder for the same documents.
    package static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
