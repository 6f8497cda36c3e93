import ChuteCore
import Foundation
import Logging
import SystemPackage

/// Runs the rules' `run:` hooks after their jobs end (``RuleHook``): the program with its arguments, no shell, the
/// job's facts in its environment (`CHUTE_JOB_ID`, `CHUTE_SOURCE`, `CHUTE_OUTPUTS` as a JSON list, `CHUTE_STATUS`,
/// `CHUTE_RULE`, `CHUTE_SIDECAR`) and its sidecar's JSON on standard input; as the rule's `owner` and `group` when the
/// daemon is root; at most `hookConcurrency` at once, the others queued; each line it writes logged; killed at its
/// `runTimeout`. What a hook does never changes its job's outcome: a failure is logged and counted.
package actor HookRunner {
    /// How the hooks of each rule ended so far.
    package struct Tally: Sendable, Equatable {
        package var succeeded = 0
        package var failed = 0
    }

    /// One hook to run for one job.
    private struct Run: Sendable {
        var job: Job
        var hook: RuleHook
        var status: NotifyEvent
        var outputs: [FilePath]
    }

    private let concurrency: Int
    private let logger: Logger
    private var running = 0
    private var waiting: [Run] = []
    private var tallies: [String: Tally] = [:]

    package init(concurrency: Int, logger: Logger) {
        self.concurrency = max(1, concurrency)
        self.logger = logger
    }

    /// How each rule's hooks ended so far, by rule name.
    package var counts: [String: Tally] { self.tallies }

    /// Starts the hook of the job's rule, if it has one for this outcome, or queues it behind the others; never waits
    /// for it.
    package func jobFinished(_ job: Job, outcome: JobOutcome) {
        guard let hook = job.rule.hook else { return }
        let (status, outputs): (NotifyEvent, [FilePath])
        switch outcome {
        case .completed(let output, let others): (status, outputs) = (.completed, [output] + others)
        case .skipped(let earlier): (status, outputs) = (.completed, [earlier])
        case .failed: (status, outputs) = (.failed, [])
        case .cancelledOnRequest: (status, outputs) = (.cancelled, [])
        case .cancelled, .vanished, .postponed, .handedOver: return
        }
        guard hook.events.contains(status) else { return }
        self.waiting.append(Run(job: job, hook: hook, status: status, outputs: outputs))
        self.startWaiting()
    }

    private func startWaiting() {
        while self.running < self.concurrency, !self.waiting.isEmpty {
            let run = self.waiting.removeFirst()
            self.running += 1
            Task {
                let succeeded = await Self.execute(run, logger: self.logger)
                self.ended(run, succeeded: succeeded)
            }
        }
    }

    private func ended(_ run: Run, succeeded: Bool) {
        self.running -= 1
        if succeeded {
            self.tallies[run.job.rule.name, default: Tally()].succeeded += 1
        } else {
            self.tallies[run.job.rule.name, default: Tally()].failed += 1
        }
        self.startWaiting()
    }

    /// Runs one hook to its end or its timeout.
    ///
    /// - Returns: whether it exited with status 0.
    private static func execute(_ run: Run, logger: Logger) async -> Bool {
        var logger = logger
        logger[metadataKey: "job.id"] = "\(run.job.id)"
        logger[metadataKey: "rule.name"] = "\(run.job.rule.name)"
        logger[metadataKey: "hook"] = "\(LogText.escaped(run.hook.command[0]))"
        let sidecar = Self.sidecar(of: run)
        let input = sidecar.flatMap { try? Data(contentsOf: URL(fileURLWithPath: $0.string)) } ?? Data()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let outputs = (try? encoder.encode(run.outputs.map(\.string))) ?? Data("[]".utf8)
        let ending = await HookProcess.run(
            run.hook.command,
            environment: [
                "CHUTE_JOB_ID": run.job.id, "CHUTE_SOURCE": run.job.source.string,
                "CHUTE_STATUS": run.status.rawValue, "CHUTE_RULE": run.job.rule.name,
                "CHUTE_SIDECAR": sidecar?.string ?? "", "CHUTE_OUTPUTS": String(decoding: outputs, as: UTF8.self),
            ],
            input: input,
            timeout: run.hook.timeout,
            ownership: run.job.rule.ownership,
            logger: logger
        )
        if ending.succeeded {
            logger.info("Hook finished", metadata: ["status": "0"])
            return true
        }
        logger.error(
            "Hook failed; the job's outcome stays as it was",
            metadata: [ending.killed ? "signal" : "status": "\(ending.status)", "job.status": "\(run.status.rawValue)"]
        )
        return false
    }

    /// The sidecar of the run's job, if it was written.
    private static func sidecar(of run: Run) -> FilePath? {
        // Named after the output, or after the planned name of a set of outputs or of a job that wrote none.
        let candidates = (run.outputs.prefix(1) + [run.job.plan.path]).map { run.job.rule.sidecarPath(for: $0) }
        return candidates.first { (try? SourceInspector.status(of: $0)) != nil }
    }
}

/// A hook's program, run to its end or its timeout (``HookRunner``, and a rule's `pre:` hook in ``JobRunner``).
package enum HookProcess {
    /// How it ended.
    package struct Ending: Sendable {
        /// Its exit status, or the signal that ended it.
        package var status: Int32
        /// Whether a signal ended it (its timeout's SIGKILL, or another).
        package var killed: Bool
        /// The last line it wrote, for a message.
        package var lastLine: String?

        /// Whether it exited with status 0.
        package var succeeded: Bool { self.status == 0 && !self.killed }
    }

    /// Runs `command` (a program by its path and its arguments, no shell) with only `PATH`, `LANG` and `environment`,
    /// `input` on its standard input, each line it writes (standard output and error) logged; as `ownership`'s owner
    /// and group when this is root; killed (SIGKILL) once `timeout` passed.
    ///
    /// - Returns: how it ended; `status` -1 and `killed` false when it could not start (logged).
    package static func run(
        _ command: [String],
        environment: [String: String],
        input: Data,
        timeout: Duration,
        ownership: OutputOwnership,
        logger: Logger
    ) async -> Ending {
        let process = Process()
        if getuid() == 0, ownership.setsAccount {
            // As the rule's owner and group (the owner's own without one): what it may touch is what the files it
            // writes belong to.
            let group = ownership.group ?? ownership.owner.flatMap { getpwuid($0)?.pointee.pw_gid } ?? 0
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments =
                ["--reuid=\(ownership.owner ?? 0)", "--regid=\(group)", "--clear-groups", "--"] + command
        } else {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
        }
        process.environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"].merging(environment) { $1 }
        let (standardInput, standardOutput) = (Pipe(), Pipe())
        process.standardInput = standardInput
        process.standardOutput = standardOutput
        process.standardError = standardOutput
        let exited = AsyncStream<Int32>.makeStream(bufferingPolicy: .bufferingNewest(1))
        process.terminationHandler = { process in
            exited.continuation.yield(process.terminationStatus)
            exited.continuation.finish()
        }
        do {
            try process.run()
        } catch {
            logger.error("Hook could not start", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            return Ending(status: -1, killed: false, lastLine: "\(error)")
        }
        logger.debug("Hook started", metadata: ["pid": "\(process.processIdentifier)"])
        let writing = standardInput.fileHandleForWriting
        let reading = standardOutput.fileHandleForReading
        // Its input written and its output read off Swift's cooperative threads: a hook may take its time with both.
        async let fed: Void = Blocking.run {
            try? writing.write(contentsOf: input)
            try? writing.close()
        }
        async let read: String? = Blocking.run {
            var (pending, last) = (Data(), String?.none)
            func logLine(_ bytes: Data) {
                let line = String(decoding: bytes, as: UTF8.self)
                logger.info("Hook output", metadata: ["line": "\(LogText.escaped(line))"])
                if !line.isEmpty { last = line }
            }
            while let chunk = try? reading.read(upToCount: 64 * 1024), !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    logLine(pending[..<newline])
                    pending.removeSubrange(...newline)
                }
            }
            if !pending.isEmpty { logLine(pending) }
            return last
        }
        let pid = process.processIdentifier
        let killer = Task {
            try await Task.sleep(for: timeout)
            logger.error("Hook killed at its timeout", metadata: ["runTimeout": "\(ValueParsing.describe(timeout))"])
            kill(pid, SIGKILL)
        }
        var status: Int32 = -1
        for await code in exited.stream { status = code }
        killer.cancel()
        let (_, last) = await (fed, read)
        return Ending(status: status, killed: process.terminationReason == .uncaughtSignal, lastLine: last)
    }
}
