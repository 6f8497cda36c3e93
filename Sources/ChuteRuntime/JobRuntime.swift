import CChuteLinux
import ChuteCore
import Glibc
import Logging
import ServiceLifecycle
import SystemPackage

/// The service that runs jobs: for each engine, as many lanes as its concurrency limit, each lane with one reused
/// worker process; the queue's budget decides how many of them run a job at once.
///
/// On graceful shutdown it stops handing out queued jobs, lets running jobs finish for up to the grace period, then
/// cancels them (their workers are killed and their temporary files removed) and returns. Cancelled outright, it
/// does the same at once: no lane stays parked waiting for work.
package struct JobRuntime: Service {
    private let queue: JobQueue
    private let completions: any JobCompletionSink
    private let watchedFolders: [FilePath]
    private let launcher: WorkerLauncher
    private let journal: any JobStore
    private let settings: Settings
    private let lanes: [EngineKind: Int]
    private let logger: Logger
    private let events: JobEvents
    private let cancellations: JobCancellations
    private let workers: WorkerCensus
    private let clock: RuntimeClock

    /// - Parameters:
    ///   - completions: where each ended job goes (``JobCompletions``: the intake of its watched file, its ticket).
    ///   - watchedFolders: the watched folders, whose originals an output never replaces.
    ///   - lanes: each engine's number of lanes, the jobs it runs at once.
    ///   - events: where each job's `started`, `progress` and final event goes.
    ///   - cancellations: where each running conversion can be cancelled on request.
    ///   - workers: where the lanes count the worker processes they start and stop.
    ///   - clock: the time of the grace period, of `workerIdle` and of the jobs' records (``RuntimeClock/system`` but
    ///     in tests). A job's `timeout` is the machine's time, which its worker's watchdog keeps.
    package init(
        queue: JobQueue,
        completions: any JobCompletionSink,
        watchedFolders: [FilePath],
        launcher: WorkerLauncher,
        journal: any JobStore,
        settings: Settings,
        lanes: [EngineKind: Int],
        logger: Logger,
        events: JobEvents = JobEvents(),
        cancellations: JobCancellations = JobCancellations(),
        workers: WorkerCensus = WorkerCensus(),
        clock: RuntimeClock = .system
    ) {
        self.clock = clock
        self.queue = queue
        self.completions = completions
        self.watchedFolders = watchedFolders
        self.launcher = launcher
        self.journal = journal
        self.settings = settings
        self.lanes = lanes
        self.logger = logger
        self.events = events
        self.cancellations = cancellations
        self.workers = workers
    }

    package func run() async throws {
        let queue = self.queue
        let grace = self.settings.gracePeriod
        let logger = self.logger
        let clock = self.clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { lanes in
                    for (engine, count) in self.lanes {
                        for _ in 0..<count {
                            lanes.addTask { await self.runLane(engine) }
                        }
                    }
                }
            }
            group.addTask {
                // Returns at the start of graceful shutdown; throws only if the service is cancelled outright (the
                // group does so when another service ends early): then the queue closes at once, and the running
                // jobs are cancelled with the lanes.
                guard (try? await gracefulShutdown()) != nil else {
                    await queue.close()
                    return
                }
                await queue.close()
                let running = await queue.counts.running
                if running > 0 {
                    logger.info("Waiting for running jobs", metadata: ["jobs": "\(running)", "grace": "\(grace)"])
                }
                try? await clock.sleep(grace)
            }
            // Whichever ends first: the lanes (all jobs done after the queue closed) or the grace period.
            await group.next()
            group.cancelAll()
        }
    }

    private func runLane(_ engine: EngineKind) async {
        let runner = JobRunner(
            journal: self.journal,
            logger: self.logger,
            events: self.events,
            cancellations: self.cancellations,
            watchedFolders: self.watchedFolders,
            retryLimit: self.settings.retryLimit,
            clock: self.clock
        )
        var worker: WorkerProcess?
        await withDiscardingTaskGroup { commits in
            // The last job's cores go back to the budget when the lane asks for its next one.
            var finished: Job?
            while let job = await self.next(for: engine, releasing: finished, worker: &worker) {
                if let current = worker, current.isDead || current.jobCount >= self.settings.workerJobs {
                    await self.retire(current, engine: engine)
                    worker = nil
                }
                var launchFailure: ConversionFailure?
                if worker == nil {
                    do throws(ConversionFailure) {
                        worker = try await WorkerProcess(launcher: self.launcher, engine: engine, logger: self.logger)
                        self.workers.started(engine)
                    } catch {
                        launchFailure = error
                    }
                }
                // A request cancels this job by killing its worker, as the job's watchdog does; the runner then
                // records it as cancelled on request, and the lane starts a new worker for its next job.
                if let pid = worker?.pid {
                    self.cancellations.register(job.id) { kill(pid, SIGKILL) }
                }
                let conversion = await runner.convert(job, worker: worker, launchFailure: launchFailure)
                self.cancellations.unregister(job.id)
                // The worker is done with the job: its cores are free for the lane's next job while the output is
                // renamed into place.
                finished = job
                switch conversion {
                case .ended(let outcome):
                    await self.finish(job, outcome)
                case .converted(let pending):
                    if let cpuSeconds = pending.cpuSeconds { await self.queue.learn(job, cpuSeconds: cpuSeconds) }
                    // The worker takes its next job while this output is renamed into place and its sidecar written.
                    commits.addTask { await self.finish(job, await runner.commit(pending)) }
                }
            }
        }
        if let worker { await self.retire(worker, engine: engine) }
    }

    /// Ends a lane's worker, and counts it out of the census (as dead, if it had died).
    private func retire(_ worker: WorkerProcess, engine: EngineKind) async {
        let died = worker.isDead
        await worker.shutDown()
        self.workers.stopped(engine, died: died)
    }

    /// The lane's next job, or `nil` once the queue is closed. A lane with a worker waits `settings.workerIdle` at
    /// most, or until the queue finds its worker spare (``JobQueue/Turn/spare``): then the worker exits, giving its
    /// memory back, and the lane waits on without one.
    private func next(for engine: EngineKind, releasing finished: Job?, worker: inout WorkerProcess?) async -> Job? {
        guard let idle = worker else { return await self.queue.next(for: engine, releasing: finished) }
        let queue = self.queue
        let limit = self.settings.workerIdle
        let clock = self.clock
        let waited: LaneOutcome = await withTaskGroup(of: LaneWait.self) { group in
            group.addTask { .turn(await queue.nextTurn(for: engine, releasing: finished)) }
            group.addTask {
                try? await clock.sleep(limit)
                return .idle
            }
            let first = await group.next()
            group.cancelAll()
            switch first {
            case .turn(.job(let job)): return .job(job)
            case .turn(.closed), nil: return .job(nil)
            case .turn(.spare), .idle:
                // Stop waiting, unless a job reached the lane meanwhile.
                for await case .turn(.job(let job)) in group { return .job(job) }
                guard case .idle = first else { return .stop(.spare) }
                return .stop(.idle)
            }
        }
        let reason: IdleWorker
        switch waited {
        case .job(let job): return job
        case .stop(let why): reason = why
        }
        self.logger.debug(
            "Idle worker stopped",
            metadata: [
                "engine": "\(engine.rawValue)", "worker.pid": "\(idle.pid)", "reason": "\(reason.rawValue)",
                "idle": "\(limit)",
            ]
        )
        await self.retire(idle, engine: engine)
        worker = nil
        return await queue.next(for: engine, releasing: nil)
    }

    /// Releases a finished job's place in the queue and tells its completion sink how it ended. The last job of a burst gives
    /// back the memory the burst freed: glibc keeps freed heap pages for reuse, which after 10,000 small files were
    /// over half of the daemon's resident memory (docs/decisions.md, "Soak benchmark").
    private func finish(_ job: Job, _ outcome: JobOutcome) async {
        var event = JobEvent(ending: job, with: outcome)
        if case .postponed = outcome {
            // The intake decides when the file is tried again, which the event says.
            event.retryAt = await self.completions.jobFinished(job, outcome: outcome)
            self.events.publish(event)
            await self.queue.complete(job)
        } else {
            self.events.publish(event)
            await self.queue.complete(job)
            _ = await self.completions.jobFinished(job, outcome: outcome)
        }
        if await self.queue.counts == (queued: 0, running: 0) {
            chute_release_free_memory()
        }
    }
}

/// What a lane waiting for its next job saw first.
private enum LaneWait: Sendable {
    /// The queue's answer.
    case turn(JobQueue.Turn)
    /// The worker's idle time ran out.
    case idle
}

/// How a lane with a worker ended its wait.
private enum LaneOutcome {
    /// The job it got, or `nil` when the queue closed.
    case job(Job?)
    /// It stops its worker, and why.
    case stop(IdleWorker)
}

/// Why a lane stops its worker while it waits.
private enum IdleWorker: String {
    /// It had no job for `workerIdle`.
    case idle
    /// Jobs of its engine went to other lanes' workers (``JobQueue/Turn/spare``).
    case spare
}
