import ChuteCatalog
import ChuteCore
import ChuteRuntime
import Foundation
import Logging
import SystemPackage

/// `chute convert INPUT OUTPUT`: one conversion through the same worker process and output commit as the daemon,
/// without watching anything.
package struct OneShotConversion {
    private let input: FilePath
    private let output: FilePath
    private let options: ConversionOptions
    private let overwrite: Bool
    private let launcher: WorkerLauncher
    private let limits: JobLimits
    private let logger: Logger

    /// - Parameters:
    ///   - input: the source file.
    ///   - output: the file to create; its extension picks the format.
    ///   - overwrite: replace an existing output instead of failing.
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
        self.launcher = ChuteApplication.launcher(beside: chute, settings: Settings())
        self.limits = limits
        self.logger = logger
    }

    /// Converts, and returns a one-line summary.
    ///
    /// - Throws: ``ConversionFailure`` with the library's message.
    package func run() async throws(ConversionFailure) -> String {
        let ext = self.output.extension ?? ""
        guard let format = Engines.registry.format(named: ext), !format.followsInput else {
            let known = Engines.registry.formats.filter { !$0.followsInput }.map(\.name).joined(separator: ", ")
            throw ConversionFailure(.unsupportedInput, "unknown output format '\(ext)'; known: \(known)")
        }
        guard let name = self.output.lastComponent else {
            throw ConversionFailure(.outputFailed, "\(self.output) is not a file path")
        }
        // Said before converting, and in the command's own terms (the daemon's commit would name onConflict).
        if !self.overwrite, (try? SourceInspector.status(of: self.output)) != nil {
            throw ConversionFailure(.outputFailed, "\(self.output) already exists; give --overwrite to replace it")
        }
        let directory =
            self.output.removingLastComponent().isEmpty
            ? FilePath(FileManager.default.currentDirectoryPath) : self.output.removingLastComponent()
        let temporary = directory.appending(
            "\(OutputCommitter.temporaryPrefix)\(UUID().uuidString.lowercased()).partial"
        )
        // As in the daemon, the engine is the one that writes the format from the input's content.
        let engine = format.engine(reading: SourceInspector.sniff(self.input))
        let worker = try await WorkerProcess(launcher: self.launcher, engine: engine, logger: self.logger)
        let request = ConversionRequest(
            jobID: "convert",
            engine: engine,
            input: self.input,
            output: temporary,
            format: format,
            options: self.options,
            limits: self.limits
        )
        let outcome = await worker.perform(request) { _ in }
        await worker.shutDown()
        switch outcome {
        case .cancelled:
            OutputCommitter.removeTemporaries(of: temporary)
            throw ConversionFailure(.cancelled, "cancelled")
        case .failed(let failure):
            OutputCommitter.removeTemporaries(of: temporary)
            throw failure
        case .finished(let report) where !report.parts.isEmpty:
            // Several outputs (`--tiles`): named after OUTPUT, all put in place or none.
            do throws(ConversionFailure) {
                guard OutputPart.areWellFormed(report.parts) else {
                    throw ConversionFailure(.internalError, "the worker reported malformed output parts")
                }
                let set = try OutputCommitter.commit(
                    report.parts,
                    beside: temporary,
                    as: OutputPlan(directory: directory, name: name),
                    policy: self.overwrite ? .overwrite : .skip
                )
                return set.paths.map(\.string).joined(separator: "\n")
                    + "\n\(set.paths.count) \(format.name) files, \(report.outputBytes) bytes"
            } catch {
                OutputCommitter.removeTemporaries(of: temporary)
                throw Self.inCommandTerms(error)
            }
        case .finished(let report):
            do throws(ConversionFailure) {
                let (final, _) = try OutputCommitter.commit(
                    temporary,
                    as: OutputPlan(directory: directory, name: name),
                    policy: self.overwrite ? .overwrite : .skip
                )
                let size =
                    report.details["outputWidth"].flatMap { w in report.details["outputHeight"].map { "\(w)x\($0) " } }
                    ?? ""
                return "\(final): \(format.name) \(size)\(report.outputBytes) bytes"
                    + (report.warnings.isEmpty ? "" : "\nwarnings: " + report.warnings.joined(separator: "; "))
            } catch {
                SystemCall.unlink(temporary)
                throw Self.inCommandTerms(error)
            }
        }
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
