import ChuteCore
import Logging

/// The one way a job enters the runtime, whatever its origin: it is recorded in the store as `queued` (so that a
/// kill before it starts loses nothing), given a ticket, then handed to the queue.
package struct JobSubmitter: Sendable {
    private let store: any JobStore
    private let queue: JobQueue
    private let tickets: JobTickets
    private let claims: JobClaims?
    private let logger: Logger

    /// - Parameters:
    ///   - tickets: where the ticket of each job submitted waits for its outcome (``JobCompletions`` ends it).
    ///   - claims: an agent's claims on a queue that several agents share: the jobs are offered to it, and reach the
    ///     local queue once claimed; `nil` for a store of one daemon.
    package init(store: any JobStore, queue: JobQueue, tickets: JobTickets, claims: JobClaims? = nil, logger: Logger) {
        self.store = store
        self.queue = queue
        self.tickets = tickets
        self.claims = claims
        self.logger = logger
    }

    /// Submits a job.
    ///
    /// A store that cannot record it is logged, and the job is queued all the same: its start records it again, and
    /// fails it with a sidecar saying why if the store still cannot.
    ///
    /// - Returns: its ticket, or `nil` when the queue refused it (closed, or the same source already queued or
    ///   running); a refused job leaves no record.
    package func submit(_ job: Job) async -> JobTicket? {
        if let claims = self.claims { return await claims.submit(job) }
        var accepted = true
        do {
            try await self.store.accept(job)
        } catch {
            accepted = false
            self.logger.error(
                "Cannot record the job",
                metadata: ["job.id": "\(job.id)", "error": "\(LogText.escaped("\(error)"))"]
            )
        }
        // Before the queue has it: a lane may start and end it before `submit` returns.
        let ticket = self.tickets.issue(for: job.id)
        guard await self.queue.submit(job) else {
            self.tickets.end(job.id, with: .cancelled)
            if accepted {
                do {
                    try await self.store.forget(job.id)
                } catch {
                    self.logger.error(
                        "Cannot update the journal",
                        metadata: ["job.id": "\(job.id)", "error": "\(LogText.escaped("\(error)"))"]
                    )
                }
            }
            return nil
        }
        return ticket
    }

    /// Whether a job submitted here has not ended yet: queued, between the queue and its worker, or converting.
    package func isLive(_ jobID: String) -> Bool {
        self.tickets.ticket(for: jobID) != nil
    }

    /// Why a job withdrawn before it started ended.
    package static let withdrawal = ConversionFailure(.cancelled, "cancelled on request before it started")

    /// Takes a queued job out of the queue on request: its record says `cancelled`, so that a restart does not take
    /// the same version of its source either, and its ticket ends as cancelled on request.
    ///
    /// - Returns: the job, or `nil` when it is not queued.
    package func withdraw(_ jobID: String) async -> Job? {
        if let job = await self.claims?.withdraw(jobID) { return job }
        guard let job = await self.queue.withdraw(jobID) else { return nil }
        do {
            try await self.store.cancel(job.id, reason: Self.withdrawal, sidecar: nil)
        } catch {
            self.logger.error(
                "Cannot update the journal",
                metadata: ["job.id": "\(job.id)", "error": "\(LogText.escaped("\(error)"))"]
            )
        }
        await self.claims?.finished(job)
        self.tickets.end(job.id, with: .cancelledOnRequest)
        return job
    }
}
