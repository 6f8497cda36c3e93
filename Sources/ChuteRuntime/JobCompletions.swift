import Foundation

/// What hears that a job ended: for a watched file the intake (which then knows the version handled, and when a
/// postponed file is tried again) and the source's disposal; for an upload nothing but its ticket, since the spool keeps
/// it for its retention.
package protocol JobCompletionSink: Sendable {
    /// Takes a job's outcome.
    ///
    /// - Returns: for a postponed job, when its file is tried again; otherwise `nil`.
    func jobFinished(_ job: Job, outcome: JobOutcome) async -> Date?
}

/// The runtime's one completion sink: it hands each ended job to the sink of its origin, then ends its ticket.
package struct JobCompletions: JobCompletionSink {
    private let watched: [any JobCompletionSink]
    private let tickets: JobTickets
    private let claims: JobClaims?
    private let hooks: HookRunner?

    /// - Parameters:
    ///   - watched: where jobs of watched files go, in order (the intake, then the source's disposal); none where
    ///     nothing is watched (`chute convert`).
    ///   - tickets: the tickets that each job's outcome ends.
    ///   - claims: an agent's claims on a shared queue, whose lane is free again once its job ended.
    ///   - hooks: what runs the rules' `run:` hooks, after the jobs of every origin.
    package init(
        watched: [any JobCompletionSink],
        tickets: JobTickets,
        claims: JobClaims? = nil,
        hooks: HookRunner? = nil
    ) {
        self.watched = watched
        self.tickets = tickets
        self.claims = claims
        self.hooks = hooks
    }

    package func jobFinished(_ job: Job, outcome: JobOutcome) async -> Date? {
        var retryAt: Date?
        switch job.origin {
        case .watched where job.handoff != nil:
            // Another agent found the file and keeps it: this agent's intake never saw it, and cannot reach it.
            break
        case .watched:
            for sink in self.watched {
                if let at = await sink.jobFinished(job, outcome: outcome) { retryAt = at }
            }
        case .command:
            // Its source is the user's to keep: nothing is moved, deleted or quarantined.
            break
        case .upload:
            // The spool keeps the upload and its outputs for their retention (UploadSpool.sweep), for download.
            break
        }
        await self.claims?.finished(job)
        await self.hooks?.jobFinished(job, outcome: outcome)
        self.tickets.end(job.id, with: outcome)
        return retryAt
    }
}
