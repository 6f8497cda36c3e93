import ChuteCore
import Foundation
import Glibc
import SystemPackage

/// One step in the life of a job, or of a file on its way to becoming one, as the runtime publishes it on
/// ``JobEvents``.
package struct JobEvent: Sendable, Codable, Hashable {
    /// What happened.
    package enum Kind: String, Sendable, Codable, CaseIterable {
        /// A rule took the file and its job waits in the queue.
        case queued
        /// A rule takes the file, but it is not ready yet (still written, cut short, waiting for a marker); the
        /// event's message says why. Such a file has no job yet.
        case waiting
        /// A worker converts the job.
        case started
        /// The worker reported how far it is (`progress`, 0 to 1).
        case progress
        /// The output is in place (`outputs`).
        case completed
        /// The job failed; the message says why, the sidecar records it.
        case failed
        /// A transient failure: the file is tried again after a back-off.
        case postponed
        /// The job was cancelled: on request, or by shutdown (then it runs again at the next start).
        case cancelled
        /// The source disappeared before its job started.
        case vanished

        /// Whether the job is over with this event.
        package var isFinal: Bool {
            switch self {
            case .completed, .failed, .postponed, .cancelled, .vanished: true
            case .queued, .waiting, .started, .progress: false
            }
        }
    }

    package var kind: Kind
    /// The job's id; `nil` for a file that has no job yet (`waiting`).
    package var jobID: String?
    /// The rule that took the file.
    package var rule: String?
    /// The engine lane the job runs in (``Job/engine``); `nil` for a file that has no job yet.
    package var engine: String?
    /// The source file.
    package var source: String
    /// The outputs in place, for `completed`.
    package var outputs: [String]
    /// Why, for `waiting`, `failed`, `postponed` and `cancelled`.
    package var message: String?
    /// The error code, for `failed` and `postponed`.
    package var code: String?
    /// How far the conversion is, 0 to 1, for `progress`.
    package var progress: Double?
    /// The size of the job's source in bytes (a group's: its files' total), for every event of a job.
    package var inputBytes: Int64?
    /// The size of the outputs in place in bytes, for `completed`; `nil` for a job skipped as a duplicate, which
    /// wrote nothing.
    package var outputBytes: Int64?
    /// For a `postponed` job, when its file is tried again.
    package var retryAt: Date?
    /// For a `completed` job that converted nothing because its source is identical to one its rule already
    /// converted (`onDuplicate: skip`): that earlier output, which is the event's output too.
    package var duplicateOf: String?
    /// For `waiting` on a file that is not ready: when it is taken anyway if it does not change meanwhile
    /// (`incompleteTimeout` after it was first found not ready).
    package var until: Date?
    /// When it happened.
    package var time: Date

    package init(
        _ kind: Kind,
        jobID: String?,
        rule: String?,
        source: FilePath,
        outputs: [FilePath] = [],
        message: String? = nil,
        code: String? = nil,
        progress: Double? = nil,
        time: Date = Date()
    ) {
        self.kind = kind
        self.jobID = jobID
        self.rule = rule
        self.source = source.readableString
        self.outputs = outputs.map(\.readableString)
        self.message = message
        self.code = code
        self.progress = progress
        self.time = time
    }

    /// An event of `job`, with its engine and its source's size.
    package init(
        _ kind: Kind,
        of job: Job,
        outputs: [FilePath] = [],
        message: String? = nil,
        code: String? = nil,
        progress: Double? = nil
    ) {
        self.init(
            kind,
            jobID: job.id,
            rule: job.rule.name,
            source: job.source,
            outputs: outputs,
            message: message,
            code: code,
            progress: progress
        )
        self.engine = job.engine.rawValue
        self.inputBytes = job.fingerprint.size
    }

    /// The event that ends a job with `outcome`; `nil` for a job that was only handed its converted output (the
    /// commit's outcome comes later).
    package init(ending job: Job, with outcome: JobOutcome) {
        switch outcome {
        case .completed(let output, let others):
            self.init(.completed, of: job, outputs: [output] + others)
            self.outputBytes = (CollectionOfOne(output) + others).reduce(0) { $0 + Self.size(of: $1) }
        case .skipped(let earlier):
            self.init(
                .completed,
                of: job,
                outputs: [earlier],
                message: "skipped: identical to a source this rule already converted"
            )
            self.duplicateOf = earlier.string
        case .failed(let failure):
            self.init(.failed, of: job, message: failure.message, code: failure.code.rawValue)
        case .postponed(let failure):
            self.init(.postponed, of: job, message: failure.message, code: failure.code.rawValue)
        case .cancelled:
            self.init(.cancelled, of: job, message: "cancelled by shutdown; it runs again at the next start")
        case .cancelledOnRequest:
            self.init(.cancelled, of: job, message: "cancelled on request")
        case .vanished:
            self.init(.vanished, of: job, message: "the source was deleted or moved away; nothing was written")
        case .handedOver:
            self.init(
                .cancelled,
                of: job,
                message: "its lease was lost: another agent holds it now; nothing of this run was published"
            )
        }
    }

    /// The size of the file at `path`, or 0 when it is gone (moved away by a user as soon as it appeared).
    ///
    /// The corresponding C function is `stat`.
    private static func size(of path: FilePath) -> Int64 {
        var status = stat()
        return SystemCall.stat(path, &status) == 0 ? Int64(status.st_size) : 0
    }
}
