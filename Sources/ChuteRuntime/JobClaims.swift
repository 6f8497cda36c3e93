import ChuteCore
import Logging
import ServiceLifecycle

/// An agent's side of a queue several agents share (``SharedQueue``): the jobs this agent found are offered to the
/// store, and it claims, of the offered jobs, as many as its lanes can start now, which then go to its local
/// ``JobQueue``; a heartbeat renews the leases of the jobs it holds.
///
/// An agent claims only jobs it offered itself: files it found (every agent watching a shared folder finds the same
/// files and offers the same jobs, which the store holds once), its uploads and its commands. Of those, it claims
/// only for lanes it has free, so that the agent with work to spare leaves the rest to the others.
///
/// A job whose lease this agent lost (the heartbeat says another agent holds it, or the store could not be reached for
/// a whole lease) is withdrawn from the local queue, or its conversion is cancelled: the store refuses every write of
/// it from this agent anyway (``LeaseLost``), and the runner then publishes nothing. Cut off from the store, the agent
/// claims nothing until it answers again.
///
/// It runs as a service that goes on until its graceful shutdown, which should come after the runtime's: the leases
/// of the jobs that finish during the grace period are renewed until the end.
package actor JobClaims: Service {
    /// A job offered and not claimed yet by this agent.
    private struct Offered {
        var job: Job
        var demand: JobDemand
    }

    private let store: any SharedQueue
    private let queue: JobQueue
    private let tickets: JobTickets
    private let cancellations: JobCancellations
    private let lanes: [EngineKind: Int]
    private let logger: Logger
    private let clock: RuntimeClock
    /// The polling interval, for when the store's notifications do not come.
    private let poll: Duration
    private var offered: [String: Offered] = [:]
    /// The jobs claimed and handed to the local queue, with their lanes, until they end here.
    private var handed: [String: EngineKind] = [:]
    /// Whether the store has not answered a renewal for a whole lease.
    private var cutOff = false
    /// Whether the local queue closed: nothing more is claimed.
    private var closed = false
    private var lastReclaim: Duration?
    private var lastSettledCheck: Duration?
    /// For an agent that watches no folder: the rules whose jobs it claims though it did not find their files, and
    /// how it makes such a job (`nil`: the file is not there, at its version, for this agent).
    private var adopting: (rules: [String], make: @Sendable (SharedClaim) async -> Job?)?
    /// For such an agent: what fetches a file it cannot see from the agent that found it, and makes its job.
    private var fetcher: HandoffFetcher?
    /// Jobs found elsewhere that this agent could not make: never claimed again.
    private var unadoptable: Set<String> = []
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// - Parameters:
    ///   - lanes: each engine's number of lanes: how many of its jobs this agent holds at most.
    ///   - poll: how often the store is looked at when no notification comes.
    package init(
        store: any SharedQueue,
        queue: JobQueue,
        tickets: JobTickets,
        cancellations: JobCancellations,
        lanes: [EngineKind: Int],
        logger: Logger,
        clock: RuntimeClock = .system,
        poll: Duration = .seconds(2)
    ) {
        self.store = store
        self.queue = queue
        self.tickets = tickets
        self.cancellations = cancellations
        self.lanes = lanes
        self.logger = logger
        self.clock = clock
        self.poll = poll
        (self.wakeups, self.wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Offers a job to the shared queue (``JobSubmitter/submit(_:)`` in an agent): it takes the id of the store's job
    /// for its source's version when another agent offered it first.
    ///
    /// - Returns: its ticket; `nil` when the store cannot record it, or when another agent handled this version of
    ///   its source already.
    package func submit(_ job: Job) async -> JobTicket? {
        var job = job
        var logger = self.logger
        logger[metadataKey: "input.path"] = "\(LogText.escaped(job.source))"
        let demand = await self.queue.estimate(job)
        do {
            switch try await self.store.offer(job, cost: demand.cost) {
            case .over(let id):
                logger.info("Already handled by another agent", metadata: ["job.id": "\(id)"])
                return nil
            case .live(let id):
                job.id = id
            }
        } catch {
            logger.error(
                "Cannot offer the job to the store; the file is taken again at its next change or the next start",
                metadata: ["error": "\(LogText.escaped("\(error)"))"]
            )
            return nil
        }
        if let ticket = self.tickets.ticket(for: job.id) { return ticket }
        let ticket = self.tickets.issue(for: job.id)
        self.offered[job.id] = Offered(job: job, demand: demand)
        self.wake.yield()
        return ticket
    }

    /// Makes this agent, which watches no folder (`settings.watch: false`), claim the jobs of `rules` that other agents
    /// found, each made by `make` (``Intake/job(for:)``), which says `nil` for a file this agent cannot take.
    ///
    /// - Parameter fetcher: for a file this agent cannot see, what fetches it from the agent that found it, when that
    ///   agent gave its `agentURL`.
    package func adoptFilesFoundElsewhere(
        rules: [String],
        fetcher: HandoffFetcher? = nil,
        make: @escaping @Sendable (SharedClaim) async -> Job?
    ) {
        self.adopting = (rules, make)
        self.fetcher = fetcher
    }

    /// Takes an offered job that no agent claimed out of the queue on request, as cancelled.
    ///
    /// - Returns: the job, or `nil` when it is not waiting for a claim (this agent or another holds it).
    package func withdraw(_ jobID: String) async -> Job? {
        guard let entry = self.offered[jobID] else { return nil }
        do {
            guard try await self.store.withdraw(jobID) else { return nil }
        } catch {
            self.logger.error(
                "Cannot update the store",
                metadata: ["job.id": "\(jobID)", "error": "\(LogText.escaped("\(error)"))"]
            )
            return nil
        }
        self.offered[jobID] = nil
        self.tickets.end(jobID, with: .cancelledOnRequest)
        return entry.job
    }

    /// Records that a job this agent claimed ended here: its lane may claim another.
    package func finished(_ job: Job) {
        if let handoff = job.handoff { HandoffFetcher.remove(handoff) }
        guard self.handed.removeValue(forKey: job.id) != nil else { return }
        self.store.letGo(job.id)
        self.wake.yield()
    }

    /// How many jobs wait for a claim, and how many this agent holds.
    package var counts: (offered: Int, held: Int) { (self.offered.count, self.handed.count) }

    package func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.heartbeat() }
            // The store's notifications wake the claims at once, and the poll when they do not come.
            group.addTask {
                for await _ in self.store.notifications() { self.wake.yield() }
            }
            group.addTask {
                while (try? await self.clock.sleep(self.poll)) != nil { self.wake.yield() }
            }
            group.addTask {
                for await _ in self.wakeups {
                    await self.round()
                }
            }
            try? await gracefulShutdown()
            self.wake.finish()
            group.cancelAll()
        }
    }

    // MARK: Claims

    /// Takes back the jobs of agents whose lease ran out, forgets offered jobs that ended elsewhere, and claims what
    /// the free lanes can start.
    private func round() async {
        await self.reclaim()
        await self.dropSettled()
        guard !self.closed, !self.cutOff else { return }
        var limits: [EngineKind: Int] = [:]
        for (engine, count) in self.lanes {
            let free = count - self.handed.values.count { $0 == engine }
            if free > 0 { limits[engine] = free }
        }
        let candidates = self.offered.filter { limits[$0.value.job.engine] != nil }.map(\.key)
        guard !candidates.isEmpty || self.adopting != nil else { return }
        let claimed: [SharedClaim]
        do {
            claimed = try await self.store.claim(
                among: candidates,
                foundElsewhere: self.adopting?.rules ?? [],
                excluding: Array(self.unadoptable),
                limits: limits,
                agingLimit: self.queue.budget.agingLimit
            )
        } catch {
            self.logger.error("Cannot claim jobs", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            return
        }
        for claim in claimed {
            let id = claim.id
            var entry: Offered
            if let offered = self.offered.removeValue(forKey: id) {
                entry = offered
            } else if let adopting = self.adopting, let job = await adopting.make(claim) {
                entry = Offered(job: job, demand: await self.queue.estimate(job))
                self.logger.debug("Job of a file another agent found", metadata: ["job.id": "\(id)"])
            } else if self.adopting != nil, let fetcher = self.fetcher, let ticket = claim.handoff {
                // Not to be seen here: fetched from the agent that found it, its lane held meanwhile.
                self.handed[id] = claim.lane
                Task { await self.fetched(claim, await fetcher.job(for: claim, ticket: ticket)) }
                continue
            } else {
                // Withdrawn while the claim was made, or a file this agent cannot take.
                if self.adopting != nil { self.unadoptable.insert(id) }
                await self.giveBack(id)
                continue
            }
            self.handed[id] = entry.job.engine
            entry.job.claim = JobClaim(agent: self.store.agent, token: claim.token)
            guard await self.queue.submit(entry.job, demand: entry.demand) else {
                // The queue closed (shutdown), or the same source runs here already.
                self.handed[id] = nil
                self.closed = await self.queue.isClosed
                await self.giveBack(id)
                self.offered[id] = entry
                continue
            }
            self.logger.debug("Job claimed", metadata: ["job.id": "\(id)", "agent": "\(self.store.agent)"])
        }
    }

    /// Queues here the job of a file fetched from the agent that found it (``HandoffFetcher``), or gives the claim
    /// back when the file could not be had.
    private func fetched(_ claim: SharedClaim, _ job: Job?) async {
        let id = claim.id
        guard var job, self.handed[id] != nil else {
            if let handoff = job?.handoff { HandoffFetcher.remove(handoff) }
            if self.handed.removeValue(forKey: id) != nil {
                self.unadoptable.insert(id)
                await self.giveBack(id)
            }
            self.wake.yield()
            return
        }
        job.claim = JobClaim(agent: self.store.agent, token: claim.token)
        guard await self.queue.submit(job, demand: await self.queue.estimate(job)) else {
            self.handed[id] = nil
            self.closed = await self.queue.isClosed
            if let handoff = job.handoff { HandoffFetcher.remove(handoff) }
            await self.giveBack(id)
            return
        }
        self.logger.debug("Job claimed", metadata: ["job.id": "\(id)", "agent": "\(self.store.agent)"])
    }

    private func giveBack(_ id: String) async {
        do {
            try await self.store.release(id)
        } catch {
            self.logger.error(
                "Cannot give a job back; its lease runs out instead",
                metadata: ["job.id": "\(id)", "error": "\(LogText.escaped("\(error)"))"]
            )
        }
        self.store.letGo(id)
    }

    /// Puts back in the queue, at most once a third of a lease, the jobs of agents whose lease ran out.
    private func reclaim() async {
        let now = self.clock.now()
        if let last = self.lastReclaim, now - last < self.store.lease / 3 { return }
        self.lastReclaim = now
        do {
            for (id, agent) in try await self.store.reclaimExpired() {
                self.logger.warning(
                    "Job taken back from an agent whose lease ran out",
                    metadata: ["job.id": "\(id)", "agent": "\(agent)"]
                )
            }
            let commits = try await self.store.takeOverCommits()
            guard !commits.isEmpty else { return }
            // Their outputs were converted and synced: found in place, they get their sidecars; not, they run again.
            let summary = try await JobRecovery.run(self.store, jobs: commits.map(\.job))
            for (job, agent) in commits {
                self.logger.warning(
                    "Commit of an agent whose lease ran out taken over",
                    metadata: ["job.id": "\(job.id)", "agent": "\(agent)"]
                )
            }
            self.logger.info(
                "Commits taken over settled",
                metadata: [
                    "completed": "\(summary.completed)", "unpublished": "\(summary.unpublished)",
                    "withdrawn": "\(summary.withdrawn)",
                ]
            )
            for (job, _) in commits { self.store.letGo(job.id) }
        } catch {
            self.logger.debug("Cannot take back expired leases", metadata: ["error": "\(LogText.escaped("\(error)"))"])
        }
    }

    /// Forgets, at most once a poll, the offered jobs that ended on another agent, or went from the store, and ends
    /// their tickets: a round for each notification would ask for every offered job again and again.
    private func dropSettled() async {
        guard !self.offered.isEmpty else { return }
        let now = self.clock.now()
        if let last = self.lastSettledCheck, now - last < self.poll { return }
        self.lastSettledCheck = now
        let settled: [String: StoredOutcome?]
        do {
            settled = try await self.store.settled(among: Array(self.offered.keys))
        } catch {
            return
        }
        for (id, outcome) in settled where self.offered.removeValue(forKey: id) != nil {
            let ended: JobOutcome =
                switch outcome {
                case .completed(let output)?: .completed(output)
                case .failed(let failure)?:
                    .failed(failure ?? ConversionFailure(.internalError, "failed on another agent"))
                case .cancelled?: .cancelledOnRequest
                case nil: .handedOver
                }
            self.tickets.end(id, with: ended)
        }
    }

    // MARK: Leases

    /// Renews the leases every third of a lease; a job whose lease was lost is given up here.
    private func heartbeat() async {
        var renewed = self.clock.now()
        while !Task.isCancelled {
            do {
                try await self.clock.sleep(self.store.lease / 3)
            } catch {
                return
            }
            do {
                let lost = try await self.store.renew()
                renewed = self.clock.now()
                if self.cutOff {
                    self.cutOff = false
                    self.logger.notice("The store answers again; jobs are claimed again")
                    self.wake.yield()
                }
                for id in lost { await self.lose(id, why: "another agent holds it now, or it ended there") }
            } catch {
                guard !self.cutOff, self.clock.now() - renewed >= self.store.lease else { continue }
                self.cutOff = true
                self.logger.error(
                    """
                    Cut off from the store for a whole lease: the jobs held here are given up, and none is claimed \
                    until it answers again
                    """,
                    metadata: ["held": "\(self.handed.count)", "error": "\(LogText.escaped("\(error)"))"]
                )
                for id in self.handed.keys { await self.lose(id, why: "cut off from the store past the lease") }
            }
        }
    }

    /// Gives up a job whose lease was lost: out of the local queue, or its conversion cancelled.
    private func lose(_ id: String, why: String) async {
        guard self.handed[id] != nil else { return }
        self.logger.warning(
            "Lease lost; the job is left to the store",
            metadata: ["job.id": "\(id)", "reason": "\(why)"]
        )
        if let job = await self.queue.withdraw(id) {
            self.finished(job)
            self.tickets.end(id, with: .handedOver)
        } else {
            // Running: its worker is killed, and the runner records and publishes nothing of it.
            _ = self.cancellations.cancel(id)
        }
    }
}
