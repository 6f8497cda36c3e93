import CChuteLinux
import ChuteCore
import Foundation

/// The worker side of the supervisor–worker protocol: `chute worker --engine image` runs this loop.
///
/// It reads one ``ConversionRequest`` per line on standard input, converts it on this (its only) thread and answers
/// with ``WorkerReply`` lines. It exits when its input closes. Anything a C library prints to standard output is
/// redirected to standard error so it can never corrupt the protocol.
package enum WorkerMain {
    /// Runs the worker loop for one engine, in the ``WorkerSandbox``.
    ///
    /// - Parameters:
    ///   - descriptor: the engine to run.
    ///   - niceness: the CPU scheduling niceness to take.
    ///   - ioPriority: the I/O scheduling to take.
    ///   - threads: the threads the engine's library may use per job (``EngineDescriptor/make``); 0 lets it choose.
    /// - Returns: the process exit status: 0 when the input closed.
    package static func run(
        engine descriptor: EngineDescriptor,
        niceness: Int,
        ioPriority: IOPriority,
        threads: Int
    ) -> Int32 {
        // A process group of its own, which the supervisor kills whole: whatever a library starts (a helper
        // process) ends with the job's timeout, and with this worker when the supervisor exits. Foundation's
        // Process already starts each child as the leader of a new group; this does not depend on it.
        setpgid(0, 0)
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
        // One job at a time per worker, and several workers side by side: the threads the daemon's CPU budget gives
        // a job of this engine.
        let engine = descriptor.make(threads)
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
                let report = try engine.convert(request) { progress in send(.progress(progress)) }
                send(.finished(report))
            } catch {
                send(.failed(WorkerSandbox.explain(error, limits: request.limits, refusalsBefore: refusals)))
            }
        }
        return 0
    }

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
                while poll(&entry, 1, -1) < 0 && errno == EINTR {}
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
