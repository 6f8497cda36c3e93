import ChuteCore
import Foundation
import SystemPackage

/// A store whose queue several agents share (``JobStore`` in PostgreSQL): each agent offers the jobs it found, and
/// claims, under a lease, those it can start now; ``JobClaims`` is the agent's side.
///
/// A claim is leased: the agent renews it while the job runs, and once it runs out (the agent was killed, paused or cut
/// off) the job goes back to the queue for another agent, with a new lease. Every write of the job's progress carries
/// its lease's token, so that an agent that lost the lease can record nothing of the job any more (fencing): the store
/// throws ``LeaseLost``.
package protocol SharedQueue: JobStore {
    /// This agent's name, which the jobs it claims carry.
    var agent: String { get }
    /// How long a claim holds without being renewed.
    var lease: Duration { get }

    /// Records a job as queued for whichever agent claims it first, unless the store holds a job for this version of
    /// its source already (another agent found it first): that one is adopted.
    ///
    /// - Parameters:
    ///   - cost: the cost model's estimate, which orders the claims as the local scheduler orders its jobs.
    /// - Returns: the id the job has in the store (its own, or the earlier job's), and whether that job is over.
    func offer(_ job: Job, cost: Double) async throws -> SharedOffer

    /// Claims queued jobs among `ids`, and of watched files that other agents found, those of the rules `rules`; for
    /// each lane at most its count in `limits`, the cheapest first but those that waited `agingLimit` before all; each
    /// comes with a lease.
    ///
    /// - Parameter excluded: jobs never to claim (files this agent cannot see).
    func claim(
        among ids: [String],
        foundElsewhere rules: [String],
        excluding excluded: [String],
        limits: [EngineKind: Int],
        agingLimit: Duration
    ) async throws -> [SharedClaim]

    /// Gives back to the queue a claimed job that this agent does not start after all.
    func release(_ jobID: String) async throws

    /// Takes a job that no agent has claimed out of the queue on request, as cancelled.
    ///
    /// - Returns: `false` when an agent claimed it meanwhile, or it is over.
    func withdraw(_ jobID: String) async throws -> Bool

    /// Renews the leases of the jobs this agent holds, once, without waiting for a lost connection to come back.
    ///
    /// - Returns: the ids of the jobs whose lease this agent lost (another agent holds them now, or they are over).
    /// - Throws: when the store cannot be reached.
    func renew() async throws -> [String]

    /// Puts back in the queue the claimed and running jobs whose lease ran out.
    ///
    /// - Returns: each job taken back, with the agent that held it.
    func reclaimExpired() async throws -> [(jobID: String, agent: String)]

    /// Claims the jobs that agents whose lease ran out left `committing` (their output converted and synced, perhaps
    /// renamed into place), for ``JobRecovery`` to finish or queue again here.
    ///
    /// - Returns: each job taken over, with the agent that held it.
    func takeOverCommits() async throws -> [(job: UnfinishedJob, agent: String)]

    /// Which of `ids` no agent can claim any more: over (with how they ended), or gone from the store (`nil`).
    func settled(among ids: [String]) async throws -> [String: StoredOutcome?]

    /// Forgets the lease of a job this agent has done with, whatever became of it.
    func letGo(_ jobID: String)

    /// What a hand-off request for job `jobID` may touch (``HandoffDesk``): granted while `token` is its lease's token,
    /// `key` its claim's hand-off key, the lease runs, and this agent found its file; `nil` otherwise.
    func handoffGrant(_ jobID: String, token: Int64, key: String) async throws -> HandoffGrant?

    /// Records the SHA-256 of the source of job `jobID`, which this agent found, before it serves the file to the agent
    /// that claimed it: the fetched copy is checked against it.
    func recordSourceHash(_ jobID: String, sha256: String) async throws

    /// The SHA-256 recorded for the source of job `jobID` by the agent that found it (``recordSourceHash``), or `nil`.
    func sourceHash(of jobID: String) async throws -> String?

    /// Every agent that ever ran on the store, by name.
    func agents() async throws -> [AgentStatus]

    /// An element each time an agent offers or gives back a job, and each time the store is reached again after its
    /// connection was lost; it ends when its consumer stops iterating.
    func notifications() -> AsyncStream<Void>
}

/// A job claimed from the shared queue, with what an agent that did not find its file needs to make its job.
package struct SharedClaim: Sendable, Equatable {
    package var id: String
    /// The lease's token.
    package var token: Int64
    package var source: FilePath
    /// The watched folder the file was found in, by the agent that offered it.
    package var root: FilePath?
    package var rule: String
    /// The size and modification time the file had when it was found: a file that changed since is another version.
    package var size: Int64
    package var modifiedNanoseconds: Int64
    /// The lane it was claimed for.
    package var lane: EngineKind
    /// How to reach the agent that found the file, for an agent that cannot see its folder; `nil` when that agent
    /// gave no `agentURL`, or is this one.
    package var handoff: HandoffTicket?

    package init(
        id: String,
        token: Int64,
        source: FilePath,
        root: FilePath?,
        rule: String,
        size: Int64,
        modifiedNanoseconds: Int64,
        lane: EngineKind,
        handoff: HandoffTicket? = nil
    ) {
        self.id = id
        self.token = token
        self.source = source
        self.root = root
        self.rule = rule
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.lane = lane
        self.handoff = handoff
    }
}

/// What the agent that claimed a job shows the agent that found its file, on each hand-off request, and where that
/// agent answers.
package struct HandoffTicket: Sendable, Equatable {
    /// The agent that found the file.
    package var owner: String
    /// Its `agentURL`.
    package var url: String
    /// A random key the store made for this claim: with the lease's token, the bearer of every hand-off request.
    package var key: String

    package init(owner: String, url: String, key: String) {
        self.owner = owner
        self.url = url
        self.key = key
    }
}

/// A hand-off request that the store granted (``SharedQueue/handoffGrant(_:token:key:)``): the job's file, as it was
/// found, and the folder its outputs go to.
package struct HandoffGrant: Sendable, Equatable {
    package var jobID: String
    package var source: FilePath
    package var root: FilePath
    package var rule: String
    package var size: Int64
    package var modifiedNanoseconds: Int64
    package var outputFolder: FilePath
    /// The agent that claimed the job.
    package var claimant: String

    package init(
        jobID: String,
        source: FilePath,
        root: FilePath,
        rule: String,
        size: Int64,
        modifiedNanoseconds: Int64,
        outputFolder: FilePath,
        claimant: String
    ) {
        self.jobID = jobID
        self.source = source
        self.root = root
        self.rule = rule
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.outputFolder = outputFolder
        self.claimant = claimant
    }
}

/// What ``SharedQueue/offer(_:cost:)`` found.
package enum SharedOffer: Sendable, Equatable {
    /// The job is queued, or claimed or running on an agent, under this id.
    case live(id: String)
    /// This version of the source was handled already, by the job with this id.
    case over(id: String)
}

/// An agent's lease on a job ran out and another agent holds it now, or it ended there: nothing of this agent's run
/// of it may be recorded or published.
package struct LeaseLost: Error, CustomStringConvertible {
    package var jobID: String
    package var why: String

    package init(jobID: String, why: String) {
        self.jobID = jobID
        self.why = why
    }

    package var description: String { "the lease on job \(self.jobID) was lost: \(self.why)" }
}

/// An agent as the shared store knows it: what the status of the agents shows.
package struct AgentInfo: Sendable, Equatable {
    /// Its name, unique among the agents on one store.
    package var name: String
    /// The machine it runs on.
    package var host: String
    /// The engines it has lanes for, with how many.
    package var lanes: [EngineKind: Int]
    /// Its scheduler's budget.
    package var cpu: Int
    package var memory: Int64
    /// Where other agents reach its API (`settings.agentURL`), or `nil`.
    package var url: String?

    package init(name: String, host: String, lanes: [EngineKind: Int], cpu: Int, memory: Int64, url: String? = nil) {
        self.name = name
        self.host = host
        self.lanes = lanes
        self.cpu = cpu
        self.memory = memory
        self.url = url
    }
}

/// An agent as the status shows it (``SharedQueue/agents()``): what it is, its last heartbeat, and its jobs.
package struct AgentStatus: Sendable, Equatable, Codable {
    package var name: String
    package var host: String
    package var pid: Int32
    /// The engines it has lanes for.
    package var engines: [String]
    /// Its scheduler's budget: cores and bytes of memory.
    package var cpu: Int
    package var memory: Int64
    package var startedAt: Date
    /// Its last heartbeat, on the database's clock.
    package var heartbeat: Date
    /// Whether its last heartbeat is within a lease: `false` for an agent stopped, killed or cut off.
    package var alive: Bool
    /// The jobs it holds now: claimed, converting or being committed.
    package var holding: Int
    /// The jobs it completed, in the history.
    package var completed: Int

    package init(
        name: String,
        host: String,
        pid: Int32,
        engines: [String],
        cpu: Int,
        memory: Int64,
        startedAt: Date,
        heartbeat: Date,
        alive: Bool,
        holding: Int,
        completed: Int
    ) {
        self.name = name
        self.host = host
        self.pid = pid
        self.engines = engines
        self.cpu = cpu
        self.memory = memory
        self.startedAt = startedAt
        self.heartbeat = heartbeat
        self.alive = alive
        self.holding = holding
        self.completed = completed
    }
}
