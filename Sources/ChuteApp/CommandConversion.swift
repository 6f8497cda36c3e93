import ChuteCatalog
import ChuteCore
import ChuteRuntime
import Foundation
import Logging
import ServiceLifecycle
import SystemPackage
import UnixSignals

/// `chute convert INPUT OUTPUT`: one job through the daemon's own runtime, in this process and without watching
/// anything: submitted with a ticket, scheduled under the same budget, converted by the same worker and committed
/// the same way, so that the output has the bytes a daemon's rule with these options gives.
///
/// The job's store is a journal in a temporary folder, removed at the end with the sidecar the job writes there: the
/// command leaves only its output, and never moves, deletes or quarantines its input (its origin is
/// ``JobOrigin/command``).
package struct CommandConversion {
    private let input: FilePath
    private let output: FilePath
    private let options: ConversionOptions
    private let overwrite: Bool
    private let chute: FilePath
    private let limits: JobLimits
    private let logger: Logger

    /// - Parameters:
    ///   - input: the source file.
    ///   - output: the file to create; its extension picks the format.
    ///   - overwrite: replace an existing output instead of failing.
    ///   - chute: the running `chute` binary, beside which the workers are found.
    package init(
        input: FilePath,
        output: FilePath,
        options: ConversionOptions,
        overwrite: Bool,
        chute: FilePath,
        limits: JobLimits,
        logger: Logger
    ) {
        self.input = input
        self.output = output
        self.options = options
        self.overwrite = overwrite
        self.chute = chute
        self.limits = limits
        self.logger = logger
    }

    /// Converts, and returns a one-line summary (a line per output for a job with several).
    ///
    /// - Throws: ``ConversionFailure`` with the library's message, in the command's terms (`--overwrite`).
    package func run() async throws(ConversionFailure) -> String {
        let ext = self.output.extension ?? ""
        guard let format = Engines.registry.format(named: ext), !format.followsInput else {
            let known = Engines.registry.formats.filter { !$0.followsInput }.map(\.name).joined(separator: ", ")
            throw ConversionFailure(.unsupportedInput, "unknown output format '\(ext)'; known: \(known)")
        }
        let here = FilePath(FileManager.default.currentDirectoryPath)
        let output = here.pushing(self.output).lexicallyNormalized()
        guard let name = output.lastComponent, !self.output.string.hasSuffix("/") else {
            throw ConversionFailure(.outputFailed, "\(self.output) is not a file path")
        }
        // Said before converting, and in the command's own terms (the daemon's commit would name onConflict).
        if !self.overwrite, (try? SourceInspector.status(of: output)) != nil {
            throw ConversionFailure(.outputFailed, "\(self.output) already exists; give --overwrite to replace it")
        }
        // The file itself, not a link to it: the runtime reads a source only below its folder, never through a link.
        guard let resolved = realpath(here.pushing(self.input).string, nil) else {
            throw ConversionFailure(.corruptInput, "cannot read \(self.input): \(Errno(rawValue: errno))")
        }
        let input = FilePath(String(cString: resolved))
        free(resolved)
        guard let status = try? SourceInspector.status(of: input), status.isRegularFile else {
            throw ConversionFailure(.corruptInput, "\(self.input) is not a regular file")
        }
        let scratch: FilePath
        do {
            scratch = FilePath(
                try FileManager.default.url(
                    for: .itemReplacementDirectory,
                    in: .userDomainMask,
                    appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()),
                    create: true
                ).path
            )
        } catch {
            throw ConversionFailure(.outputFailed, "cannot make a temporary folder for the job: \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: scratch.string) }
        let rule = Rule(
            name: "convert",
            match: [],
            to: format,
            output: output.removingLastComponent(),
            options: self.options,
            onConflict: self.overwrite ? .overwrite : .skip,
            limits: self.limits,
            onDuplicate: .convert,
            sidecars: .folder(scratch)
        )
        var job = Job(
            source: input,
            root: input.removingLastComponent(),
            rule: rule,
            plan: OutputPlan(directory: output.removingLastComponent(), name: name),
            fingerprint: status.fingerprint,
            sniffed: SourceInspector.sniff(input),
            allowsHardLinks: true
        )
        job.origin = .command
        let outcome = try await self.perform(job, scratch: scratch)
        switch outcome {
        case .completed(let final, let others):
            let sidecar = (try? Data(contentsOf: URL(fileURLWithPath: rule.sidecarPath(for: job.plan.path).string)))
                .flatMap { try? JSONDecoder().decode(Sidecar.self, from: $0) }
            return Self.summary(of: [final] + others, format: format, sidecar: sidecar)
        case .failed(let failure), .postponed(let failure):
            throw Self.inCommandTerms(failure)
        case .cancelled, .cancelledOnRequest, .handedOver:
            throw ConversionFailure(.cancelled, "cancelled")
        case .vanished:
            throw ConversionFailure(.corruptInput, "\(self.input) went away while it was converted")
        case .skipped:
            // The rule converts duplicates: nothing is ever skipped.
            throw ConversionFailure(.internalError, "the job was skipped as a duplicate")
        }
    }

    /// Runs the job through a runtime of one lane per engine over a store in `scratch`, and waits for its ticket.
    ///
    /// SIGINT and SIGTERM cancel the job: its worker is killed and its temporary output removed.
    private func perform(_ job: Job, scratch: FilePath) async throws(ConversionFailure) -> JobOutcome {
        // The command says how its job ended itself: the runtime's own records of it (a daemon's log) are shown only
        // when asked for with --log-level debug or trace.
        var logger = self.logger
        if logger.logLevel > .debug { logger.logLevel = .critical }
        let settings = Settings()
        let budget = ChuteApplication.budget(settings)
        let store: SQLiteJobStore
        do {
            store = try SQLiteJobStore(path: scratch.appending("journal.sqlite"))
        } catch {
            throw ConversionFailure(.outputFailed, "\(error)")
        }
        let queue = JobQueue(budget: budget, logger: logger)
        let tickets = JobTickets()
        let submitter = JobSubmitter(store: store, queue: queue, tickets: tickets, logger: logger)
        let runtime = JobRuntime(
            queue: queue,
            completions: JobCompletions(watched: [], tickets: tickets),
            watchedFolders: [],
            launcher: ChuteApplication.launcher(beside: self.chute, settings: settings, threads: budget.threads),
            journal: store,
            settings: settings,
            lanes: [job.engine: 1],
            logger: logger
        )
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [runtime],
                gracefulShutdownSignals: [],
                cancellationSignals: [.sigint, .sigterm],
                logger: logger
            )
        )
        return await withTaskGroup(of: JobOutcome?.self) { tasks in
            tasks.addTask {
                try? await group.run()
                return nil
            }
            guard let ticket = await submitter.submit(job) else {
                await group.triggerGracefulShutdown()
                return .failed(ConversionFailure(.internalError, "the job was not queued"))
            }
            // A signal cancels the runtime, which ends the job as cancelled.
            let outcome = (try? await ticket.outcome()) ?? .cancelled
            await group.triggerGracefulShutdown()
            await tasks.waitForAll()
            return outcome
        }
    }

    /// What the command prints of a completed job: each output with its format, size and bytes, and the warnings.
    private static func summary(of outputs: [FilePath], format: TargetFormat, sidecar: Sidecar?) -> String {
        let warnings = sidecar.map { $0.warnings.isEmpty ? "" : "\nwarnings: " + $0.warnings.joined(separator: "; ") }
        guard outputs.count == 1 else {
            let bytes = sidecar?.outputs?.reduce(0) { $0 + $1.size } ?? 0
            return outputs.map(\.string).joined(separator: "\n")
                + "\n\(outputs.count) \(format.name) files, \(bytes) bytes" + (warnings ?? "")
        }
        let details = sidecar?.details ?? [:]
        let size = details["outputWidth"].flatMap { w in details["outputHeight"].map { "\(w)x\($0) " } } ?? ""
        return "\(outputs[0]): \(format.name) \(size)\(sidecar?.output?.size ?? 0) bytes" + (warnings ?? "")
    }

    /// A commit's failure in the command's terms: an output that exists is replaced with `--overwrite`, not with the
    /// rules file's `onConflict`.
    private static func inCommandTerms(_ failure: ConversionFailure) -> ConversionFailure {
        guard failure.message.hasSuffix(OutputCommitter.skipNote) else { return failure }
        let kept = failure.message.dropLast(OutputCommitter.skipNote.count)
        return ConversionFailure(
            failure.code,
            kept.trimmingCharacters(in: .whitespaces) + "; give --overwrite to replace it"
        )
    }
}
