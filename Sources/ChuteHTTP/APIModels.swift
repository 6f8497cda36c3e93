import ChuteCore
import ChuteRuntime
import Foundation
import NIOCore

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

    /// `GET /api/status`: how many jobs are in each state, the running ones, and the scheduler's budget.
    package struct Status: Codable, Sendable {
        package var paused: Bool
        /// Live: `waiting`, `queued`, `running`; from the journal: `completed`, `failed`, `cancelled`, `retried`.
        package var counts: [String: Int]
        package var running: [Job]
        /// The CPU and memory budget, what the running jobs hold of it, and the queued jobs that wait for it.
        package var budget: BudgetStatus
        /// On a store that agents share: every agent, with its heartbeat and jobs; `nil` on the journal.
        package var agents: [AgentStatus]?
        /// On a store that agents share: this daemon's name among them.
        package var agent: String?
    }

    /// `GET /api/jobs`.
    package struct JobList: Codable, Sendable {
        package var jobs: [Job]
        package var limit: Int
        package var offset: Int

        /// The document as ``API/encoder()`` writes it (sorted keys, compact), from each job's JSON already encoded
        /// (``EncodedValues``): the daemon's job pages, which polling clients ask for many times a second.
        static func json(jobs: [ByteBuffer], limit: Int, offset: Int) -> ByteBuffer {
            var document = ByteBuffer(string: "{\"jobs\":[")
            for (index, var job) in jobs.enumerated() {
                if index > 0 { document.writeString(",") }
                document.writeBuffer(&job)
            }
            document.writeString("],\"limit\":\(limit),\"offset\":\(offset)}")
            return document
        }
    }

    /// One output of a job, as it is on disk now.
    package struct Output: Codable, Sendable {
        package var path: String
        /// Its size, or `nil` when it is gone.
        package var size: Int64?
    }

    /// `GET /api/jobs/{id}`.
    ///
    /// Its first fields are the shape apps and scripts of other conversion services poll: `id`, `status` (`pending`,
    /// `processing`, `completed`, `failed` or `cancelled`), `progress` (0 to 100), `message` and `result` (the address
    /// of each output, ``StatusAPI`` serves it); then Chute's own: the job, its sidecar and its outputs.
    package struct JobDetail: Codable, Sendable {
        package var id: String?
        package var status: String
        package var progress: Int
        package var message: String?
        package var result: [String]
        package var job: Job
        package var sidecar: Sidecar?
        package var outputs: [Output]

        package init(job: Job, sidecar: Sidecar?, outputs: [Output]) {
            self.id = job.id
            self.status = Self.status(of: job.state)
            // 100 only once it completed: a worker's last progress report comes before the output's commit.
            self.progress =
                job.state == "completed" ? 100 : min(99, max(0, Int(((job.progress ?? 0) * 100).rounded(.down))))
            self.message = job.message
            self.result = job.id.map { id in outputs.indices.map { "/api/jobs/\(id)/outputs/\($0)" } } ?? []
            self.job = job
            self.sidecar = sidecar
            self.outputs = outputs
        }

        /// Chute's state of a job in the five words of `status`.
        static func status(of state: String) -> String {
            switch state {
            case "running", "committing": "processing"
            case "completed": "completed"
            case "failed", "vanished": "failed"
            case "cancelled", "retried": "cancelled"
            default: "pending"
            }
        }
    }

    /// `POST /api/jobs?rule=NAME`'s answer: the job the upload became.
    package struct Upload: Codable, Sendable {
        package var id: String
        /// `pending`, as ``JobDetail/status`` says it.
        package var status: String
        /// The job's address, `GET` for its status.
        package var location: String
        package var rule: String
        /// The bytes received.
        package var size: Int64
    }

    /// `POST /api/convert`'s answer for a job with several outputs (300): where each is.
    package struct Choices: Codable, Sendable {
        package var id: String
        package var result: [String]
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
        /// Whether the rule takes uploads (`upload: true`).
        package var upload: Bool
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

    /// A webhook notification's body: a job that ended, or the digest.
    package struct Notification: Codable, Sendable {
        /// `failed`, `completed`, `cancelled` or `digest`.
        package var event: String
        /// The job, as `GET /api/jobs/{id}` shows it; `nil` for the digest.
        package var job: Job?
        /// The source's size when the notification was made, `nil` when it is gone (moved, deleted).
        package var sourceSize: Int64?
        /// The outputs with their sizes.
        package var outputs: [Output]?
        /// Seconds from the job's start to its end, when it started.
        package var duration: Double?
        /// The digest, for `digest`.
        package var digest: Digest?
        /// When the notification was made.
        package var time: Date
    }

    /// What the jobs of a span of time came to, per rule (`event: digest`).
    package struct Digest: Codable, Sendable {
        package var since: Date
        package var until: Date
        /// Completed and failed jobs per rule, by rule name.
        package var rules: [DigestCount]
        /// The failed jobs, the latest first (at most ``Digest/failureLimit``).
        package var failures: [DigestFailure]

        /// The most failures a digest lists.
        package static let failureLimit = 50
    }

    /// One rule's jobs in a digest.
    package struct DigestCount: Codable, Sendable, Equatable {
        package var rule: String
        package var completed: Int
        package var failed: Int
    }

    /// One failure in a digest.
    package struct DigestFailure: Codable, Sendable {
        package var id: String
        package var rule: String
        package var source: String
        package var code: String?
        package var message: String?
        package var time: Date
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
