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
// - `steps N DIR`: N progress reports (1/N, 2/N, … 1), the k-th once the file `DIR/k` exists, before the copy: a
//   test on a clock of its own moves the clock, then lets the job go one step further.
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
        case "steps":
            let steps = words.count > 1 ? Int(words[1]) ?? 1 : 1
            let folder = words.count > 2 ? words[2] : "."
            for step in 1...max(1, steps) {
                while !FileManager.default.fileExists(atPath: "\(folder)/\(step)") { usleep(5000) }
                progress(JobProgress(fraction: Double(step) / Double(max(1, steps))))
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
