import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import ServiceLifecycle
import Synchronization
import SystemPackage
import Testing

/// The job runner and the runtime on a clock the test moves by hand, over a real store and `chute-test-worker`: a
/// job's recorded duration, its progress records and time left, the grace period at shutdown and the idle worker's
/// exit are each exact to the clock, and take no time.
@Suite(.timeLimit(.minutes(1)))
struct JobRunnerClockTests {
    /// Every event of `events` from now on, as it arrives.
    private final class Recorder: Sendable {
        private final class Received: Sendable {
            let events = Mutex<[JobEvent]>([])
        }

        private let received = Received()
        private let task: Task<Void, Never>

        init(_ events: JobEvents) {
            let subscription = events.subscribe()
            let received = self.received
            self.task = Task {
                for await event in subscription { received.events.withLock { $0.append(event) } }
            }
        }

        deinit { self.task.cancel() }

        /// Whether a `started` event came.
        var started: Bool { self.received.events.withLock { $0.contains { $0.kind == .started } } }

        /// The progress of each `progress` event, in order.
        var progress: [Double] {
            self.received.events.withLock { $0.filter { $0.kind == .progress }.compactMap(\.progress) }
        }
    }

    /// Lets a `steps` job of the test worker make its `step`-th report.
    private static func release(_ step: Int, in folder: FilePath) throws {
        try Data().write(to: URL(fileURLWithPath: folder.appending("\(step)").string))
    }

    /// Waits until the job is in its worker's hands: running, and registered for cancellation.
    private static func waitUntilRunning(_ job: Job, in rig: TestWorkerRuntime) async throws {
        try await waitUntil("\(job.id) to run") {
            try await rig.store.entry(job.id)?.state == "running" ? true : nil
        }
    }

    @Test func theSidecarTimesTheJobOnTheRuntimesClock() async throws {
        let clock = ManualClock()
        let rig = try TestWorkerRuntime(clock: clock)
        defer { rig.directory.remove() }
        let steps = try rig.directory.makeDirectory("steps")
        try await rig.running { _ in
            let job = try rig.job("timed", content: "steps 1 \(steps)")
            let ticket = try #require(await rig.submitter.submit(job))
            try await Self.waitUntilRunning(job, in: rig)
            clock.advance(by: .milliseconds(7250))
            try Self.release(1, in: steps)
            #expect(try await ticket.outcome() == .completed(job.plan.path))
        }
        let data = try #require(
            FileManager.default.contents(atPath: rig.directory.appending("out/timed.png.chute.json").string)
        )
        let sidecar = try JSONDecoder().decode(Sidecar.self, from: data)
        #expect(sidecar.durationSeconds == 7.25)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let started = try #require(iso.date(from: sidecar.startedAt))
        let ended = try #require(iso.date(from: sidecar.endedAt))
        #expect(ended.timeIntervalSince(started) == 7.25, "\(sidecar.startedAt) to \(sidecar.endedAt)")
    }

    /// A job that does a tenth a second: a progress event for each report (they are a second apart, past the 0.5 s
    /// between two events), and a log record each 5 s, the first with 5 s left at the pace of the reports so far.
    @Test func progressIsRecordedAtItsCadenceWithTheTimeLeftAtThePresentPace() async throws {
        let clock = ManualClock()
        let log = RecordingLogHandler.Box()
        let rig = try TestWorkerRuntime(clock: clock, log: log)
        defer { rig.directory.remove() }
        let steps = try rig.directory.makeDirectory("steps")
        let recorder = Recorder(rig.events)
        try await rig.running { _ in
            let job = try rig.job("paced", content: "steps 10 \(steps)")
            let ticket = try #require(await rig.submitter.submit(job))
            // Its progress is timed from its start, which comes before the `started` event (the journal says
            // `running` earlier): the clock moves only once the event came.
            try await waitUntil("\(job.id) to start") { recorder.started ? true : nil }
            for step in 1...10 {
                clock.advance(by: .seconds(1))
                try Self.release(step, in: steps)
                try await waitUntil("progress event \(step)") { recorder.progress.count == step ? true : nil }
            }
            #expect(try await ticket.outcome() == .completed(job.plan.path))
        }
        #expect(recorder.progress == (1...10).map { Double($0) / 10 })
        let records = log.messages.filter { $0.message == "Job progress" }.map {
            [$0.metadata["progress"] ?? "", $0.metadata["eta"] ?? "-"]
        }
        #expect(records == [["50%", "5s"], ["100%", "0s"]], "\(records)")
    }

    /// On shutdown a running job has the grace period to finish: a tenth of a second before its end it still runs;
    /// at its end it is cancelled, its journal row says `interrupted` (it runs again at the next start), nothing is
    /// left in the output folder, and the job queued behind it was never started.
    @Test func shutdownGivesARunningJobTheGracePeriodThenInterruptsIt() async throws {
        let clock = ManualClock()
        var settings = Settings()
        settings.gracePeriod = .seconds(30)
        let rig = try TestWorkerRuntime(clock: clock, settings: settings)
        defer { rig.directory.remove() }
        let steps = try rig.directory.makeDirectory("steps")
        try await rig.running { group in
            let first = try rig.job("first", content: "steps 1 \(steps)")
            let second = try rig.job("second", content: "steps 1 \(steps)")
            let firstTicket = try #require(await rig.submitter.submit(first))
            try await Self.waitUntilRunning(first, in: rig)
            let secondTicket = try #require(await rig.submitter.submit(second))
            try await Self.waitUntilRunning(second, in: rig)
            let third = try rig.job("third", content: "never started")
            _ = try #require(await rig.submitter.submit(third))
            await group.triggerGracefulShutdown()
            // The grace period's sleep is on the clock once the runtime has seen the shutdown.
            try await waitUntil("the grace period to start") { clock.sleepers > 0 ? true : nil }
            clock.advance(by: .milliseconds(29_900))
            #expect(try await rig.store.entry(first.id)?.state == "running")
            #expect(clock.sleepers > 0, "the grace period ended early")
            clock.advance(by: .milliseconds(100))
            #expect(try await firstTicket.outcome() == .cancelled)
            #expect(try await secondTicket.outcome() == .cancelled)
            #expect(try await rig.store.entry(first.id)?.state == "interrupted")
            #expect(try await rig.store.entry(third.id)?.state == "queued")
        }
        #expect(rig.directory.files(below: "out") == [])
    }

    /// A worker with no job for `workerIdle` exits (not a tenth of a second earlier), and the next job starts a new
    /// one.
    @Test func anIdleWorkerExitsAfterWorkerIdleAndTheNextJobStartsANewOne() async throws {
        let clock = ManualClock()
        var settings = Settings()
        settings.workerIdle = .seconds(10)
        let rig = try TestWorkerRuntime(clock: clock, settings: settings)
        defer { rig.directory.remove() }
        try await rig.running { _ in
            let first = try rig.job("first", content: "one")
            #expect(try await #require(await rig.submitter.submit(first)).outcome() == .completed(first.plan.path))
            // The lane waits for its next job, its worker with it, until `workerIdle` on the clock.
            try await waitUntil("the idle lane's timer") { clock.sleepers == 1 ? true : nil }
            #expect(rig.workers.snapshot[.image]?.alive == 1)
            clock.advance(by: .milliseconds(9900))
            #expect(rig.workers.snapshot[.image]?.alive == 1)
            clock.advance(by: .milliseconds(100))
            try await waitUntil("the idle worker to exit") { rig.workers.snapshot[.image]?.alive == 0 ? true : nil }
            let second = try rig.job("second", content: "two")
            #expect(try await #require(await rig.submitter.submit(second)).outcome() == .completed(second.plan.path))
            #expect(rig.workers.snapshot[.image] == WorkerCensus.Count(alive: 1, restarts: 0))
        }
    }
}
