import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Logging
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A worker that outlives its job's timeout is killed with everything it started: the supervisor kills the worker's
/// process group, which `chute worker` makes its own as it starts (LibreOffice and other libraries may start helper
/// processes).
@Suite(.timeLimit(.minutes(1)))
struct WorkerProcessGroupTests {
    @Test func aTimedOutWorkerIsKilledWithTheProcessesItStarted() async throws {
        let directory = try TemporaryDirectory(prefix: "group")
        defer { directory.remove() }
        let helperFile = directory.appending("helper.pid")
        // A stand-in for `chute worker` (a process group of its own, as every child Foundation starts): it starts a
        // helper that would run for five minutes and keeps the reply pipe open, says it is ready, and hangs on its
        // job.
        let script = """
            sleep 300 & echo $! > '\(helperFile.string)'
            echo '{"ready":{"libraries":{}}}'
            read request
            sleep 300
            """
        let launcher = WorkerLauncher(executable: { _ in "/bin/sh" }, arguments: { _ in ["-c", script] })
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let worker = try await WorkerProcess(
            launcher: launcher,
            engine: EngineKind(rawValue: "document"),
            logger: logger
        )
        let helper = try #require(
            pid_t(
                try String(contentsOfFile: helperFile.string, encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines
                )
            )
        )
        // Whatever the outcome, the helper does not stay behind the test.
        defer { kill(helper, SIGKILL) }
        #expect(kill(helper, 0) == 0)
        var limits = JobLimits()
        limits.timeout = .milliseconds(500)
        let request = ConversionRequest(
            jobID: "job-1",
            engine: EngineKind(rawValue: "document"),
            input: directory.appending("in.txt"),
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
            Issue.record("expected a timed-out job, got \(outcome)")
            return
        }
        #expect(failure.code == .timedOut)
        // The helper is the worker's child, reparented once it dies: it is gone when kill(pid, 0) fails, or a zombie.
        try await waitUntil("the worker's helper to be killed with it", timeout: 10) {
            Self.isGone(helper) ? true : nil
        }
    }

    /// Whether `pid` no longer runs: it does not exist, or it is a zombie waiting for a parent to reap it.
    private static func isGone(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return true }
        let status = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = status.lastIndex(of: ")") else { return true }
        return status[status.index(close, offsetBy: 2)...].hasPrefix("Z")
    }
}
