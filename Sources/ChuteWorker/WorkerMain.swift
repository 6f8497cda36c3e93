import ArgumentParser
import CChuteLinux
import ChuteCore
import Foundation

/// The command line of a worker executable (`chute-image-worker --engine image --threads 1`), as the supervisor
/// starts it.
package struct WorkerArguments: ParsableCommand {
    package static let configuration = CommandConfiguration(
        abstract: "A worker process of the Chute daemon, which starts it: speaks JSON lines on stdin/stdout."
    )

    @Option(help: "The engine to run.")
    var engine: String

    @Option(help: "CPU scheduling niceness, 0 to 19.")
    var niceness = Settings().niceness

    @Option(name: .customLong("io-priority"), help: "I/O scheduling: idle, or a best-effort level from 0 to 7.")
    var ioPriority = Settings().ioPriority

    @Option(help: "Threads the engine's library may use per job; 0 lets the library choose.")
    var threads = 0

    package init() {}

    package func validate() throws {
        guard (0...19).contains(self.niceness) else {
            throw ValidationError("--niceness must be from 0 to 19")
        }
        guard self.threads >= 0 else {
            throw ValidationError("--threads must be 0 or more")
        }
    }
}

/// `--io-priority idle`, or a level: read as the rules' `ioPriority` is.
extension IOPriority: ExpressibleByArgument {
    package init?(argument: String) { self.init(argument) }
}

/// The worker side of the supervisor–worker protocol: each engine's worker executable runs this loop.
///
/// It reads one ``ConversionRequest`` per line on standard input, converts it on this (its only) thread and answers
/// with ``WorkerReply`` lines. It exits when its input closes. Anything a C library prints to standard output is
/// redirected to standard error so it can never corrupt the protocol.
package enum WorkerMain {
    /// Reads the command line and runs the worker loop for the engine it names, which must be one of `engines`; it
    /// exits with the loop's status.
    ///
    /// - Parameters:
    ///   - engines: the engines this executable links.
    ///   - make: makes the engine in this process, given how many threads its library may use per job (the
    ///     daemon's ``EngineRegistry/threadsPerJob(cpuBudget:)``), or 0 to let the library choose (`chute convert`).
    package static func main(
        serving engines: [EngineDescriptor],
        make: (_ engine: EngineDescriptor, _ threadsPerJob: Int) -> any ConversionEngine
    ) -> Never {
        let arguments = WorkerArguments.parseOrExit()
        guard let descriptor = engines.first(where: { $0.kind.rawValue == arguments.engine }) else {
            let served = engines.map(\.kind.rawValue).joined(separator: ", ")
            WorkerArguments.exit(
                withError: ValidationError("unknown engine '\(arguments.engine)': this worker runs \(served)")
            )
        }
        let replies = Self.enter(niceness: arguments.niceness, ioPriority: arguments.ioPriority)
        // One job at a time per worker, and several workers side by side: the threads the daemon's CPU budget gives
        // a job of this engine.
        let engine = make(descriptor, arguments.threads)
        exit(Self.run(engine, descriptor: descriptor, replies: replies))
    }

    /// Takes the process out of the supervisor's signals and into the ``WorkerSandbox``.
    ///
    /// - Returns: where replies go: the original standard output, which from now on goes to standard error, so that
    ///   nothing a C library prints can corrupt the protocol.
    private static func enter(niceness: Int, ioPriority: IOPriority) -> FileHandle {
        // A process group of its own, which the supervisor kills whole: whatever a library starts (a helper
        // process) ends with the job's timeout, and with this worker when the supervisor exits. Foundation's
        // Process already starts each child as the leader of a new group; this does not depend on it.
        setpgid(0, 0)
        // A process starts with the signal mask of the thread that spawned it: the supervisor's Dispatch threads block
        // every signal but the synchronous ones, SIGXCPU among them, which would leave cpuTimeLimit unenforced. Every
        // thread started from here on (the libraries' too) inherits this one's empty mask.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        // The supervisor owns this process: die with it, and leave SIGINT/SIGTERM (sent to the whole process group by
        // a terminal or by systemd) to the supervisor, which ends workers itself after its grace period.
        Self.exitWithParent()
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        // Past maxOutputSize a write fails with EFBIG, which the engines report, instead of ending the worker; past
        // cpuTimeLimit the kernel's SIGXCPU ends it, whatever the supervisor left these signals at.
        signal(SIGXFSZ, SIG_IGN)
        signal(SIGXCPU, SIG_DFL)
        let replies = FileHandle(fileDescriptor: dup(STDOUT_FILENO), closeOnDealloc: true)
        dup2(STDERR_FILENO, STDOUT_FILENO)

        for problem in WorkerSandbox.enter(niceness: niceness, ioPriority: ioPriority) {
            FileHandle.standardError.write(Data("chute worker: \(problem)\n".utf8))
        }
        return replies
    }

    /// Answers requests on standard input, one at a time, until it closes.
    ///
    /// - Returns: the process exit status: 0 when the input closed.
    private static func run(
        _ engine: any ConversionEngine,
        descriptor: EngineDescriptor,
        replies: FileHandle
    ) -> Int32 {
        let encoder = JSONEncoder()
        func send(_ reply: WorkerReply) {
            guard var line = try? encoder.encode(reply) else { return }
            line.append(UInt8(ascii: "\n"))
            replies.write(line)
        }
        send(.ready(libraries: engine.libraries))
        let decoder = JSONDecoder()
        while let line = Self.nextRequest() {
            guard let request = try? decoder.decode(ConversionRequest.self, from: Data(line.utf8)) else {
                send(.failed(ConversionFailure(.internalError, "the worker received an unreadable request")))
                continue
            }
            for problem in WorkerSandbox.apply(request.limits) {
                FileHandle.standardError.write(Data("chute worker: \(problem)\n".utf8))
            }
            defer { WorkerSandbox.lift() }
            let refusals = WorkerSandbox.refusedAllocations()
            do throws(ConversionFailure) {
                guard request.inputs == nil || descriptor.joinsGroups != nil else {
                    throw ConversionFailure(
                        .unsupportedInput,
                        "the \(engine.kind.rawValue) engine converts one file at a time, not a group of files"
                    )
                }
                let started = WorkerSandbox.cpuTime()
                var report = try engine.convert(request) { progress in send(.progress(progress)) }
                report.cpuSeconds = max(0, WorkerSandbox.cpuTime() - started)
                send(.finished(report))
            } catch {
                send(.failed(WorkerSandbox.explain(error, limits: request.limits, refusalsBefore: refusals)))
            }
        }
        return 0
    }

    /// The next request's line, or `nil` when the input closed. A worker left waiting for a second first gives the
    /// memory its jobs freed back to the kernel: glibc keeps freed heap pages for reuse (a 12-megapixel picture's
    /// hundred megabytes), and an idle worker may wait `workerIdle` before it exits. The supervisor sends a request
    /// only once the previous one is answered, so no line waits in `readLine`'s buffer while this polls.
    private static func nextRequest() -> String? {
        var input = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        if poll(&input, 1, Self.trimAfterMilliseconds) == 0 {
            chute_release_free_memory()
        }
        return readLine(strippingNewline: true)
    }

    /// How long a worker waits for its next request before it gives its free memory back.
    private static let trimAfterMilliseconds: Int32 = 1000

    /// Ends this process as soon as the supervisor that started it has exited, even in the middle of a C call.
    ///
    /// `PR_SET_PDEATHSIG` is not used because it fires when the *thread* that spawned the worker exits, and the
    /// supervisor spawns workers from Dispatch and cooperative-pool threads that come and go under load: it killed
    /// workers of a living daemon. A pidfd of the parent becomes readable only when the whole process has exited. A
    /// dedicated thread waits on it; where the kernel lacks `pidfd_open`, the thread checks `getppid()` every second.
    /// It then kills the worker's process group, so that nothing the worker started outlives it.
    private static func exitWithParent() {
        let parent = getppid()
        let descriptor = chute_pidfd_open(parent)
        // The parent may have exited before the pidfd was opened; the worker has been reparented then.
        guard getppid() == parent, parent != 1 else { _exit(0) }
        let thread = Thread {
            if descriptor >= 0 {
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                _ = try? SystemCall.check("poll") { poll(&entry, 1, -1) }
            } else {
                while getppid() == parent { sleep(1) }
            }
            // The whole group: this worker and anything it started.
            kill(0, SIGKILL)
            _exit(0)
        }
        thread.name = "chute-worker-parent"
        thread.start()
    }
}
