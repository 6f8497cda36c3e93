import ChuteApp
import ChuteCore
import ChuteFFmpeg
import ChuteMagick
import SystemPackage
import Testing

@testable import ChuteCatalog
@testable import ChuteRuntime

/// The schedule's order, budget and ageing, on times the tests choose.
@Suite struct JobScheduleTests {
    private static func rule(_ name: String, to format: String = "jpg", concurrency: Int? = nil) throws -> Rule {
        Rule(
            name: name,
            match: [try GlobPattern("*")],
            to: try #require(Engines.registry.format(named: format)),
            output: "/out",
            concurrency: concurrency
        )
    }

    private static func job(_ name: String, rule: Rule, sniffed: MediaType = .png) -> Job {
        Job(
            id: name,
            source: FilePath("/in/\(name)"),
            root: "/in",
            rule: rule,
            plan: OutputPlan(directory: "/out", name: FilePath.Component(name + ".jpg")!),
            fingerprint: SourceFingerprint(device: 1, inode: 1, size: 1, modifiedNanoseconds: 1),
            sniffed: sniffed
        )
    }

    private static func budget(
        cpu: Int = 2,
        memory: Int64 = 1000,
        agingLimit: Duration = .seconds(30)
    )
        -> SchedulerBudget
    {
        SchedulerBudget(cpu: cpu, memory: memory, threads: [:], agingLimit: agingLimit)
    }

    private func at(_ seconds: Double) -> Duration {
        .milliseconds(Int(seconds * 1000))
    }

    @Test func cheapJobsStartFirstWhateverTheirArrival() throws {
        let rule = try Self.rule("r")
        var schedule = JobSchedule(budget: Self.budget(cpu: 1))
        schedule.enqueue(Self.job("film", rule: rule), demand: JobDemand(cost: 600, cpu: 1, memory: 10), at: self.at(0))
        schedule.enqueue(
            Self.job("photo", rule: rule),
            demand: JobDemand(cost: 0.2, cpu: 1, memory: 10),
            at: self.at(1)
        )
        schedule.enqueue(Self.job("song", rule: rule), demand: JobDemand(cost: 3, cpu: 1, memory: 10), at: self.at(2))
        var order: [String] = []
        for second in [3.0, 4, 5] {
            let job = try #require(schedule.take(idle: [.image], at: self.at(second)).job)
            order.append(job.id)
            schedule.finish(job)
        }
        #expect(order == ["photo", "song", "film"])
    }

    @Test func theCPUBudgetHoldsJobsBackUntilCoresAreFree() throws {
        let rule = try Self.rule("r")
        var schedule = JobSchedule(budget: Self.budget(cpu: 2))
        for name in ["a", "b", "c"] {
            schedule.enqueue(Self.job(name, rule: rule), demand: JobDemand(cost: 1, cpu: 1, memory: 1), at: self.at(0))
        }
        let a = try #require(schedule.take(idle: [.image], at: self.at(1)).job)
        let b = try #require(schedule.take(idle: [.image], at: self.at(1)).job)
        let third = schedule.take(idle: [.image], at: self.at(1))
        #expect(third.job == nil)
        #expect(third.waits.map(\.0.id) == ["c"] && third.waits.map(\.1) == [.cpu(needed: 1, free: 0)])
        #expect(schedule.cpuInUse == 2)
        // The worker is done with `a`: its core is free while its output is committed.
        schedule.release(a)
        #expect(schedule.take(idle: [.image], at: self.at(2)).job?.id == "c")
        schedule.finish(a)
        schedule.finish(b)
        #expect(schedule.cpuInUse == 1)
    }

    /// A job that starts with nothing else running gets every core of the budget for its threads, but holds only its
    /// share: a photo dropped after a film still starts beside it, with the threads of its share.
    @Test func aJobStartingAloneGetsEveryCoreForItsThreadsButHoldsItsShare() throws {
        let rule = try Self.rule("r")
        var schedule = JobSchedule(budget: Self.budget(cpu: 4))
        schedule.enqueue(Self.job("film", rule: rule), demand: JobDemand(cost: 600, cpu: 2, memory: 10), at: self.at(0))
        let film = try #require(schedule.take(idle: [.image], at: self.at(1)).job)
        #expect(film.threads == 4)
        #expect(schedule.cpuInUse == 2)
        schedule.enqueue(Self.job("photo", rule: rule), demand: JobDemand(cost: 1, cpu: 1, memory: 10), at: self.at(2))
        schedule.enqueue(Self.job("clip", rule: rule), demand: JobDemand(cost: 9, cpu: 2, memory: 10), at: self.at(2))
        let photo = try #require(schedule.take(idle: [.image], at: self.at(3)).job)
        #expect(photo.id == "photo" && photo.threads == 1)
        schedule.finish(film)
        let clip = try #require(schedule.take(idle: [.image], at: self.at(4)).job)
        #expect(clip.id == "clip" && clip.threads == 2)
    }

    /// A film's threads are set for the whole job, which outlasts the sounds and photos beside it: it gets every core
    /// that no other film holds, and holds only its share; a second film gets what the first leaves.
    @Test func aFilmStartingBesideShortJobsGetsEveryCoreNoOtherFilmHolds() throws {
        let (photos, films) = (try Self.rule("photos"), try Self.rule("films", to: "mp4"))
        var budget = Self.budget(cpu: 4)
        budget.multiThreaded = [.video]
        var schedule = JobSchedule(budget: budget)
        schedule.enqueue(Self.job("photo", rule: photos), demand: JobDemand(cost: 1, cpu: 1, memory: 1), at: self.at(0))
        let photo = try #require(schedule.take(idle: [.image, .video], at: self.at(1)).job)
        #expect(photo.threads == 4)
        for name in ["film", "second"] {
            schedule.enqueue(
                Self.job(name, rule: films, sniffed: .mp4),
                demand: JobDemand(cost: 600, cpu: 2, memory: 1),
                at: self.at(2)
            )
        }
        let film = try #require(schedule.take(idle: [.video], at: self.at(3)).job)
        #expect(film.threads == 4)
        schedule.finish(photo)
        let second = try #require(schedule.take(idle: [.video], at: self.at(4)).job)
        #expect(second.threads == 2)
        #expect(schedule.cpuInUse == 4)
    }

    @Test func aJobThatDoesNotFitTheMemoryWaitsAndOneThatCannotFitAloneRunsAlone() throws {
        let rule = try Self.rule("r")
        var schedule = JobSchedule(budget: Self.budget(cpu: 4, memory: 600))
        schedule.enqueue(Self.job("photo", rule: rule), demand: JobDemand(cost: 1, cpu: 1, memory: 100), at: self.at(0))
        schedule.enqueue(Self.job("huge", rule: rule), demand: JobDemand(cost: 5, cpu: 1, memory: 1600), at: self.at(0))
        schedule.enqueue(Self.job("clip", rule: rule), demand: JobDemand(cost: 9, cpu: 1, memory: 400), at: self.at(0))
        let photo = try #require(schedule.take(idle: [.image], at: self.at(1)).job)
        #expect(photo.id == "photo")
        // The huge picture does not fit beside the photo; the clip, dearer, does and passes it.
        let next = schedule.take(idle: [.image], at: self.at(1))
        #expect(next.job?.id == "clip")
        let clip = try #require(next.job)
        #expect(schedule.take(idle: [.image], at: self.at(1)).waits.map(\.1) == [.memory(needed: 1600, free: 100)])
        schedule.finish(photo)
        #expect(schedule.take(idle: [.image], at: self.at(2)).job == nil)
        schedule.finish(clip)
        // Alone, it starts, over the budget; and nothing starts beside it.
        let huge = try #require(schedule.take(idle: [.image], at: self.at(3)).job)
        #expect(huge.id == "huge")
        schedule.enqueue(Self.job("small", rule: rule), demand: JobDemand(cost: 0.1, cpu: 1, memory: 1), at: self.at(3))
        #expect(schedule.take(idle: [.image], at: self.at(4)).job == nil)
        schedule.finish(huge)
        #expect(schedule.take(idle: [.image], at: self.at(5)).job?.id == "small")
    }

    /// A stream of cheap jobs that keeps the cores busy passes a dear job only until it has waited the ageing limit;
    /// from then on it is the next to start, and the budget is kept for it.
    @Test func aJobThatWaitedTheAgingLimitStartsBeforeCheaperOnes() throws {
        let rule = try Self.rule("r")
        var schedule = JobSchedule(budget: Self.budget(cpu: 2, agingLimit: .seconds(30)))
        schedule.enqueue(Self.job("film", rule: rule), demand: JobDemand(cost: 600, cpu: 2, memory: 1), at: self.at(0))
        var started: [(id: String, at: Double)] = []
        var running: [Job] = []
        var photos = 0
        var second = 0.0
        while !started.contains(where: { $0.id == "film" }), second < 120 {
            // A photo arrives every half second, and each runs for a second on one core.
            for _ in 0..<2 {
                photos += 1
                schedule.enqueue(
                    Self.job("photo\(photos)", rule: rule),
                    demand: JobDemand(cost: 1, cpu: 1, memory: 1),
                    at: self.at(second)
                )
            }
            for job in running { schedule.finish(job) }
            running = []
            while let job = schedule.take(idle: [.image], at: self.at(second)).job {
                started.append((job.id, second))
                running.append(job)
            }
            second += 1
        }
        let film = try #require(started.first { $0.id == "film" })
        #expect(film.at >= 30 && film.at <= 31, "started at \(film.at) s")
        // Once aged, no photo started before it: the cores were kept for it.
        #expect(!started.contains { $0.at >= 30 && $0.at < film.at })
        // Photos queued before it had aged still went first; the film is not started before its time.
        #expect(started.filter { $0.at < 30 }.allSatisfy { $0.id != "film" })
    }

    @Test func aRuleLimitIsACapUnderTheBudget() throws {
        let limited = try Self.rule("limited", concurrency: 1)
        let free = try Self.rule("free")
        var schedule = JobSchedule(budget: Self.budget(cpu: 4))
        schedule.enqueue(Self.job("l1", rule: limited), demand: JobDemand(cost: 1, cpu: 1, memory: 1), at: self.at(0))
        schedule.enqueue(Self.job("l2", rule: limited), demand: JobDemand(cost: 1, cpu: 1, memory: 1), at: self.at(0))
        schedule.enqueue(Self.job("f1", rule: free), demand: JobDemand(cost: 2, cpu: 1, memory: 1), at: self.at(0))
        let l1 = try #require(schedule.take(idle: [.image], at: self.at(1)).job)
        #expect(l1.id == "l1")
        // Even aged, l2 waits for its rule, and lets f1 start.
        #expect(schedule.take(idle: [.image], at: self.at(100)).job?.id == "f1")
        #expect(schedule.take(idle: [.image], at: self.at(100)).job == nil)
        schedule.finish(l1)
        #expect(schedule.take(idle: [.image], at: self.at(101)).job?.id == "l2")
    }

    @Test func onlyLanesWaitingForWorkAreGivenJobs() throws {
        let rule = try Self.rule("r")
        var schedule = JobSchedule(budget: Self.budget(cpu: 4))
        var clip = Self.job("clip", rule: rule)
        clip.sniffed = .mp4
        clip.rule.to = try #require(Engines.registry.format(named: "mp4"))
        schedule.enqueue(clip, demand: JobDemand(cost: 0.1, cpu: 1, memory: 1), at: self.at(0))
        schedule.enqueue(Self.job("photo", rule: rule), demand: JobDemand(cost: 1, cpu: 1, memory: 1), at: self.at(0))
        #expect(schedule.take(idle: [.image], at: self.at(1)).job?.id == "photo")
        #expect(schedule.take(idle: [.image], at: self.at(1)).job == nil)
        #expect(schedule.take(idle: [clip.engine, .image], at: self.at(1)).job?.id == "clip")
    }
}
