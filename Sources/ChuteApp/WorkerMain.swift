import CChuteLinux
import ChuteCore
import Foundation

/// The worker side of the supervisor–worker protocol: `chute worker --engine image` runs this loop.
///
/// It reads one ``ConversionRequest`` per line on standard input, converts it on this (its only) thread and answers
/// with ``WorkerReply`` lines. It exits when its input closes. Anything a C library prints to standard output is
/// redirected to standard error so it can never corrupt the protocol.
package enum WorkerMain {
    /// Runs the worker loop for one engine.
    ///
    /// - Returns: the process exit status: 0 when the input closed, 3 when this build has no such engine.
    package static func run(engine kind: EngineKind) -> Int32 {
        // The supervisor owns this process: die with it, and leave SIGINT/SIGTERM (sent to the whole process group by
        // a terminal or by systemd) to the supervisor, which ends workers itself after its grace period.
        _ = chute_set_parent_death_signal(SIGKILL)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let replies = FileHandle(fileDescriptor: dup(STDOUT_FILENO), closeOnDealloc: true)
        dup2(STDERR_FILENO, STDOUT_FILENO)

        guard let engine = Engines.make(kind, threadsPerJob: 1) else {
            FileHandle.standardError.write(Data("chute worker: this build has no \(kind.rawValue) engine\n".utf8))
            return 3
        }
        let encoder = JSONEncoder()
        func send(_ reply: WorkerReply) {
            guard var line = try? encoder.encode(reply) else { return }
            line.append(UInt8(ascii: "\n"))
            replies.write(line)
        }
        send(.ready(libraries: engine.libraries))
        let decoder = JSONDecoder()
        while let line = readLine(strippingNewline: true) {
            guard let request = try? decoder.decode(ConversionRequest.self, from: Data(line.utf8)) else {
                send(.failed(ConversionFailure(.internalError, "the worker received an unreadable request")))
                continue
            }
            do throws(ConversionFailure) {
                let report = try engine.convert(request) { fraction in send(.progress(fraction)) }
                send(.finished(report))
            } catch {
                send(.failed(error))
            }
        }
        return 0
    }
}
