import ChuteCore
import SystemPackage

/// The in-memory queue of jobs: one FIFO lane per engine, with the per-rule concurrency limits applied when a lane
/// hands out work.
///
/// A source path is never queued twice at once: ``submit(_:)`` refuses a path that is already queued or running.
package actor JobQueue {
    private enum State {
        case accepting
        case closed
    }

    private var state = State.accepting
    private var lanes: [EngineKind: [Job]] = [:]
    private var activePaths: Set<FilePath> = []
    private var runningPerRule: [String: Int] = [:]
    private var waiters: [EngineKind: [Waiter]] = [:]
    private var nextWaiterID = 0
    private var running = 0

    /// A lane waiting in ``next(for:)``.
    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Job?, Never>
    }

    private let events: JobEvents

    /// - Parameter events: where each job's `queued` event goes, before any lane can start it.
    package init(events: JobEvents = JobEvents()) {
        self.events = events
    }

    /// Adds a job to its engine's lane.
    ///
    /// - Returns: `false` when the queue is closed or the same source is already queued or running.
    @discardableResult
    package func submit(_ job: Job) -> Bool {
        guard case .accepting = self.state, !self.activePaths.contains(job.source) else { return false }
        self.activePaths.insert(job.source)
        self.lanes[job.engine, default: []].append(job)
        self.events.publish(JobEvent(.queued, of: job))
        self.dispatch(job.engine)
        return true
    }

    /// Waits for the next job of a lane that its rule's limit allows to start.
    ///
    /// - Returns: the job, now counted as running; `nil` once the queue is closed or the calling task is cancelled
    ///   (a lane whose service is cancelled outright must end, not wait for a job or a close that never come).
    package func next(for engine: EngineKind) async -> Job? {
        guard !Task.isCancelled else { return nil }
        if let job = self.takeStartable(engine) { return job }
        guard case .accepting = self.state else { return nil }
        let id = self.nextWaiterID
        self.nextWaiterID += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                self.waiters[engine, default: []].append(Waiter(id: id, continuation: continuation))
            }
        } onCancel: {
            // Runs on the cancelling thread: the waiter is removed on the actor, after it was added (the actor runs
            // the code above without suspending until the continuation is stored).
            Task { await self.endWait(id, engine: engine) }
        }
    }

    /// Gives `nil` to a waiting lane whose task was cancelled, unless a job or a close reached it first.
    private func endWait(_ id: Int, engine: EngineKind) {
        guard let index = self.waiters[engine]?.firstIndex(where: { $0.id == id }) else { return }
        self.waiters[engine]!.remove(at: index).continuation.resume(returning: nil)
    }

    /// Records that a job handed out by ``next(for:)`` is over.
    package func complete(_ job: Job) {
        self.activePaths.remove(job.source)
        self.runningPerRule[job.rule.name, default: 1] -= 1
        self.running -= 1
        // A finished job may unblock a job of its rule waiting in the same lane.
        self.dispatch(job.engine)
    }

    /// Takes a queued job out of its lane, as a request to cancel it does.
    ///
    /// - Returns: the job, or `nil` when no queued job has this id (it may be running already).
    package func withdraw(_ jobID: String) -> Job? {
        for (engine, lane) in self.lanes {
            guard let index = lane.firstIndex(where: { $0.id == jobID }) else { continue }
            let job = self.lanes[engine]!.remove(at: index)
            self.activePaths.remove(job.source)
            return job
        }
        return nil
    }

    /// Whether a source is queued or running.
    package func isActive(_ source: FilePath) -> Bool {
        self.activePaths.contains(source)
    }

    /// How many jobs are waiting and how many are running.
    package var counts: (queued: Int, running: Int) {
        (self.lanes.values.reduce(0) { $0 + $1.count }, self.running)
    }

    /// How many lanes are waiting for work.
    package var waitingLanes: Int {
        self.waiters.values.reduce(0) { $0 + $1.count }
    }

    /// Stops handing out work: queued jobs are dropped (they are found again at the next start) and every waiting
    /// lane gets `nil`. Running jobs are not touched.
    package func close() {
        self.state = .closed
        for job in self.lanes.values.joined() { self.activePaths.remove(job.source) }
        self.lanes = [:]
        for waiter in self.waiters.values.joined() { waiter.continuation.resume(returning: nil) }
        self.waiters = [:]
    }

    private func dispatch(_ engine: EngineKind) {
        while var waiting = self.waiters[engine], !waiting.isEmpty, let job = self.takeStartable(engine) {
            let waiter = waiting.removeFirst()
            self.waiters[engine] = waiting
            waiter.continuation.resume(returning: job)
        }
    }

    private func takeStartable(_ engine: EngineKind) -> Job? {
        guard case .accepting = self.state else { return nil }
        guard
            let index = self.lanes[engine]?.firstIndex(where: { job in
                job.rule.concurrency.map { self.runningPerRule[job.rule.name, default: 0] < $0 } ?? true
            })
        else { return nil }
        // Removed in place: a copy of the lane taken out of the dictionary would make `remove(at:)` copy every
        // queued job (with their retains and releases) on each dequeue, quadratic in the queue's length; with
        // 10,000 files dropped at once that was a sixth of the supervisor's time (Benchmarks/soak.sh under perf).
        let job = self.lanes[engine]!.remove(at: index)
        self.runningPerRule[job.rule.name, default: 0] += 1
        self.running += 1
        return job
    }
}
