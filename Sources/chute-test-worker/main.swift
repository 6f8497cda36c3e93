import ChuteCatalog
import ChuteCore
import ChuteWorker
import Foundation
import SystemPackage

// A stand-in worker for the runtime's unit tests: it speaks the real worker protocol (WorkerMain) for every engine,
// but instead of a C library it follows what the input file says, so that tests of the queue, the runner, the store
// and the tickets run in milliseconds and fail in the ways they ask for. It is never installed.
//
// The input's first line is the instruction; any other content is copied to the output as it is:
// - `fail CODE MESSAGE`: the job fails with that ConversionFailure code and message.
// - `crash`: the worker exits at once, as a library that aborts would.
// - `slow N`: N progress reports, 0.1 s apart, before the copy (a job that a test cancels on its way).
WorkerMain.main(serving: Engines.registry.engines) { descriptor, _ in TestEngine(kind: descriptor.kind) }

/// The engine of ``chute-test-worker``: copies its input, unless the input's first line says otherwise.
struct TestEngine: ConversionEngine {
    let kind: EngineKind
    var libraries: [String: String] { ["test": "1"] }

    func convert(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: request.input.string))
        } catch {
            throw ConversionFailure(.corruptInput, "cannot read the input: \(error)")
        }
        let firstLine = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let words = firstLine.split(separator: " ", maxSplits: 2).map(String.init)
        switch words.first {
        case "fail":
            let code = words.count > 1 ? ConversionFailure.Code(rawValue: words[1]) ?? .internalError : .internalError
            throw ConversionFailure(code, words.count > 2 ? words[2] : "failed as asked")
        case "crash":
            exit(70)
        case "slow":
            let steps = words.count > 1 ? Int(words[1]) ?? 10 : 10
            for step in 0..<steps {
                progress(JobProgress(fraction: Double(step) / Double(steps)))
                usleep(100_000)
            }
        default:
            break
        }
        guard FileManager.default.createFile(atPath: request.output.string, contents: bytes) else {
            throw ConversionFailure(.outputFailed, "cannot write \(request.output)")
        }
        return ConversionReport(outputBytes: Int64(bytes.count), details: ["engine": self.kind.rawValue])
    }
}
