import Synchronization

/// A submitted job's claim check: its id, and its outcome once it ends, which any number of tasks may await.
///
/// The outcome is kept by the ticket, not sent: a job that ends before anyone awaits it loses nothing, and a waiter
/// that comes late gets it at once.
package final class JobTicket: Sendable {
    private enum State {
        case pending([Int: CheckedContinuation<JobOutcome, any Error>])
        case ended(JobOutcome)
    }

    /// The job's id, as the store, the sidecar and the log know it.
    package let jobID: String
    private let state = Mutex(State.pending([:]))
    private let nextWaiter = Atomic<Int>(0)

    init(jobID: String) {
        self.jobID = jobID
    }

    /// The job's outcome, now if it has ended, else once it does.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled first (the job goes on).
    package func outcome() async throws -> JobOutcome {
        let waiter = self.nextWaiter.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ended: JobOutcome? = self.state.withLock { state in
                    switch state {
                    case .ended(let outcome):
                        return outcome
                    case .pending(var waiters):
                        guard !Task.isCancelled else {
                            continuation.resume(throwing: CancellationError())
                            return nil
                        }
                        waiters[waiter] = continuation
                        state = .pending(waiters)
                        return nil
                    }
                }
                if let ended { continuation.resume(returning: ended) }
            }
        } onCancel: {
            let cancelled: CheckedContinuation<JobOutcome, any Error>? = self.state.withLock { state in
                guard case .pending(var waiters) = state, let continuation = waiters.removeValue(forKey: waiter)
                else { return nil }
                state = .pending(waiters)
                return continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// The outcome, if the job has ended.
    package var ended: JobOutcome? {
        self.state.withLock { state in
            guard case .ended(let outcome) = state else { return nil }
            return outcome
        }
    }

    /// Ends the ticket with `outcome` and wakes its waiters; a second call is ignored.
    func end(with outcome: JobOutcome) {
        let waiters: [CheckedContinuation<JobOutcome, any Error>] = self.state.withLock { state in
            guard case .pending(let waiters) = state else { return [] }
            state = .ended(outcome)
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}

/// The tickets of the jobs submitted and not yet ended, by job id.
///
/// A ticket leaves the register when its job ends; whoever holds it still has the outcome, and a job looked up by id
/// after that is the store's (``JobStore/entry(_:)``). So the register holds only live jobs, however long the daemon
/// runs.
package final class JobTickets: Sendable {
    private let live = Mutex<[String: JobTicket]>([:])

    package init() {}

    /// A new ticket for a job about to be submitted.
    package func issue(for jobID: String) -> JobTicket {
        let ticket = JobTicket(jobID: jobID)
        self.live.withLock { $0[jobID] = ticket }
        return ticket
    }

    /// The ticket of a job that has not ended, or `nil`.
    package func ticket(for jobID: String) -> JobTicket? {
        self.live.withLock { $0[jobID] }
    }

    /// How many jobs have a ticket and have not ended.
    package var count: Int { self.live.withLock { $0.count } }

    /// Ends a job's ticket with its outcome, and takes it out of the register.
    package func end(_ jobID: String, with outcome: JobOutcome) {
        self.live.withLock { $0.removeValue(forKey: jobID) }?.end(with: outcome)
    }
}
