import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Logging
import SystemPackage
import Testing

/// A worker that a library's uncaught C++ exception aborts (LibreOffice's `terminate called after throwing …`, issue
/// 27 item 9): its crash report, written to standard error in one burst, is one log record, and the job's failure
/// names the exception instead of hinting at the memory limit.
@Suite(.timeLimit(.minutes(1)))
struct WorkerCrashReportTests {
    @Test func anUncaughtExceptionIsOneLogRecordAndTheFailureNamesIt() async throws {
        let directory = try TemporaryDirectory(prefix: "crash")
        defer { directory.remove() }
        // A stand-in for `chute worker`: ready, then on its job a crash report of 40 lines and SIGABRT, as the C++
        // runtime ends a process whose exception nothing caught (abort(3): SIGABRT, whatever the shell ignores).
        let script = """
            echo '{"ready":{"libraries":{}}}'
            read request
            {
              echo "terminate called after throwing an instance of 'com::sun::star::container::NoSuchElementException'"
              for frame in $(seq 1 39); do echo "  frame $frame: /usr/lib/libreoffice/program/libmergedlo.so"; done
            } >&2
            exec python3 -c 'import os; os.abort()'
            """
        let launcher = WorkerLauncher(executable: { _ in "/bin/sh" }, arguments: { _ in ["-c", script] })
        let records = RecordingLogHandler.Box()
        let logger = Logger(label: "test") { _ in RecordingLogHandler(box: records) }
        let worker = try await WorkerProcess(
            launcher: launcher,
            engine: EngineKind(rawValue: "document"),
            logger: logger
        )
        var limits = JobLimits()
        limits.memory = 1 << 30
        let request = ConversionRequest(
            jobID: "job-1",
            engine: EngineKind(rawValue: "document"),
            input: directory.appending("in.html"),
            output: directory.appending("out.pdf"),
            format: TargetFormat(
                name: "pdf",
                category: .document,
                engine: EngineKind(rawValue: "document"),
                coder: "pdf"
            ),
            options: ConversionOptions(),
            limits: limits
        )
        let outcome = await worker.perform(request) { _ in }
        await worker.shutDown()
        guard case .failed(let failure) = outcome else {
            Issue.record("expected a crashed job, got \(outcome)")
            return
        }
        #expect(failure.code == .workerCrashed)
        #expect(failure.message.contains("NoSuchElementException"), "\(failure.message)")
        #expect(!failure.message.contains("memoryLimit"), "\(failure.message)")
        let messages = try await waitUntil("the crash report's record", timeout: 10) {
            let messages = records.messages.filter { $0.message == "Worker message" }
            return messages.isEmpty ? nil : messages
        }
        #expect(messages.count == 1, "\(messages.map(\.metadata))")
        #expect(messages.first?.metadata["lines"] == "40", "\(messages.map(\.metadata))")
        #expect(messages.first?.metadata["job.id"] == "job-1")
        print(
            "failure: \(failure.message); \(messages.count) record(s) of \(messages.first?.metadata["lines"] ?? "?") lines"
        )
    }
}
