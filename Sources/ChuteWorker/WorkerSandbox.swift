import CChuteLinux
import ChuteCore
import Foundation

/// What a worker process does to itself: once at start, lower its priorities and shut itself off from the network;
/// around each job, hold itself to the job's resource limits.
///
/// The limits are the kernel's (`setrlimit`), so they hold inside C code too. Past `cpuTimeLimit` the kernel sends
/// SIGXCPU, which ends the worker, and the supervisor names the limit; past `maxOutputSize` a write fails with
/// `EFBIG`, which the engine reports.
/// Past `memoryLimit` (`RLIMIT_DATA`: the private writable memory, which is what decoders allocate; mapped libraries
/// and reserved address space do not count) an allocation fails; the libraries report that as an error of their own
/// (or the worker ends), and ``explain(_:limits:refusalsBefore:)`` names the limit from the count of refused
/// allocations.
enum WorkerSandbox {
    /// Lowers the CPU and I/O priority, turns off core dumps (a hostile file that crashes a decoder leaves no copy of
    /// the worker's memory on disk), and denies new network sockets to this process and anything it could start.
    ///
    /// - Returns: what could not be done, one message each (the worker then runs without it and says so).
    static func enter(niceness: Int, ioPriority: IOPriority) -> [String] {
        var problems: [String] = []
        let (ioClass, level): (Int32, Int32) =
            switch ioPriority {
            case .bestEffort(let level): (2, Int32(level))
            case .idle: (3, 0)
            }
        // Linux keeps both priorities per thread, and new threads inherit their creator's: set every thread's now.
        var nicenessError: Int32?
        var ioError: Int32?
        for thread in Self.threads() {
            if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread), Int32(niceness)) != 0 {
                nicenessError = errno
            }
            if chute_set_io_priority(thread, ioClass, level) != 0 {
                ioError = errno
            }
        }
        if let nicenessError {
            problems.append(
                "cannot set niceness \(niceness): \(String(cString: strerror(nicenessError))); a daemon that is not "
                    + "root cannot go below its own niceness, so set settings.niceness to at least that"
            )
        }
        if let ioError {
            problems.append(
                "cannot set I/O priority \(ioPriority): \(String(cString: strerror(ioError))); a daemon that is not "
                    + "root cannot raise its own, so set settings.ioPriority to idle or a higher level"
            )
        }
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(Int32(RLIMIT_CORE.rawValue), &none) != 0 {
            problems.append("cannot turn off core dumps: \(String(cString: strerror(errno)))")
        }
        if chute_deny_network() != 0 {
            problems.append("cannot deny network access (seccomp): \(String(cString: strerror(errno)))")
        }
        return problems
    }

    /// The ids of this process's threads.
    private static func threads() -> [pid_t] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let threads = names.compactMap { pid_t($0) }
        return threads.isEmpty ? [0] : threads
    }

    /// Holds this process to `limits` until ``lift()``.
    ///
    /// The CPU limit counts from the time this worker has used so far, since a worker runs many jobs.
    ///
    /// - Returns: what could not be set, one message each.
    static func apply(_ limits: JobLimits) -> [String] {
        var problems: [String] = []
        if let memory = limits.memory {
            problems += Self.setSoftLimit(RLIMIT_DATA, to: UInt(memory), name: "memoryLimit")
        }
        if let cpuTime = limits.cpuTime {
            let seconds = UInt(max(1, cpuTime.components.seconds)) + UInt(Self.cpuTime().rounded(.up))
            problems += Self.setSoftLimit(RLIMIT_CPU, to: seconds, name: "cpuTimeLimit")
        }
        if let size = limits.outputSize {
            problems += Self.setSoftLimit(RLIMIT_FSIZE, to: UInt(size), name: "maxOutputSize")
        }
        return problems
    }

    /// How many allocations the C library has refused in this process so far.
    static func refusedAllocations() -> UInt {
        UInt(chute_refused_allocations())
    }

    /// A failure that came with refused allocations ran into the memory limit, whatever the library made of it (a
    /// decoder may call it damaged data): it becomes `limitExceeded`, naming the limit, with the library's message.
    ///
    /// - Parameter refusalsBefore: ``refusedAllocations()`` before the job.
    static func explain(_ failure: ConversionFailure, limits: JobLimits, refusalsBefore: UInt) -> ConversionFailure {
        let refused = Self.refusedAllocations() - refusalsBefore
        guard refused > 0, let memory = limits.memory, failure.code != .limitExceeded else { return failure }
        return ConversionFailure(
            .limitExceeded,
            "the job ran out of memory: \(refused) allocations beyond its memoryLimit of "
                + "\(ValueParsing.describe(bytes: memory)) were refused (\(failure.message))"
        )
    }

    /// Raises the limits ``apply(_:)`` set back to the ceilings the worker was started with.
    static func lift() {
        for resource in [RLIMIT_DATA, RLIMIT_CPU, RLIMIT_FSIZE] {
            var limit = rlimit()
            guard getrlimit(Int32(resource.rawValue), &limit) == 0 else { continue }
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(resource.rawValue), &limit)
        }
    }

    /// Sets a soft limit, never above the hard one (which a service manager may have set lower).
    private static func setSoftLimit(_ resource: __rlimit_resource, to value: UInt, name: String) -> [String] {
        var limit = rlimit()
        guard getrlimit(Int32(resource.rawValue), &limit) == 0 else {
            return ["cannot read the limit for \(name): \(String(cString: strerror(errno)))"]
        }
        limit.rlim_cur = min(value, limit.rlim_max)
        guard setrlimit(Int32(resource.rawValue), &limit) == 0 else {
            return ["cannot apply \(name): \(String(cString: strerror(errno)))"]
        }
        return []
    }

    /// The CPU time this process has used, every thread's, user and system, in seconds of one core.
    static func cpuTime() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        let micros =
            (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000 + Int(usage.ru_utime.tv_usec)
            + Int(usage.ru_stime.tv_usec)
        return Double(micros) / 1_000_000
    }
}
