import ChuteCore

/// Decides which queued job starts next: the cheapest one that fits the budget, unless a job has waited longer than
/// the budget's ageing limit, which then goes first.
///
/// A pure state machine: ``JobQueue`` owns one, tells it what arrives, starts and ends, and passes the time in, so
/// that tests can run it on times of their own.
///
/// - **Order.** Jobs are taken cheapest first (``JobDemand/cost``; equal costs in arrival order), which minimises the
///   mean time to an output: a photo dropped behind a film does not wait for it.
/// - **Budget.** A job starts only if its cores fit in the CPU budget and its memory in the memory budget beside the
///   jobs already holding theirs; a job that cannot fit even alone starts when nothing else holds the budget, and then
///   runs alone. A cheaper job that does not fit is passed by a dearer one that does.
/// - **Ageing.** Once the oldest queued job has waited ``SchedulerBudget/agingLimit``, it is the next to start: if it
///   does not fit yet, nothing else starts until it does (the budget is kept for it as running jobs end). So a job
///   starts at most the ageing limit after it was queued plus the time the jobs queued before it, and those running,
///   take to start and end: no stream of cheaper jobs starves it. Its lane and its rule's `concurrency` are caps
///   under the budget: while they hold it back, others may start.
struct JobSchedule {
    /// Why the job that would start next waits.
    enum Wait: Sendable, Equatable {
        /// Its cores do not fit beside the running jobs'.
        case cpu(needed: Int, free: Int)
        /// Its memory does not fit beside the running jobs'.
        case memory(needed: Int64, free: Int64)
    }

    /// A queued job.
    private struct Entry {
        var job: Job
        var demand: JobDemand
        /// When it was queued, on the runtime's clock (``RuntimeClock/now``).
        var queued: Duration
    }

    let budget: SchedulerBudget
    /// Queued jobs by their arrival number.
    private var entries: [Int: Entry] = [:]
    /// Each lane's queued jobs, cheapest first; arrival numbers no longer in ``entries`` are skipped when met.
    private var byCost: [EngineKind: CostHeap] = [:]
    /// Arrival numbers in arrival order, from ``arrivalStart``; numbers no longer in ``entries`` are skipped.
    private var arrival: [Int] = []
    private var arrivalStart = 0
    private var nextArrival = 0
    /// The cores of the jobs holding some, with their engine, by id: from their start until their worker is done with
    /// them.
    private var holdingCPU: [String: (cores: Int, engine: EngineKind)] = [:]
    /// The memory of the jobs holding some, by id: from their start until they are over, output committed.
    private var holdingMemory: [String: Int64] = [:]
    private var runningPerRule: [String: Int] = [:]
    /// The cores and memory the running jobs hold.
    private(set) var cpuInUse = 0
    private(set) var memoryInUse: Int64 = 0
    /// The cores held by running jobs of the budget's multi-threaded engines.
    private var multiThreadedInUse = 0

    /// The most queued jobs of one lane looked at past the cheapest before a take gives up on that lane: jobs held back
    /// by their rule's limit or by memory are passed, but the queue is not scanned whole on every take.
    static let lookAhead = 256

    init(budget: SchedulerBudget) {
        self.budget = budget
    }

    /// How many jobs are queued.
    var queuedCount: Int { self.entries.count }

    /// How many jobs each lane has queued; a lane with none is left out.
    var queuedPerLane: [EngineKind: Int] {
        self.entries.values.reduce(into: [:]) { counts, entry in counts[entry.job.engine, default: 0] += 1 }
    }

    /// Queues a job that arrived at `now`.
    mutating func enqueue(_ job: Job, demand: JobDemand, at now: Duration) {
        let number = self.nextArrival
        self.nextArrival += 1
        self.entries[number] = Entry(job: job, demand: demand, queued: now)
        self.byCost[job.engine, default: CostHeap()].insert(CostHeap.Key(cost: demand.cost, arrival: number))
        self.arrival.append(number)
    }

    /// Takes the job to start now, if any, among the lanes that wait for work.
    ///
    /// - Parameters:
    ///   - idle: the engines with a lane waiting for work.
    ///   - now: the time, for the ageing limit.
    /// - Returns: the job, now holding its share of the budget and counted against its rule; and the jobs that would
    ///   have been next but for the budget, with why.
    mutating func take(idle: Set<EngineKind>, at now: Duration) -> (job: Job?, waits: [(Job, Wait)]) {
        if let (number, oldest) = self.oldest(), now - oldest.queued >= self.budget.agingLimit,
            idle.contains(oldest.job.engine), self.ruleAllows(oldest.job)
        {
            if let wait = self.wait(for: oldest.demand) { return (nil, [(oldest.job, wait)]) }
            return (self.start(number), [])
        }
        var waits: [(Job, Wait)] = []
        var best: (engine: EngineKind, key: CostHeap.Key)?
        for engine in idle {
            guard var heap = self.byCost.removeValue(forKey: engine) else { continue }
            var passed: [CostHeap.Key] = []
            var found: CostHeap.Key?
            var reported = false
            while passed.count <= Self.lookAhead, let key = heap.popFirst() {
                guard let entry = self.entries[key.arrival] else { continue }
                guard self.ruleAllows(entry.job) else {
                    passed.append(key)
                    continue
                }
                if let wait = self.wait(for: entry.demand) {
                    // The lane's first job that its rule lets start is the one that waits for the budget.
                    if !reported {
                        waits.append((entry.job, wait))
                        reported = true
                    }
                    passed.append(key)
                    // Every job of a lane takes the same cores: if one does not fit, none will.
                    if case .cpu = wait { break }
                    continue
                }
                found = key
                break
            }
            for key in passed { heap.insert(key) }
            if let found {
                if let current = best, current.key < found {
                    heap.insert(found)
                } else {
                    if let current = best { self.byCost[current.engine, default: CostHeap()].insert(current.key) }
                    best = (engine, found)
                }
            }
            if !heap.isEmpty { self.byCost[engine] = heap }
        }
        guard let best else { return (nil, waits) }
        return (self.start(best.key.arrival), [])
    }

    /// Gives back the cores of a job whose worker is done with it, while its output is committed; its memory and its
    /// place in its rule's limit stay taken until ``end(_:)``. Calling it again does nothing.
    ///
    /// The memory is kept through the commit, which is short beside a job that needs much of it, so that two jobs
    /// the memory budget keeps apart never overlap, not even in their sidecars' times.
    mutating func release(_ job: Job) {
        guard let cpu = self.holdingCPU.removeValue(forKey: job.id)?.cores else { return }
        self.cpuInUse -= cpu
        if self.budget.multiThreaded.contains(job.engine) { self.multiThreadedInUse -= cpu }
    }

    /// Whether a job of `engine` holds cores: started, and its worker not yet done with it.
    func holdsCPU(_ engine: EngineKind) -> Bool {
        self.holdingCPU.values.contains { $0.engine == engine }
    }

    /// Records that a started job is over: its cores if it still holds them, its memory and its place in its rule's
    /// limit.
    mutating func finish(_ job: Job) {
        self.release(job)
        self.end(job)
    }

    /// Records that a started job is over but for its cores: its memory and its place in its rule's limit are given
    /// back; ``release(_:)`` gives back the cores.
    mutating func end(_ job: Job) {
        if let memory = self.holdingMemory.removeValue(forKey: job.id) {
            self.memoryInUse -= memory
        }
        self.runningPerRule[job.rule.name, default: 1] -= 1
    }

    /// Takes a queued job out of the queue (its cost and arrival entries are skipped when met).
    ///
    /// - Returns: the job, or `nil` when no queued job has this id.
    mutating func remove(jobID: String) -> Job? {
        guard let number = self.entries.first(where: { $0.value.job.id == jobID })?.key else { return nil }
        return self.entries.removeValue(forKey: number)?.job
    }

    /// Empties the queue.
    ///
    /// - Returns: the jobs that were queued.
    mutating func removeAll() -> [Job] {
        let jobs = self.entries.values.map(\.job)
        self.entries = [:]
        self.byCost = [:]
        self.arrival = []
        self.arrivalStart = 0
        return jobs
    }

    /// The job queued longest, dropping from the front of ``arrival`` those already gone.
    private mutating func oldest() -> (Int, Entry)? {
        while self.arrivalStart < self.arrival.count {
            let number = self.arrival[self.arrivalStart]
            if let entry = self.entries[number] { return (number, entry) }
            self.arrivalStart += 1
        }
        // Drained: the array starts again, so that it does not grow with every job ever queued.
        self.arrival = []
        self.arrivalStart = 0
        return nil
    }

    private func ruleAllows(_ job: Job) -> Bool {
        job.rule.concurrency.map { self.runningPerRule[job.rule.name, default: 0] < $0 } ?? true
    }

    /// Why a job with this demand cannot start now, or `nil` when it can: for the cores and for the memory, it fits
    /// beside the jobs holding some, or none does (a job larger than the budget runs alone).
    private func wait(for demand: JobDemand) -> Wait? {
        let freeCPU = self.budget.cpu - self.cpuInUse
        if !self.holdingCPU.isEmpty, demand.cpu > freeCPU { return .cpu(needed: demand.cpu, free: freeCPU) }
        let freeMemory = self.budget.memory - self.memoryInUse
        if !self.holdingMemory.isEmpty, demand.memory > freeMemory {
            return .memory(needed: demand.memory, free: freeMemory)
        }
        return nil
    }

    /// Starts a queued job. Each job holds only its share of the cores, but its threads may be more: a job that starts
    /// with no other holding cores gets every core of the budget, and a job of a multi-threaded engine (a video
    /// transcode) every core that other such jobs do not hold, since its threads are set for the whole job and it
    /// outlasts the short jobs beside it. So a film alone, or beside sounds and photos, is encoded as fast as by the
    /// `ffmpeg` program once they are done, and a photo dropped after it still finds its share free (the two then
    /// share the cores for the photo's second or so); two films never start more threads than the budget's cores.
    private mutating func start(_ number: Int) -> Job {
        var entry = self.entries.removeValue(forKey: number)!
        let share = entry.demand.cpu
        let multiThreaded = self.budget.multiThreaded.contains(entry.job.engine)
        entry.job.threads =
            if self.budget.cpu == .max {
                share
            } else if self.holdingCPU.isEmpty {
                max(share, self.budget.cpu)
            } else if multiThreaded {
                max(share, self.budget.cpu - self.multiThreadedInUse)
            } else {
                share
            }
        if multiThreaded { self.multiThreadedInUse += share }
        self.holdingCPU[entry.job.id] = (entry.demand.cpu, entry.job.engine)
        self.holdingMemory[entry.job.id] = entry.demand.memory
        self.cpuInUse += entry.demand.cpu
        self.memoryInUse += entry.demand.memory
        self.runningPerRule[entry.job.rule.name, default: 0] += 1
        return entry.job
    }
}

/// A binary min-heap of queued jobs' costs, with their arrival numbers breaking ties.
struct CostHeap {
    struct Key: Comparable {
        var cost: Double
        var arrival: Int

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.cost, lhs.arrival) < (rhs.cost, rhs.arrival)
        }
    }

    private var keys: [Key] = []

    var isEmpty: Bool { self.keys.isEmpty }

    mutating func insert(_ key: Key) {
        self.keys.append(key)
        var child = self.keys.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard self.keys[child] < self.keys[parent] else { break }
            self.keys.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> Key? {
        guard !self.keys.isEmpty else { return nil }
        self.keys.swapAt(0, self.keys.count - 1)
        let first = self.keys.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < self.keys.count, self.keys[left] < self.keys[smallest] { smallest = left }
            if right < self.keys.count, self.keys[right] < self.keys[smallest] { smallest = right }
            guard smallest != parent else { break }
            self.keys.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
