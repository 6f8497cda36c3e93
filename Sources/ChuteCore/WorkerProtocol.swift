import Foundation
import SystemPackage

/// One conversion, as the supervisor sends it to a worker process.
///
/// The worker reads `input`, writes the result to `output` (a hidden temporary name in the target folder that must
/// not exist yet) and answers with a ``WorkerReply``. Renaming into place is the supervisor's job. A job with several
/// outputs (the tiles of `tiles`) writes each to ``OutputPart/temporaryPath(beside:)`` of `output` instead, and lists
/// them in its report's ``ConversionReport/parts``.
package struct ConversionRequest: Sendable, Codable, Equatable {
    package var jobID: String
    package var engine: EngineKind
    package var input: FilePath
    package var output: FilePath
    package var format: TargetFormat
    package var options: ConversionOptions
    /// The job's limits: the worker applies the resource limits to itself for the job, the engine checks the input's
    /// headers against the size limits.
    package var limits: JobLimits
    /// The watched folder the input is below: the input is looked up beneath it without following any symbolic
    /// link (``InputOpening``). `nil` for `chute convert`, which opens what it was given.
    package var root: FilePath?
    /// Whether the input may be a hard link (its watch's `allowHardLinks`).
    package var allowsHardLinks: Bool
    /// The threads the job's codecs may use, chosen by the daemon's scheduler when the job starts; `nil` keeps the
    /// worker's own (`chute worker --threads`). Engines whose library takes a thread count per job (FFmpeg's) read it.
    package var threads: Int?
    /// The inputs of a group job (``RuleGrouping``), in order, each below `root` as `input` is; `input` is the
    /// first of them. `nil` for a job of one file, whose request carries no such key.
    package var inputs: [FilePath]?

    package init(
        jobID: String,
        engine: EngineKind,
        input: FilePath,
        output: FilePath,
        format: TargetFormat,
        options: ConversionOptions,
        limits: JobLimits = JobLimits(),
        root: FilePath? = nil,
        allowsHardLinks: Bool = false,
        threads: Int? = nil,
        inputs: [FilePath]? = nil
    ) {
        self.inputs = inputs
        self.jobID = jobID
        self.engine = engine
        self.input = input
        self.output = output
        self.format = format
        self.options = options
        self.limits = limits
        self.root = root
        self.allowsHardLinks = allowsHardLinks
        self.threads = threads
    }
}

extension ConversionRequest {
    private enum CodingKeys: String, CodingKey {
        case jobID, engine, input, output, format, options, limits, root, allowsHardLinks, threads, inputs
    }

    // Paths travel as their bytes, base64 in one JSON string, which any file name survives: `FilePath`'s own Codable
    // form is an array of its characters, a JSON number each, which took more of the supervisor's CPU in a
    // 10,000-file burst than the rest of the request.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            jobID: try container.decode(String.self, forKey: .jobID),
            engine: try container.decode(EngineKind.self, forKey: .engine),
            input: FilePath(bytes: try container.decode(Data.self, forKey: .input)),
            output: FilePath(bytes: try container.decode(Data.self, forKey: .output)),
            format: try container.decode(TargetFormat.self, forKey: .format),
            options: try container.decode(ConversionOptions.self, forKey: .options),
            limits: try container.decode(JobLimits.self, forKey: .limits),
            root: try container.decodeIfPresent(Data.self, forKey: .root).map(FilePath.init(bytes:)),
            allowsHardLinks: try container.decode(Bool.self, forKey: .allowsHardLinks),
            threads: try container.decodeIfPresent(Int.self, forKey: .threads),
            inputs: try container.decodeIfPresent([Data].self, forKey: .inputs)?.map(FilePath.init(bytes:))
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.jobID, forKey: .jobID)
        try container.encode(self.engine, forKey: .engine)
        try container.encode(self.input.bytes, forKey: .input)
        try container.encode(self.output.bytes, forKey: .output)
        try container.encode(self.format, forKey: .format)
        try container.encode(self.options, forKey: .options)
        try container.encode(self.limits, forKey: .limits)
        try container.encodeIfPresent(self.root?.bytes, forKey: .root)
        try container.encode(self.allowsHardLinks, forKey: .allowsHardLinks)
        try container.encodeIfPresent(self.threads, forKey: .threads)
        try container.encodeIfPresent(self.inputs?.map(\.bytes), forKey: .inputs)
    }
}

/// What a worker reports back, one JSON line each: progress while it runs, then exactly one outcome.
package enum WorkerReply: Sendable, Codable, Equatable {
    /// The worker has started and loaded its engines; `libraries` names each C library and its version.
    case ready(libraries: [String: String])
    /// How far the job is.
    case progress(JobProgress)
    /// The output was written, synced and verified.
    case finished(ConversionReport)
    /// The conversion failed; the worker removed whatever it had written.
    case failed(ConversionFailure)
}

/// How far a running job is, as its engine reports it.
package struct JobProgress: Sendable, Codable, Equatable {
    /// Fraction done, 0…1.
    package var fraction: Double
    /// For media: how many seconds of the input have been converted, which gives the speed in × real time.
    package var mediaSeconds: Double?

    package init(fraction: Double, mediaSeconds: Double? = nil) {
        self.fraction = fraction
        self.mediaSeconds = mediaSeconds
    }
}

/// A successful conversion's facts, copied into the sidecar.
package struct ConversionReport: Sendable, Codable, Equatable {
    /// The size of the written output in bytes; for a job with parts, of all of them.
    package var outputBytes: Int64
    /// Non-fatal notes from the engine or the library (a dropped frame, an unknown tag).
    package var warnings: [String]
    /// Engine-specific facts such as the input and output dimensions or the input coder.
    package var details: [String: String]
    /// The outputs of a job that wrote several (the tiles of `tiles`), in order; empty when it wrote the one
    /// `output` of its request.
    package var parts: [OutputPart]
    /// The CPU time the worker spent on the job, in seconds of one core (every thread's, user and system), which the
    /// scheduler learns its cost estimates from; `nil` from a worker that did not measure it.
    package var cpuSeconds: Double?
    /// When the input was taken, from its metadata (a group's from its first file), for the name template's
    /// `{taken}`; `nil` when it says nothing, or from an engine that does not read it.
    package var captured: CaptureTime?

    package init(
        outputBytes: Int64,
        warnings: [String] = [],
        details: [String: String] = [:],
        parts: [OutputPart] = [],
        cpuSeconds: Double? = nil
    ) {
        self.outputBytes = outputBytes
        self.warnings = warnings
        self.details = details
        self.parts = parts
        self.cpuSeconds = cpuSeconds
    }
}

/// One of the several outputs of a job, such as one tile of `tiles: 3x3`.
///
/// The worker writes a part to ``temporaryPath(beside:)`` of its request's `output`, a hidden name in the target
/// folder; the supervisor renames every part of the job into place only once all of them are written, synced and
/// verified, as ``name(forSetNamed:)`` names it, or none of them.
package struct OutputPart: Sendable, Codable, Equatable {
    /// What tells the part from the others of its job, such as `r1c2`: 1 to 16 lower-case letters and digits.
    package var label: String
    /// Its size in bytes.
    package var bytes: Int64

    package init(label: String, bytes: Int64) {
        self.label = label
        self.bytes = bytes
    }

    /// The most parts one job may write.
    package static let limit = 100

    /// The hidden temporary name of the part, beside the request's `output`: `.chute-ID.partial-r1c2`.
    package func temporaryPath(beside output: FilePath) -> FilePath {
        output.appendingToLastComponent("-" + self.label)
    }

    /// The part's name in a set named `name`: `photo.png` gives `photo-r1c2.png`.
    package func name(forSetNamed name: FilePath.Component) -> FilePath.Component {
        let (stem, ext) = name.stemAndExtensionBytes
        // A label is 1 to 16 letters and digits (``areWellFormed(_:)``), so the name stays one component.
        let suffix = ext.isEmpty ? [] : [UInt8(ascii: ".")] + ext
        return FilePath.Component(bytes: stem + Array("-\(self.label)".utf8) + suffix)!
    }

    /// The name of the set that `name`, the name of a part labelled `label`, belongs to: `photo-r1c2.png` with
    /// `r1c2` gives `photo.png`; `nil` when `name` is not named so.
    package static func setName(ofPartNamed name: FilePath.Component, label: String) -> FilePath.Component? {
        let (stem, ext) = name.stemAndExtensionBytes
        let suffix = Array("-\(label)".utf8)
        guard stem.count > suffix.count, stem.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        return FilePath.Component(bytes: stem.dropLast(suffix.count) + (ext.isEmpty ? [] : [UInt8(ascii: ".")] + ext))
    }

    /// Whether the parts a worker reported can be committed: at most ``limit``, each label well formed and used
    /// once. The labels become parts of file names, so nothing else is accepted from a worker.
    package static func areWellFormed(_ parts: [OutputPart]) -> Bool {
        let labels = parts.map(\.label)
        return parts.count <= Self.limit && Set(labels).count == labels.count
            && labels.allSatisfy { label in
                (1...16).contains(label.utf8.count)
                    && label.utf8.allSatisfy {
                        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    }
            }
    }
}

/// Why a job failed, in words for the person reading the sidecar.
package struct ConversionFailure: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    /// The class of failure, which decides whether a retry can help.
    package enum Code: String, Sendable, Codable, Equatable {
        /// The content is not a format this engine reads (or one that is refused, such as SVG or a playlist).
        case unsupportedInput
        /// The content is damaged or truncated.
        case corruptInput
        /// The content is encrypted and the rule gives no password that opens it (a PDF), or it is an office document
        /// protected by a password (which the document engine cannot give).
        case encrypted
        /// The input exceeds a configured limit (pixels, size, duration).
        case limitExceeded
        /// The output could not be written (permissions, name taken, a folder that cannot be created).
        case outputFailed
        /// The target's file system is full (`ENOSPC`, `EDQUOT`): the job is tried again later, with back-off.
        case diskFull
        /// The target folder cannot be written to now (a read-only file system, `EROFS`, or no permission, `EACCES`)
        /// when the output is created: the job is tried again later, with back-off, as for `diskFull`.
        case targetReadOnly
        /// The rule's engine is not part of this build.
        case engineUnavailable
        /// The worker process died (crash or kill) during the job.
        case workerCrashed
        /// The job ran longer than `jobTimeout`.
        case timedOut
        /// The job was cancelled at shutdown.
        case cancelled
        /// The input disappeared or changed while it was converted.
        case inputChanged
        /// Another program still holds the source (it was rewritten during the conversion, or a lease or lock
        /// refused the open): the job is tried again later, with back-off.
        case sourceBusy
        /// Anything else; the message says what.
        case internalError
    }

    package var code: Code
    package var message: String

    /// Whether the job may succeed later without anything changing in its input: it is postponed and tried again,
    /// rather than recorded as failed.
    package var isTransient: Bool {
        self.code == .diskFull || self.code == .sourceBusy || self.code == .targetReadOnly
    }

    /// Whether the failure comes from the input itself (refused, damaged, over a limit, crashing or hanging its
    /// worker), so that the rule's `quarantine` takes the source; the other failures are the output's or Chute's.
    package var blamesTheInput: Bool {
        [.unsupportedInput, .corruptInput, .encrypted, .limitExceeded, .timedOut, .workerCrashed].contains(self.code)
    }

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(self.code.rawValue): \(self.message)" }

    /// This failure of one file of a group, naming the file and its place, with the file's own code:
    /// `5.pdf (file 3 of 4 of the group): the PDF has no pages`.
    package func inGroup(_ member: FilePath, index: Int, count: Int) -> ConversionFailure {
        ConversionFailure(
            self.code,
            "\(member.lastComponent?.string ?? member.string) (file \(index + 1) of \(count) of the group): "
                + self.message
        )
    }

    /// A failed creation of an output or its folder, before anything is put in place: a read-only target
    /// (`EROFS`, `EACCES`) is `targetReadOnly`, tried again later (a share mounted read-only, a disk remounted
    /// read-only after an error, a folder whose permissions are being fixed); the rest as ``writing(_:_:)``.
    ///
    /// Only for what precedes an output's commit: a sidecar that cannot be written after its output is in place must
    /// not postpone a job that would then write its output a second time.
    package static func creating(_ action: String, _ error: any Error) -> ConversionFailure {
        let error = SystemCallError.cause(of: error)
        switch error as? Errno {
        case .readOnlyFileSystem?, .permissionDenied?:
            return ConversionFailure(.targetReadOnly, "the target cannot be written to now: \(action): \(error)")
        default:
            return Self.writing(action, error)
        }
    }

    /// A failed system call on an output, in words a person recognises: a full disk or quota is `diskFull` (tried
    /// again later), `EFBIG` is the job's `maxOutputSize` (the worker's `RLIMIT_FSIZE`), the rest `outputFailed`.
    ///
    /// - Parameters:
    ///   - action: what was being done, such as "cannot write output".
    ///   - error: the system call's error.
    package static func writing(_ action: String, _ error: any Error) -> ConversionFailure {
        let error = SystemCallError.cause(of: error)
        switch error as? Errno {
        case .noSpace?, .diskQuotaExceeded?:
            return ConversionFailure(.diskFull, "disk full: \(action): \(error)")
        case .fileTooLarge?:
            return ConversionFailure(
                .limitExceeded,
                "the output grew beyond the job's maxOutputSize: \(action): \(error)"
            )
        default:
            return ConversionFailure(.outputFailed, "\(action): \(error)")
        }
    }

    /// A failed step of writing an engine's output (``TemporaryFile``), in the words its sidecar gives: `output
    /// already exists`, `cannot create output` (``creating(_:_:)``), `cannot write output`, `cannot flush output` and
    /// `cannot close output` (``writing(_:_:)``).
    package static func writingOutput(_ error: SystemCallError) -> ConversionFailure {
        switch error.call {
        case "open" where error.cause == .fileExists: ConversionFailure(.outputFailed, "output already exists")
        case "open": Self.creating("cannot create output", error)
        case "fsync": Self.writing("cannot flush output", error)
        case "close": Self.writing("cannot close output", error)
        default: Self.writing("cannot write output", error)
        }
    }
}

/// An engine that performs conversions inside a worker process.
///
/// - Important: engines run blocking C code; they are only ever called on a worker's own thread, never on Swift's
///   cooperative pool.
package protocol ConversionEngine: Sendable {
    /// The lane this engine serves.
    var kind: EngineKind { get }
    /// The C libraries behind this engine and their versions, for sidecars.
    var libraries: [String: String] { get }
    /// Converts `request.input` into `request.output`, or into several parts beside it (``OutputPart``).
    ///
    /// - Parameters:
    ///   - request: what to convert, and where to write it (the output must be created exclusively).
    ///   - progress: called with how far the job is, from the calling thread.
    /// - Returns: the facts for the sidecar.
    /// - Throws: ``ConversionFailure`` with the library's message; the output file (or every part written) is removed
    ///   first.
    func convert(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure)
        -> ConversionReport
}
