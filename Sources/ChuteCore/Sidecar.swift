import Foundation
import SystemPackage

/// The JSON record written next to every output (or where the output would have gone), one per job.
///
/// Its file name is the output's name plus `.chute.json`. Chute reads it back to know, after a restart, that a source
/// was already handled.
package struct Sidecar: Sendable, Codable, Equatable {
    /// Whether the job produced its output.
    package enum Status: String, Sendable, Codable, Equatable {
        /// `cancelled`: a request stopped the job (the API's cancel); nothing was written.
        case completed, failed, cancelled
    }

    /// The source file as it was when the job took it.
    package struct Source: Sendable, Codable, Equatable {
        /// The path as text; a name that is not valid UTF-8 is written escaped as the log shows it (`caf\x{e9}.jpg`),
        /// and its bytes are in ``pathBytes``.
        package var path: String
        /// The path's bytes in base64 when they are not valid UTF-8 (`caf\xe9.jpg`), `nil` otherwise: JSON text
        /// cannot hold them. ``filePath`` reads it first.
        package var pathBytes: String?
        package var size: Int64
        /// Modification time, ISO 8601 with fractional seconds.
        package var mtime: String
        package var sha256: String?
        /// The content type recognised from the first bytes, if any.
        package var sniffedType: String?

        package init(path: FilePath, size: Int64, mtime: String, sha256: String?, sniffedType: String?) {
            (self.path, self.pathBytes) = Sidecar.fields(of: path)
            self.size = size
            self.mtime = mtime
            self.sha256 = sha256
            self.sniffedType = sniffedType
        }

        /// The source's path: from ``pathBytes`` when the sidecar has them, else from ``path``.
        package var filePath: FilePath { Sidecar.filePath(self.path, self.pathBytes) }
    }

    /// The written output.
    package struct Output: Sendable, Codable, Equatable {
        /// The path as text, as ``Source/path`` is written.
        package var path: String
        /// The path's bytes in base64 when they are not valid UTF-8, as ``Source/pathBytes``.
        package var pathBytes: String?
        package var size: Int64

        package init(path: FilePath, size: Int64) {
            (self.path, self.pathBytes) = Sidecar.fields(of: path)
            self.size = size
        }

        /// The output's path: from ``pathBytes`` when the sidecar has them, else from ``path``.
        package var filePath: FilePath { Sidecar.filePath(self.path, self.pathBytes) }
    }

    /// What went wrong, for failed jobs.
    package struct Failure: Sendable, Codable, Equatable {
        package var code: String
        package var message: String

        /// - Parameter message: escaped and capped as ``LogText`` does: it may carry a decoder's words about a
        ///   hostile file.
        package init(code: String, message: String) {
            self.code = code
            self.message = LogText.escaped(message)
        }
    }

    /// The conversion that was asked for.
    package struct Parameters: Sendable, Codable, Equatable {
        package var format: String
        package var options: ConversionOptions

        /// - Parameter options: the rule's options; secrets (``CommonOptions/secretKeys``) are recorded hidden.
        package init(format: String, options: ConversionOptions) {
            self.format = format
            var options = options
            for key in CommonOptions.secretKeys where options[key] != nil {
                options[key] = CommonOptions.hiddenValue
            }
            self.options = options
        }
    }

    package var chuteVersion: String
    package var jobID: String
    package var status: Status
    package var rule: String
    package var engine: String
    /// The C libraries (and their versions) that did the work.
    package var libraries: [String: String]
    package var parameters: Parameters
    package var source: Source
    /// Every input of a group job (``RuleGrouping``), in the order they were joined, each with its size and SHA-256;
    /// `nil` for a job of one file. ``source`` is then the folder, with the inputs' total size.
    package var inputs: [Source]?
    /// The written output; for a job with several (`tiles`), the first of ``outputs``.
    package var output: Output?
    /// Every output of a job that wrote several, in order (`photo-r1c1.png` … `photo-r3c3.png`); `nil` for a job with
    /// one output, whose sidecar has ``output`` alone.
    package var outputs: [Output]?
    package var startedAt: String
    package var endedAt: String
    package var durationSeconds: Double
    /// The CPU time the worker spent on the conversion, in seconds of one core (every thread's); `nil` when the job
    /// failed or converted nothing.
    package var cpuSeconds: Double?
    package var error: Failure?
    package var warnings: [String]
    /// Engine facts, such as input and output dimensions.
    package var details: [String: String]
    /// The agent that ran the job, in a store that agents share; `nil` (left out) otherwise.
    package var agent: String?

    package init(
        chuteVersion: String,
        jobID: String,
        status: Status,
        rule: String,
        engine: String,
        libraries: [String: String],
        parameters: Parameters,
        source: Source,
        output: Output?,
        startedAt: String,
        endedAt: String,
        durationSeconds: Double,
        cpuSeconds: Double? = nil,
        error: Failure?,
        warnings: [String],
        details: [String: String],
        outputs: [Output]? = nil,
        inputs: [Source]? = nil,
        agent: String? = nil
    ) {
        self.agent = agent
        self.inputs = inputs
        self.cpuSeconds = cpuSeconds
        self.chuteVersion = chuteVersion
        self.jobID = jobID
        self.status = status
        self.rule = rule
        self.engine = engine
        self.libraries = libraries
        self.parameters = parameters
        self.source = source
        self.output = output
        self.outputs = outputs
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.durationSeconds = durationSeconds
        self.error = error
        self.warnings = warnings.prefix(Self.warningLimit).map { LogText.escaped($0) }
        if warnings.count > Self.warningLimit {
            self.warnings.append("… and \(warnings.count - Self.warningLimit) more warnings")
        }
        self.details = details.mapValues { LogText.escaped($0) }
    }

    /// The most warnings a sidecar lists; each is escaped and capped as ``LogText`` does.
    package static let warningLimit = 50

    /// The suffix appended to an output's name to name its sidecar.
    package static let fileSuffix = ".chute.json"

    /// The `path` and `pathBytes` fields of a path: the text alone when its bytes are valid UTF-8; else the text
    /// escaped as the log shows it (`caf\x{e9}.jpg`) and the bytes in base64.
    private static func fields(of path: FilePath) -> (path: String, pathBytes: String?) {
        (path.readableString, path.validString == nil ? path.bytes.base64EncodedString() : nil)
    }

    /// The path that `path` and `pathBytes` fields name: the bytes when there are some, else the text.
    private static func filePath(_ path: String, _ pathBytes: String?) -> FilePath {
        pathBytes.flatMap { Data(base64Encoded: $0) }.map(FilePath.init(bytes:)) ?? FilePath(path)
    }
}

/// Chute's own version, written into every sidecar.
package enum ChuteVersion {
    package static let current = "0.1.0"
}
