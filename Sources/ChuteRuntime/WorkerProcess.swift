import ChuteCore
import Foundation
import Logging
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One worker process: a child `chute worker` that runs conversions one at a time and answers over a pipe.
///
/// Requests go to the child's standard input and replies come back on its standard output, one JSON line each
/// (``ConversionRequest`` in, ``WorkerReply`` out). Dedicated threads read the replies and the child's standard error,
/// so no blocking read ever runs on Swift's cooperative pool; each line the child writes to standard error (FFmpeg's
/// and ImageMagick's own messages) becomes a warning in the supervisor's log, with the job it belongs to. A crash, a hang or a kill of the child costs the job it was running and nothing
/// else: the reply stream simply ends.
///
/// - Important: a `WorkerProcess` belongs to one lane task at a time; it is not shared.
package final class WorkerProcess {
    /// The outcome of one job as seen from the supervisor.
    package enum Outcome: Sendable, Equatable {
        case finished(ConversionReport)
        case failed(ConversionFailure)
        /// The job was cancelled (shutdown); the worker was killed.
        case cancelled
    }

    private let process: Process
    private let requests: FileHandle
    private var replies: AsyncStream<WorkerReply>.AsyncIterator
    private let termination: AsyncStream<Termination>
    /// The job the child is running, for its standard-error lines.
    private let currentJob = CurrentJob()
    /// The C libraries the worker loaded, from its `ready` message.
    package private(set) var libraries: [String: String] = [:]
    /// How many jobs this worker has run.
    package private(set) var jobCount = 0
    /// Whether the child is known to have exited.
    package private(set) var isDead = false

    /// The child's process id.
    package var pid: Int32 { self.process.processIdentifier }

    /// Starts a worker and waits for its `ready` message.
    ///
    /// - Throws: ``ConversionFailure`` (`.engineUnavailable`) when the child cannot start or dies before it is ready.
    package init(launcher: WorkerLauncher, engine: EngineKind, logger: Logger) async throws(ConversionFailure) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.executable(engine).string)
        process.arguments = launcher.arguments(engine)
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let errors = Pipe()
        process.standardError = errors
        let (termination, terminated) = AsyncStream.makeStream(of: Termination.self, bufferingPolicy: .unbounded)
        process.terminationHandler = { process in
            let signalled = process.terminationReason == .uncaughtSignal
            let status = process.terminationStatus
            terminated.yield(Termination(signal: signalled ? status : nil, status: status))
            terminated.finish()
        }
        do {
            try process.run()
        } catch {
            throw ConversionFailure(
                .engineUnavailable,
                "cannot start the \(engine.rawValue) engine's worker \(launcher.executable(engine).string): "
                    + error.localizedDescription
                    + " (the worker executables belong in ../lib/chute beside chute's folder, or beside chute itself)"
            )
        }
        let (replies, continuation) = AsyncStream.makeStream(of: WorkerReply.self, bufferingPolicy: .unbounded)
        Self.startReader(output.fileHandleForReading, into: continuation, logger: logger)
        var workerLogger = logger
        workerLogger[metadataKey: "worker.pid"] = "\(process.processIdentifier)"
        Self.startErrorReader(errors.fileHandleForReading, job: self.currentJob, logger: workerLogger)
        self.process = process
        self.requests = input.fileHandleForWriting
        self.replies = replies.makeAsyncIterator()
        self.termination = termination
        guard case .ready(let libraries) = await self.replies.next() else {
            self.isDead = true
            let how = await self.exit()
            throw ConversionFailure(.engineUnavailable, "the \(engine.rawValue) worker \(how) before it was ready")
        }
        self.libraries = libraries
    }

    /// Runs one conversion.
    ///
    /// - Parameters:
    ///   - request: the job; past its wall-clock limit (`limits.timeout`) the child is killed and the job fails with
    ///     `.timedOut`, and a child the kernel ends for going over its CPU time limit fails it with `.limitExceeded`.
    ///   - progress: called with each progress report.
    /// - Returns: the outcome. Cancelling the calling task kills the child and returns `.cancelled`.
    package func perform(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) async -> Outcome {
        let timeout = request.limits.timeout
        self.jobCount += 1
        let pid = self.pid
        self.currentJob.set(request.jobID)
        defer { self.currentJob.set(nil) }
        do {
            var line = try JSONEncoder().encode(request)
            line.append(UInt8(ascii: "\n"))
            try self.requests.write(contentsOf: line)
        } catch {
            self.isDead = true
            return .failed(ConversionFailure(.workerCrashed, "cannot send the job to the worker: \(error)"))
        }
        let started = ContinuousClock.now
        // The watchdog is a Dispatch timer, cancelled when this scope ends, so it only fires for a job that really
        // overran. A cancelled `Task.sleep` would keep its task and timer alive until its deadline
        // (swiftlang/swift#60441): with the 30-minute default `jobTimeout`, about 650 bytes per job for half an hour
        // (found by soaking the daemon with drops of thousands of files under heaptrack).
        let watchdog = DispatchSource.makeTimerSource(queue: Self.watchdogQueue)
        watchdog.setEventHandler { Self.kill(pid) }
        watchdog.schedule(deadline: .now() + Self.dispatchInterval(timeout))
        watchdog.resume()
        defer { watchdog.cancel() }
        let reply: WorkerReply? = await withTaskCancellationHandler {
            while let reply = await self.replies.next() {
                if case .progress(let report) = reply {
                    progress(report)
                    continue
                }
                return reply
            }
            return nil
        } onCancel: {
            Self.kill(pid)
        }
        if Task.isCancelled {
            self.isDead = true
            return .cancelled
        }
        switch reply {
        case .finished(let report):
            return .finished(report)
        case .failed(let failure):
            return .failed(failure)
        case .ready, .progress, nil:
            self.isDead = true
            let exit = await self.exit()
            if ContinuousClock.now - started >= timeout {
                return .failed(ConversionFailure(.timedOut, "the job ran longer than \(timeout) and was stopped"))
            }
            // What the worker wrote last is read by another thread: it is waited for, briefly, until the pipe closed.
            let deadline = ContinuousClock.now + .seconds(1)
            while !self.currentJob.errorsClosed && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            return .failed(exit.failure(limits: request.limits, uncaughtException: self.currentJob.uncaughtException))
        }
    }

    /// Kills the worker and every process it started: the worker leads a process group of its own (Foundation's
    /// `Process` starts each child so, and `chute worker` makes sure of it), so that a helper a library spawned
    /// never outlives the job's timeout, nor holds the reply pipe open after the worker died (which would keep the
    /// job waiting). Should the group not exist, the worker alone is killed. The corresponding C function is `kill`.
    private static func kill(_ pid: Int32) {
        if Glibc.kill(-pid, SIGKILL) != 0 {
            Glibc.kill(pid, SIGKILL)
        }
    }

    /// The queue of every job's watchdog timer: one serial queue, so that arming and cancelling them never asks
    /// Dispatch for more threads.
    private static let watchdogQueue = DispatchQueue(label: "chute.worker-watchdog")

    /// `duration` for Dispatch, or `.never` if it does not fit in nanoseconds.
    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !nanoseconds.overflow, !total.overflow, let whole = Int(exactly: total.partialValue) else {
            return .never
        }
        return .nanoseconds(whole)
    }

    /// Ends the worker: closes its input so it exits by itself, and kills it if it does not within a second.
    package func shutDown() async {
        try? self.requests.close()
        guard !self.isDead else {
            _ = await self.exit()
            return
        }
        let pid = self.pid
        async let _ = {
            try? await Task.sleep(for: .seconds(1))
            if !Task.isCancelled { Self.kill(pid) }
        }()
        _ = await self.exit()
        self.isDead = true
    }

    private func exit() async -> Termination {
        await self.termination.first { _ in true } ?? Termination(signal: nil, status: 0)
    }

    private static func startReader(
        _ handle: FileHandle,
        into continuation: AsyncStream<WorkerReply>.Continuation,
        logger: Logger
    ) {
        let thread = Thread {
            let decoder = JSONDecoder()
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let fd = handle.fileDescriptor
            reading: while true {
                let count = try? SystemCall.check("read") {
                    buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                }
                guard let count, count > 0 else { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[pending.startIndex..<newline]
                    pending = Data(pending[(newline + 1)...])
                    do {
                        continuation.yield(try decoder.decode(WorkerReply.self, from: line))
                    } catch {
                        logger.error(
                            "Worker sent an unreadable reply",
                            metadata: ["reply": "\(String(decoding: line.prefix(200), as: UTF8.self))"]
                        )
                        break reading
                    }
                }
            }
            try? handle.close()
            continuation.finish()
        }
        thread.name = "chute-worker-reader"
        thread.start()
    }
}

extension WorkerProcess {
    /// How the child process ended.
    private struct Termination: Sendable, CustomStringConvertible {
        /// The signal that ended it, or `nil` when it exited.
        var signal: Int32?
        /// The exit status, or the signal number.
        var status: Int32

        var description: String {
            guard let signal else { return "exited with status \(self.status)" }
            return "was killed by signal \(signal) (\(signalName(signal)))"
        }

        /// The failure of the job that was running: the kernel's signal for the CPU time limit names the limit; an
        /// abort after the C++ runtime's `terminate called after throwing …` (`uncaughtException`, from the worker's
        /// standard error) says so; any other end is a crash (which running out of memory can also cause).
        func failure(limits: JobLimits, uncaughtException: String?) -> ConversionFailure {
            switch self.signal {
            case SIGXCPU where limits.cpuTime != nil:
                let limit = ValueParsing.describe(limits.cpuTime ?? .zero)
                return ConversionFailure(.limitExceeded, "the job used more CPU time than its cpuTimeLimit of \(limit)")
            case SIGABRT where uncaughtException != nil && uncaughtException?.contains("bad_alloc") == false:
                // The C++ runtime's abort for an exception nothing caught: a library's bug, not a lack of memory.
                return ConversionFailure(
                    .workerCrashed,
                    "the worker process \(self) during the job: a library threw an exception that nothing caught "
                        + "(\(LogText.escaped(uncaughtException ?? "", limit: 300)))"
                )
            case SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP:
                let hint = limits.memory.map {
                    " (the job's memoryLimit is \(ValueParsing.describe(bytes: $0)); running out of it can end a worker "
                        + "this way)"
                }
                return ConversionFailure(.workerCrashed, "the worker process \(self) during the job\(hint ?? "")")
            default:
                return ConversionFailure(.workerCrashed, "the worker process \(self) during the job")
            }
        }
    }

    /// The id of the job a worker is running, shared with the thread that logs the worker's standard error, and
    /// what that thread saw of an uncaught C++ exception (LibreOffice's, which ends the worker with SIGABRT).
    private final class CurrentJob: Sendable {
        private struct State {
            var id: String?
            /// The job that ended last, and when: a line the worker wrote during it can be read only after the
            /// outcome, which comes on another pipe.
            var previous: (id: String, endedAt: ContinuousClock.Instant)?
            var uncaughtException: String?
            var errorsClosed = false
        }

        /// How long after a job's end a line read while no job runs is still taken as that job's: the worker does
        /// nothing between jobs, so such a line was written during it and read late.
        static let lateLines: Duration = .seconds(2)

        private let state = Mutex(State())

        func set(_ id: String?) {
            self.state.withLock {
                if id == nil, let ended = $0.id { $0.previous = (ended, .now) }
                $0.id = id
                $0.uncaughtException = nil
            }
        }

        /// The running job, or the one that ended within ``lateLines``.
        func get() -> String? {
            self.state.withLock { state in
                guard state.id == nil, let previous = state.previous else { return state.id }
                return ContinuousClock.now - previous.endedAt < Self.lateLines ? previous.id : nil
            }
        }

        /// The C++ runtime's `terminate called after throwing an instance of …` line of the running job, if any.
        var uncaughtException: String? {
            get { self.state.withLock { $0.uncaughtException } }
            set { self.state.withLock { $0.uncaughtException = newValue } }
        }

        /// Whether the worker's standard error has been read to its end (the worker has ended).
        var errorsClosed: Bool {
            get { self.state.withLock { $0.errorsClosed } }
            set { self.state.withLock { $0.errorsClosed = newValue } }
        }
    }

    /// How long the standard error reader waits for more of a burst of lines (a crash's stack) before it logs them.
    private static let errorBurstQuiet: Int32 = 100

    /// Logs what the child writes to standard error as warnings, escaped and capped: the lines that come in one
    /// burst (until the pipe has been quiet for ``errorBurstQuiet`` milliseconds, such as a library's crash report
    /// and stack) go into one record, with their count, until the pipe closes.
    private static func startErrorReader(_ handle: FileHandle, job: CurrentJob, logger: Logger) {
        let thread = Thread {
            var pending: [UInt8] = []
            var burst: [String] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            let fd = handle.fileDescriptor
            // The job the burst's first line came during: by the time a burst is logged its job may have ended.
            var burstJob: String?
            func collect(_ line: ArraySlice<UInt8>) {
                guard !line.isEmpty else { return }
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix("terminate called after throwing") {
                    job.uncaughtException = text
                }
                let current = job.get()
                if !burst.isEmpty, current != burstJob { emit() }
                if burst.isEmpty { burstJob = current }
                burst.append(text)
            }
            func emit() {
                // One record per burst, split where it would grow past 16 KiB, so that no line of a long
                // burst (a decoder's warnings about a damaged file) is cut off; lines are joined with an escaped
                // newline, as LogText writes one.
                var chunk: [String] = []
                var length = 0
                func record() {
                    guard !chunk.isEmpty else { return }
                    var metadata: Logger.Metadata = [
                        "line": "\(chunk.joined(separator: "\\u{a}"))", "lines": "\(chunk.count)",
                    ]
                    if let id = burstJob {
                        metadata["job.id"] = "\(id)"
                    }
                    logger.warning("Worker message", metadata: metadata)
                    chunk.removeAll()
                    length = 0
                }
                for line in burst {
                    let escaped = LogText.escaped(line)
                    if length + escaped.count > 16 * LogText.maximumLength { record() }
                    chunk.append(escaped)
                    length += escaped.count + 6
                }
                record()
                burst.removeAll()
            }
            while true {
                // A burst ends when nothing more comes for a moment; then what it brought is logged.
                if !burst.isEmpty {
                    var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    let ready = try? SystemCall.check("poll") { poll(&waiting, 1, Self.errorBurstQuiet) }
                    if ready == 0 { emit() }
                }
                let count = try? SystemCall.check("read") {
                    buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                }
                guard let count, count > 0 else { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    collect(pending[..<newline])
                    pending.removeSubrange(...newline)
                }
                // A line that never ends is still logged, in pieces.
                if pending.count > LogText.maximumLength {
                    collect(pending[...])
                    pending.removeAll()
                    emit()
                }
            }
            collect(pending[...])
            emit()
            job.errorsClosed = true
            try? handle.close()
        }
        thread.name = "chute-worker-stderr"
        thread.start()
    }
}

/// The conventional name of a signal, for messages such as "killed by signal 9 (SIGKILL)".
package func signalName(_ signal: Int32) -> String {
    switch signal {
    case SIGKILL: return "SIGKILL"
    case SIGSEGV: return "SIGSEGV"
    case SIGABRT: return "SIGABRT"
    case SIGBUS: return "SIGBUS"
    case SIGFPE: return "SIGFPE"
    case SIGILL: return "SIGILL"
    case SIGTERM: return "SIGTERM"
    case SIGXCPU: return "SIGXCPU"
    case SIGXFSZ: return "SIGXFSZ"
    default: return "signal \(signal)"
    }
}
