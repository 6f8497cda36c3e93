import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteFFmpeg
import ChuteMagick
import ChuteRuntime
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

@Suite struct JobQueueTests {
    private func job(_ name: String, rule: Rule) -> Job {
        Job(
            source: FilePath("/in/\(name)"),
            root: "/in",
            rule: rule,
            plan: OutputPlan(directory: "/out", name: FilePath.Component(name + ".jpg")!),
            fingerprint: SourceFingerprint(device: 1, inode: 1, size: 1, modifiedNanoseconds: 1),
            sniffed: .png
        )
    }

    private func rule(_ name: String, concurrency: Int? = nil) throws -> Rule {
        Rule(
            name: name,
            match: [try GlobPattern("*")],
            to: try #require(Engines.registry.format(named: "jpg")),
            output: "/out",
            concurrency: concurrency
        )
    }

    @Test func theSameSourceIsNeverQueuedTwiceAtOnce() async throws {
        let queue = JobQueue()
        let rule = try self.rule("r")
        #expect(await queue.submit(self.job("a.png", rule: rule)))
        #expect(await !queue.submit(self.job("a.png", rule: rule)))
        let running = try #require(await queue.next(for: .image))
        #expect(await !queue.submit(self.job("a.png", rule: rule)))
        await queue.complete(running)
        #expect(await queue.submit(self.job("a.png", rule: rule)))
    }

    @Test func jobsLeaveTheirLaneInOrder() async throws {
        let queue = JobQueue()
        let rule = try self.rule("r")
        for name in ["1", "2", "3"] { await queue.submit(self.job(name, rule: rule)) }
        var order: [String] = []
        for _ in 0..<3 { order.append(try #require(await queue.next(for: .image)).source.string) }
        #expect(order == ["/in/1", "/in/2", "/in/3"])
        #expect(await queue.counts.running == 3)
    }

    @Test func aRuleLimitHoldsBackItsJobsButNotOthers() async throws {
        let queue = JobQueue()
        let limited = try self.rule("limited", concurrency: 1)
        let free = try self.rule("free")
        await queue.submit(self.job("l1", rule: limited))
        await queue.submit(self.job("l2", rule: limited))
        await queue.submit(self.job("f1", rule: free))
        let first = try #require(await queue.next(for: .image))
        #expect(first.source == "/in/l1")
        // l2 must wait for l1; f1 may start.
        let second = try #require(await queue.next(for: .image))
        #expect(second.source == "/in/f1")
        async let third = queue.next(for: .image)
        await queue.complete(first)
        #expect(await third?.source == "/in/l2")
    }

    @Test func theBudgetStatusNamesTheJobThatWaitsForIt() async throws {
        let budget = SchedulerBudget(cpu: 1, memory: .max, threads: [:], agingLimit: .seconds(3600))
        let queue = JobQueue(budget: budget)
        let rule = try self.rule("r")
        let jobs = [self.job("1", rule: rule), self.job("2", rule: rule)]
        for job in jobs { await queue.submit(job) }
        let running = try #require(await queue.next(for: .image))
        let other = try #require(jobs.first { $0.id != running.id })
        let waiting = Task { await queue.next(for: .image) }
        let status = try await waitUntil("the other job waiting for a core") {
            let status = await queue.budgetStatus
            return status.waiting.isEmpty ? nil : status
        }
        #expect(status.cpu == 1 && status.cpuInUse == 1 && status.memoryInUse > 0)
        #expect(status.waiting.map(\.job) == [other.id])
        #expect(status.waiting.map { "\($0.resource) \($0.needed) \($0.free)" } == ["cpu 1 0"])
        // Its lane done with the first job, the other starts and waits no more.
        let next = Task { await queue.next(for: .image, releasing: running) }
        #expect(await waiting.value?.id == other.id)
        let after = await queue.budgetStatus
        #expect(after.waiting.isEmpty && after.cpuInUse == 1)
        await queue.close()
        #expect(await next.value == nil)
    }

    /// Two rules whose jobs the model estimates alike: once the lane has measured that one rule's jobs take fifty
    /// times their estimate, the other's go first, whatever the order they came in.
    @Test func whatARulesJobsTookReordersItsNextOnes() async throws {
        let queue = JobQueue()
        let slow = try self.rule("slow")
        let quick = try self.rule("quick")
        for index in 0..<CostHistory.minimumSamples {
            await queue.submit(self.job("measured-\(index)", rule: slow))
            let running = try #require(await queue.next(for: .image))
            let estimate = try #require(running.estimatedCost)
            #expect(estimate > 0)
            await queue.learn(running, cpuSeconds: estimate * 50)
            await queue.complete(running)
        }
        await queue.submit(self.job("s", rule: slow))
        await queue.submit(self.job("q", rule: quick))
        let first = try #require(await queue.next(for: .image))
        let second = try #require(await queue.next(for: .image))
        #expect([first, second].map(\.source) == ["/in/q", "/in/s"])

        // The history given at the start, as the journal's, does the same.
        let restarted = JobQueue(
            costs: CostHistory([
                CostHistory.Key(rule: "slow", engine: .image): Array(
                    repeating: CostHistory.Sample(estimate: 1, cpuSeconds: 50),
                    count: CostHistory.minimumSamples
                )
            ])
        )
        await restarted.submit(self.job("s", rule: slow))
        await restarted.submit(self.job("q", rule: quick))
        #expect(try #require(await restarted.next(for: .image)).source == "/in/q")
    }

    /// The factor that a rule's queued jobs were priced with holds while they wait: two alike jobs of one rule go in
    /// the order they came, even if what other jobs took meanwhile made the factor smaller.
    @Test func aRulesQueuedJobsKeepTheirOrderWhenItsCostFactorMoves() async throws {
        let rule = try self.rule("photos")
        let key = CostHistory.Key(rule: "photos", engine: .image)
        let queue = JobQueue(
            costs: CostHistory([
                key: Array(repeating: CostHistory.Sample(estimate: 1, cpuSeconds: 1), count: CostHistory.minimumSamples)
            ])
        )
        await queue.submit(self.job("early", rule: rule))
        // Conversions measured meanwhile at half their estimates: the factor drops from 1 to 0.5.
        var measured = self.job("measured", rule: rule)
        measured.estimatedCost = 1
        for _ in 0...CostHistory.minimumSamples { await queue.learn(measured, cpuSeconds: 0.5) }
        await queue.submit(self.job("late", rule: rule))
        let order = [try #require(await queue.next(for: .image)), try #require(await queue.next(for: .image))]
        #expect(order.map(\.source) == ["/in/early", "/in/late"])

        // Once none of the rule's jobs waits, the next is priced with the factor as it is now: at half its estimate,
        // it goes before an alike job of a rule with no history that came first.
        await queue.submit(self.job("other", rule: try self.rule("other")))
        await queue.submit(self.job("next", rule: rule))
        #expect(try #require(await queue.next(for: .image)).source == "/in/next")
    }

    /// A job goes to the lane that waited last among those with a worker, before any lane without one; a lane with a
    /// worker that it passes over after a while is told its worker is spare, a lane without one never is.
    @Test func theWarmestWorkerTakesTheJobAndThosePassedOverAreSpare() async throws {
        let queue = JobQueue(spareAfter: .zero)
        let rule = try self.rule("r")
        let first = Task { await queue.nextTurn(for: .image) }
        try await waitUntil("the first lane to wait") { await queue.waitingLanes == 1 ? true : nil }
        let second = Task { await queue.nextTurn(for: .image) }
        try await waitUntil("the second lane to wait") { await queue.waitingLanes == 2 ? true : nil }
        let cold = Task { await queue.next(for: .image) }
        try await waitUntil("the lane without a worker to wait") { await queue.waitingLanes == 3 ? true : nil }
        await queue.submit(self.job("a", rule: rule))

        #expect(try #require(await second.value.job, "the last warm lane got no job").source == "/in/a")
        #expect(await first.value.isSpare, "the lane passed over is not spare")
        #expect(await queue.waitingLanes == 1)
        await queue.submit(self.job("b", rule: rule))
        #expect(await cold.value?.source == "/in/b")

        // Passed over before it has waited `spareAfter`, a worker is not spare.
        let patient = JobQueue(spareAfter: .seconds(3600))
        let waiting = Task { await patient.nextTurn(for: .image) }
        try await waitUntil("the lane to wait") { await patient.waitingLanes == 1 ? true : nil }
        let last = Task { await patient.nextTurn(for: .image) }
        try await waitUntil("the other lane to wait") { await patient.waitingLanes == 2 ? true : nil }
        await patient.submit(self.job("c", rule: rule))
        #expect(await last.value.job != nil, "the last warm lane got no job")
        #expect(await patient.waitingLanes == 1)
        await patient.close()
        #expect(await waiting.value.isClosed, "a closed queue gave a lane work")
    }

    /// With one core, a lane that runs a job takes the engine's next job once it is done: a lane with a worker that
    /// waits meanwhile is spare at once, however briefly it has waited.
    @Test func aWorkerIsSpareWhileItsEnginesNextJobWaitsForTheBudget() async throws {
        let budget = SchedulerBudget(cpu: 1, memory: .max, threads: [:], agingLimit: .seconds(3600))
        let queue = JobQueue(budget: budget, spareAfter: .seconds(3600))
        let rule = try self.rule("r")
        await queue.submit(self.job("1", rule: rule))
        let running = try #require(await queue.next(for: .image))
        let waiting = Task { await queue.nextTurn(for: .image) }
        try await waitUntil("the other lane to wait") { await queue.waitingLanes == 1 ? true : nil }
        await queue.submit(self.job("2", rule: rule))
        #expect(await waiting.value.isSpare, "the waiting worker is not spare")
        // The running lane, done, takes the next job itself.
        #expect(await queue.nextTurn(for: .image, releasing: running).job?.source == "/in/2")
    }

    @Test func closingWakesWaitingLanesAndDropsQueuedJobs() async throws {
        let queue = JobQueue()
        async let waiting = queue.next(for: .video)
        try await waitUntil("the lane to wait") { await queue.waitingLanes == 1 ? true : nil }
        await queue.submit(self.job("x", rule: try self.rule("r")))
        await queue.close()
        #expect(await waiting == nil)
        #expect(await queue.next(for: .image) == nil)
        #expect(await !queue.submit(self.job("y", rule: try self.rule("r"))))
        #expect(await queue.isActive("/in/x") == false)
    }
}

extension JobQueue.Turn {
    fileprivate var job: Job? {
        guard case .job(let job) = self else { return nil }
        return job
    }

    fileprivate var isSpare: Bool {
        guard case .spare = self else { return false }
        return true
    }

    fileprivate var isClosed: Bool {
        guard case .closed = self else { return false }
        return true
    }
}
