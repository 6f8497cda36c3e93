import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteFFmpeg
import SystemPackage

/// Runs the media engine the way a worker does.
enum Conversion {
    /// Converts `input` into `output` (which must not exist) as a rule with `options` targeting `format` would.
    ///
    /// - Parameter progress: receives each progress report.
    static func run(
        _ input: FilePath,
        to format: String,
        output: FilePath,
        options: ConversionOptions = ConversionOptions(),
        progress: (JobProgress) -> Void = { _ in }
    ) throws(ConversionFailure) -> ConversionReport {
        guard let target = Engines.registry.format(named: format) else {
            throw ConversionFailure(.internalError, "the test asked for an unknown format '\(format)'")
        }
        let request = ConversionRequest(
            jobID: "test",
            engine: target.engine,
            input: input,
            output: output,
            format: target,
            options: options
        )
        // Every report, not one a second, so that tests see progress whatever the machine's speed.
        return try MediaEngine(kind: target.engine, progressInterval: .zero).convert(request, progress: progress)
    }
}
