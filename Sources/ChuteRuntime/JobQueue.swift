import ChuteCore
import Logging
import SystemPackage

/// The in-memory queue of jobs: one lane per engine, with one CPU and memory budget across the lanes, cheap jobs
/// first (``JobSchedule``), and the per-rule concurrency limits applied when a lane is handed work.
///
/// A source path is never queued twice at once: ``submit(_:)`` refuses a path that is already queued or running.
package actor JobQueue {
    private enum State {
        case accepting
        case closed
    }

    private var state = State.accepting
    private var schedule: JobSchedule
    private var activePaths: Set<FilePath> = []
    private var waiters: [EngineKind: [Waiter]] = [:]
    private var nextWaiterID = 0
    private var running = 0
    /// The budget shared by every lane.
    package nonisolated let budget: SchedulerBudget
    /// What each queued job that would be next but for the budget last waited for, by job id: logged once per
    /// reason rather than at every take, and shown by ``budgetStatus``.
    private var waits: [String: JobSchedule.Wait] = [:]
    /// What similar jobs cost against their estimates, which refines each new job's.
    private var costs: CostHistory
    /// The factor of ``costs`` that the queued jobs of each rule and engine were priced with, and how many of them are
    /// queued. It holds while any of them waits: a factor that moves between two arrivals must not make the later of
    /// two alike jobs look cheaper and go first, again and again (16 clients uploading photos saw 1.6 s waits), so jobs
    /// of one rule keep the order their sizes give, and the next burst is priced anew.
    private var pricing: [CostHistory.Key: (factor: Double?, queued: Int)] = [:]
    private let logger: Logger?

    /// What a lane with a worker running gets from ``nextTurn(for:releasing:)``.
    package enum Turn: Sendable {
        /// The job to run, now counted as running.
        case job(Job)
        /// The lane's worker is spare: a job of its engine went to another lane after this one had waited a while, or
        /// the engine's next job waits for the budget while another lane of the engine runs a job (whose worker takes
        /// that next job when it is done). The budget or the arrivals keep fewer of the engine's jobs running than it
        /// has lanes; the lane stops its worker and waits on without one.
        case spare
        /// The queue is closed, or the wait was cancelled.
        case closed
    }

    /// How long a lane with a worker waits before a job given to another lane of its engine makes its worker spare.
    private let spareAfter: Duration

    /// A lane waiting in ``next(for:releasing:)`` or ``nextTurn(for:releasing:)``.
    private struct Waiter {
        var id: Int
        /// Whether the lane has a worker running.
        var warm: Bool
        /// When it began to wait, on ``clock``.
        var since: Duration
        var continuation: CheckedContinuation<Turn, Never>
    }

    private let events: JobEvents
    /// The time of the ageing limit and of spare workers.
    private let clock: RuntimeClock

    /// - Parameters:
    ///   - budget: the cores and memory the running jobs share, and the ageing limit.
    ///   - logger: where jobs waiting for the budget are logged, and why.
    ///   - events: where each job's `queued` event goes, before any lane can start it.
    ///   - costs: what earlier jobs cost against their estimates (from the journal), which refines the estimates.
    ///   - spareAfter: how long a lane with a worker waits before a job given to another lane of its engine makes
    ///     its worker spare (``Turn/spare``).
    ///   - clock: the time of the ageing limit and of `spareAfter` (``RuntimeClock/system`` but in tests).
    package init(
        budget: SchedulerBudget = .unlimited,
        logger: Logger? = nil,
        events: JobEvents = JobEvents(),
        costs: CostHistory = CostHistory(),
        spareAfter: Duration = .seconds(1),
        clock: RuntimeClock = .system
    ) {
        self.budget = budget
        self.clock = clock
        self.spareAfter = spareAfter
        self.costs = costs
        self.schedule = JobSchedule(budget: budget)
        self.logger = logger
        self.events = events
    }

    /// Estimates a job's demand from its file's headers (``JobDemand``), refines its cost by what similar jobs took
    /// (``CostHistory``), then adds it to the queue.
    ///
    /// - Returns: `false` when the queue is closed or the same source is already queued or running.
    @discardableResult
    package nonisolated func submit(_ job: Job) async -> Bool {
        await self.submit(job, demand: await self.estimate(job))
    }

    /// What the cost model makes of a job from its file's headers (``JobDemand``), before the history refines it.
    package nonisolated func estimate(_ job: Job) async -> JobDemand {
        let threads = self.budget.threads(job.engine)
        let (source, root, sniffed, size) = (job.source, job.root, job.sniffed, job.fingerprint.size)
        return await Blocking.run {
            let header = sniffed.map { SourceInspector.header(of: source, type: $0, beneath: root) } ?? MediaHeader()
            return JobDemand.estimate(category: sniffed?.category, size: size, header: header, threads: threads)
        }
    }

    /// Adds a job whose demand the model estimated (``estimate(_:)``), its cost refined by the history.
    ///
    /// - Returns: `false` when the queue is closed or the same source is already queued or running.
    package func submit(_ job: Job, demand estimated: JobDemand) -> Bool {
        guard case .accepting = self.state, !self.activePaths.contains(job.source) else { return false }
        var job = job
        job.estimatedCost = estimated.cost
        var demand = estimated
        let key = CostHistory.Key(job)
        let factor: Double?
        if let priced = self.pricing[key] {
            factor = priced.factor
            self.pricing[key]?.queued += 1
        } else {
            factor = self.costs.factor(for: key)
            self.pricing[key] = (factor, 1)
        }
        if let factor { demand.cost *= factor }
        self.activePaths.insert(job.source)
        self.schedule.enqueue(job, demand: demand, at: self.clock.now())
        var metadata: Logger.Metadata = [
            "job.id": "\(job.id)", "cost": "\(Self.rounded(demand.cost))", "cpu": "\(demand.cpu)",
            "memory": "\(demand.memory)",
        ]
        if let factor {
            metadata["cost.model"] = "\(Self.rounded(estimated.cost))"
            metadata["cost.factor"] = "\(Self.rounded(factor))"
        }
        self.logger?.debug("Job cost estimated", metadata: metadata)
        self.events.publish(JobEvent(.queued, of: job))
        self.dispatch()
        return true
    }

    /// Waits for the next job of a lane that the budget and its rule's limit allow to start.
    ///
    /// An engine's job goes to the lane of that engine that waited last among those with a worker running, else to
    /// the one that has waited longest: the worker that has just finished a job takes the next. Lanes with a worker
    /// that a job passes over once they have waited `spareAfter` are told their worker is spare
    /// (``nextTurn(for:releasing:)``), so that no more workers stay up than the jobs keep busy.
    ///
    /// - Parameter finished: the lane's last job, whose worker is done with it: its cores go back to the budget now,
    ///   while the lane waits, so that the next job is chosen among every waiting lane, this one included. Given back
    ///   any earlier, they would go to whatever another lane waits for, even a dearer job than this lane's next.
    /// - Returns: the job, now counted as running; `nil` once the queue is closed or the calling task is cancelled
    ///   (a lane whose service is cancelled outright must end, not wait for a job or a close that never come).
    package func next(for engine: EngineKind, releasing finished: Job? = nil) async -> Job? {
        guard case .job(let job) = await self.wait(for: engine, releasing: finished, warm: false) else { return nil }
        return job
    }

    /// Waits, as ``next(for:releasing:)`` does, for the next job of a lane whose worker is running; or until jobs of
    /// its engine go to other lanes and its worker is spare.
    package func nextTurn(for engine: EngineKind, releasing finished: Job? = nil) async -> Turn {
        await self.wait(for: engine, releasing: finished, warm: true)
    }

    private func wait(for engine: EngineKind, releasing finished: Job?, warm: Bool) async -> Turn {
        if let finished { self.schedule.release(finished) }
        guard !Task.isCancelled, case .accepting = self.state else { return .closed }
        let id = self.nextWaiterID
        self.nextWaiterID += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let waiter = Waiter(id: id, warm: warm, since: self.clock.now(), continuation: continuation)
                self.waiters[engine, default: []].append(waiter)
                // The schedule picks among every waiting lane: the cheapest job may be another lane's, and so may a
                // job the ageing limit keeps the budget for.
                self.dispatch()
            }
        } onCancel: {
            // Runs on the cancelling thread: the waiter is removed on the actor, after it was added (the actor runs
            // the code above without suspending until the continuation is stored).
            Task { await self.endWait(id, engine: engine) }
        }
    }

    /// Ends the wait of a lane whose task was cancelled, unless a job or a close reached it first.
    private func endWait(_ id: Int, engine: EngineKind) {
        guard let index = self.waiters[engine]?.firstIndex(where: { $0.id == id }) else { return }
        self.waiters[engine]!.remove(at: index).continuation.resume(returning: .closed)
    }

    /// Records that a job handed out by ``next(for:releasing:)`` is over: its source may be queued again, and its
    /// memory and its place in its rule's limit are given back. Its cores are given back by its lane, when it asks for
    /// its next job.
    package func complete(_ job: Job) {
        self.activePaths.remove(job.source)
        self.schedule.end(job)
        self.running -= 1
        // A finished job may unblock a job of its rule, or one waiting for memory.
        self.dispatch()
    }

    /// Records the CPU time a job's conversion took, for the estimates of the jobs of its rule and engine queued once
    /// none of them waits (``pricing``).
    package func learn(_ job: Job, cpuSeconds: Double) {
        guard let estimate = job.estimatedCost else { return }
        self.costs.record(CostHistory.Sample(estimate: estimate, cpuSeconds: cpuSeconds), for: CostHistory.Key(job))
    }

    /// Takes a queued job out of its lane, as a request to cancel it does.
    ///
    /// - Returns: the job, or `nil` when no queued job has this id (it may be running already).
    package func withdraw(_ jobID: String) -> Job? {
        guard let job = self.schedule.remove(jobID: jobID) else { return nil }
        self.activePaths.remove(job.source)
        self.waits[jobID] = nil
        self.leftQueue(job)
        return job
    }

    /// Counts a job out of its rule and engine's queued jobs, whose price holds no longer once none waits.
    private func leftQueue(_ job: Job) {
        let key = CostHistory.Key(job)
        guard let priced = self.pricing[key] else { return }
        self.pricing[key] = priced.queued > 1 ? (priced.factor, priced.queued - 1) : nil
    }

    /// Whether a source is queued or running.
    package func isActive(_ source: FilePath) -> Bool {
        self.activePaths.contains(source)
    }

    /// Whether the queue stopped handing out work (``close()``).
    package var isClosed: Bool {
        if case .closed = self.state { return true }
        return false
    }

    /// How many jobs are waiting and how many are running.
    package var counts: (queued: Int, running: Int) {
        (self.schedule.queuedCount, self.running)
    }

    /// How many jobs each engine's lanes have queued; an engine with none is left out.
    package var queuedPerLane: [EngineKind: Int] { self.schedule.queuedPerLane }

    /// How many lanes are waiting for work.
    package var waitingLanes: Int {
        self.waiters.values.reduce(0) { $0 + $1.count }
    }

    /// Stops handing out work: queued jobs are dropped (they are found again at the next start) and every waiting
    /// lane gets `nil`. Running jobs are not touched.
    package func close() {
        self.state = .closed
        for job in self.schedule.removeAll() { self.activePaths.remove(job.source) }
        self.waits = [:]
        for waiter in self.waiters.values.joined() { waiter.continuation.resume(returning: .closed) }
        self.waiters = [:]
    }

    /// The cores and memory the running jobs hold, against the budget.
    package var budgetInUse: (cpu: Int, memory: Int64) {
        (self.schedule.cpuInUse, self.schedule.memoryInUse)
    }

    /// The budget, what the running jobs hold of it, and the queued jobs that would start next but for it, with what
    /// each waits for.
    package var budgetStatus: BudgetStatus {
        BudgetStatus(
            cpu: self.budget.cpu,
            cpuInUse: self.schedule.cpuInUse,
            memory: self.budget.memory,
            memoryInUse: self.schedule.memoryInUse,
            waiting: self.waits.sorted { $0.key < $1.key }.map { id, wait in
                switch wait {
                case .cpu(let needed, let free):
                    BudgetStatus.Waiting(job: id, resource: "cpu", needed: Int64(needed), free: Int64(free))
                case .memory(let needed, let free):
                    BudgetStatus.Waiting(job: id, resource: "memory", needed: needed, free: free)
                }
            }
        )
    }

    /// Hands jobs to waiting lanes for as long as the schedule starts one.
    private func dispatch() {
        guard case .accepting = self.state else { return }
        let now = self.clock.now()
        while true {
            let idle = Set(self.waiters.compactMap { $0.value.isEmpty ? nil : $0.key })
            guard !idle.isEmpty else { return }
            let (taken, waits) = self.schedule.take(idle: idle, at: now)
            for (job, wait) in waits {
                self.announce(job, wait)
                // The engine's next job waits for the budget, and a lane of the engine that runs a job takes it when
                // its job is done: the workers of the engine's waiting lanes are spare.
                if self.schedule.holdsCPU(job.engine) { self.releaseSpare(job.engine) { _ in true } }
            }
            guard let job = taken else { return }
            self.waits[job.id] = nil
            self.leftQueue(job)
            self.running += 1
            let lanes = self.waiters[job.engine]!
            let index = lanes.lastIndex { $0.warm } ?? lanes.startIndex
            self.waiters[job.engine]!.remove(at: index).continuation.resume(returning: .job(job))
            // The lanes with a worker that this job passed over after they had waited a while.
            self.releaseSpare(job.engine) { now - $0.since >= self.spareAfter }
        }
    }

    /// Tells the waiting lanes of `engine` that have a worker and are `spare` that their worker is.
    private func releaseSpare(_ engine: EngineKind, where spare: (Waiter) -> Bool) {
        guard let lanes = self.waiters[engine] else { return }
        var waiting: [Waiter] = []
        for lane in lanes {
            if lane.warm && spare(lane) {
                lane.continuation.resume(returning: .spare)
            } else {
                waiting.append(lane)
            }
        }
        self.waiters[engine] = waiting
    }

    /// Records what a job waits for, and logs it once per reason.
    private func announce(_ job: Job, _ wait: JobSchedule.Wait) {
        let previous = self.waits.updateValue(wait, forKey: job.id)
        switch (previous, wait) {
        case (.cpu?, .cpu), (.memory?, .memory): return
        default: break
        }
        guard let logger = self.logger else { return }
        var metadata: Logger.Metadata = ["job.id": "\(job.id)", "engine": "\(job.engine.rawValue)"]
        switch wait {
        case .cpu(let needed, let free):
            metadata["cpu.needed"] = "\(needed)"
            metadata["cpu.free"] = "\(free)"
            metadata["cpu.budget"] = "\(self.budget.cpu)"
            // Common whenever more work is queued than cores: for debugging the order, not for the operator.
            logger.debug("Job waits for the CPU budget", metadata: metadata)
        case .memory(let needed, let free):
            metadata["memory.needed"] = "\(needed)"
            metadata["memory.free"] = "\(free)"
            metadata["memory.budget"] = "\(self.budget.memory)"
            logger.info("Job waits for the memory budget", metadata: metadata)
        }
    }

    private static func rounded(_ seconds: Double) -> Double {
        (seconds * 1000).rounded() / 1000
    }
}

/// The scheduler's budget as the status API shows it (``JobQueue/budgetStatus``).
package struct BudgetStatus: Codable, Sendable, Equatable {
    /// A queued job that would start next but for the budget.
    package struct Waiting: Codable, Sendable, Equatable {
        /// The job's id.
        package var job: String
        /// `cpu` or `memory`.
        package var resource: String
        /// What the job needs of it: cores, or bytes.
        package var needed: Int64
        /// What is free of it beside the running jobs.
        package var free: Int64
    }

    /// Cores (`cpuBudget`).
    package var cpu: Int
    /// Cores the running jobs hold.
    package var cpuInUse: Int
    /// Bytes (`memoryBudget`).
    package var memory: Int64
    /// Bytes the running jobs hold (their estimates).
    package var memoryInUse: Int64
    /// The jobs waiting for the budget, by id.
    package var waiting: [Waiting]
}
