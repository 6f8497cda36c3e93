import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import SystemPackage
import Testing

/// The intake on a clock the test moves by hand, over a real store, queue and runtime whose lanes run
/// `chute-test-worker`: quiet periods, back-offs, `incompleteTimeout` and `minAge` are checked to the tenth of a
/// second of their clock without waiting for them, and each test takes well under a second.
@Suite(.timeLimit(.minutes(1)))
struct IntakeTests {
    /// A PNG of one pixel: what the sniffing and the readiness checks take for a whole picture.
    private static let onePixel = Data(
        base64Encoded:
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )!

    /// A PNG of two pixels.
    private static let twoPixels = Data(
        base64Encoded:
            "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAADklEQVR4nGP4z8DwH4QBEfcD/ePF9e8AAAAASUVORK5CYII="
    )!

    /// Every job that ended, in order, as the intake heard of it.
    private final class Endings: JobCompletionSink {
        private let ended = Mutex<[(job: Job, outcome: JobOutcome)]>([])

        func jobFinished(_ job: Job, outcome: JobOutcome) async -> Date? {
            self.ended.withLock { $0.append((job, outcome)) }
            return nil
        }

        var all: [(job: Job, outcome: JobOutcome)] { self.ended.withLock { $0 } }
    }

    /// An intake watching `in/` with one rule (`*.png` copied to `out/` by the test worker) and `settings`, on a
    /// ``ManualClock`` whose date starts at the real one.
    private struct Rig {
        let directory: TemporaryDirectory
        let clock = ManualClock()
        let start = Date()
        let store: SQLiteJobStore
        let intake: Intake
        let runtime: JobRuntime
        let disposer: SourceDisposer
        let endings = Endings()
        let events: AsyncStream<IntakeEvent>
        let feed: AsyncStream<IntakeEvent>.Continuation
        let config: ChuteConfig

        init(rule: String = "", settings: String = "") throws {
            self.directory = try TemporaryDirectory(prefix: "intake")
            _ = try self.directory.makeDirectory("in")
            let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            self.config = try ConfigReader.parse(
                """
                watch:
                  - path: ./in
                rules:
                  - name: copy
                    match: "*.png"
                    to: png
                    output: ./out
                \(rule)
                settings:
                  quietPeriod: 5s
                  incompleteTimeout: 60s
                  retryDelay: 30s
                \(settings)
                """,
                file: "rules.yaml",
                baseDirectory: self.directory.path,
                registry: Engines.registry
            )
            self.store = try SQLiteJobStore(path: self.directory.appending("journal.sqlite"))
            let queue = JobQueue()
            let tickets = JobTickets()
            let submitter = JobSubmitter(store: self.store, queue: queue, tickets: tickets, logger: logger)
            self.disposer = SourceDisposer(config: self.config, journal: self.store, logger: logger)
            let (clock, start) = (self.clock, self.start)
            self.intake = Intake(
                config: self.config,
                queue: queue,
                submitter: submitter,
                disposer: self.disposer,
                journal: self.store,
                logger: logger,
                clock: RuntimeClock(clock) { start + Double((clock.now.offset / .milliseconds(1))) / 1000 }
            )
            let worker = ChuteProcess.executable.removingLastComponent().appending("chute-test-worker")
            self.runtime = JobRuntime(
                queue: queue,
                completions: JobCompletions(watched: [self.intake, self.disposer, self.endings], tickets: tickets),
                watchedFolders: self.intake.watchedFolders,
                launcher: WorkerLauncher(executable: { _ in worker }, arguments: { ["--engine", $0.rawValue] }),
                journal: self.store,
                settings: self.config.settings,
                lanes: [.image: 1],
                logger: logger
            )
            (self.events, self.feed) = AsyncStream.makeStream(of: IntakeEvent.self)
        }

        var inbox: FilePath { self.directory.appending("in") }

        /// Writes `data` to `in/NAME` and reports it as the watcher would.
        @discardableResult
        func drop(_ name: String, _ data: Data = IntakeTests.onePixel) throws -> FilePath {
            let path = self.inbox.appending(name)
            try data.write(to: URL(fileURLWithPath: path.string))
            self.feed.yield(IntakeEvent(.appeared, path: path, root: self.inbox))
            return path
        }

        /// Removes `in/NAME` and reports it.
        func remove(_ name: String) throws {
            let path = self.inbox.appending(name)
            try FileManager.default.removeItem(atPath: path.string)
            self.feed.yield(IntakeEvent(.removed, path: path, root: self.inbox))
        }

        /// Waits until `count` timers wait for the clock: every event sent so far has been taken in.
        func timers(_ count: Int) async throws {
            try await waitUntil("\(count) timers on the clock (\(self.clock.sleepers) now)") {
                self.clock.sleepers == count ? true : nil
            }
        }

        /// How many jobs the store has recorded.
        func recorded() async throws -> Int {
            try await self.store.countsByState().values.reduce(0, +)
        }

        /// Waits until `count` jobs have ended; returns them.
        @discardableResult
        func ended(_ count: Int) async throws -> [(job: Job, outcome: JobOutcome)] {
            try await waitUntil("\(count) jobs to end (\(self.endings.all.count) so far)") {
                self.endings.all.count >= count ? self.endings.all : nil
            }
        }

        /// Runs `body` with the intake consuming events and the runtime running, then stops both.
        func running(_ body: () async throws -> Void) async throws {
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: [self.runtime, self.disposer],
                    logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
                )
            )
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                tasks.addTask { await self.intake.consume(self.events) }
                try await body()
                self.feed.finish()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
    }

    @Test func aFileIsTakenWhenItsQuietPeriodEndsAndNotBefore() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        try await rig.running {
            try rig.drop("photo.png")
            try await rig.timers(1)
            rig.clock.advance(by: .milliseconds(4900))
            try await rig.timers(1)
            #expect(try await rig.recorded() == 0)
            #expect(await rig.intake.remembered["quietPeriods"] == 1)
            rig.clock.advance(by: .milliseconds(100))
            let ended = try await rig.ended(1)
            #expect(ended.map(\.job.source) == [rig.inbox.appending("photo.png")])
            #expect(ended.map(\.outcome) == [.completed(rig.directory.appending("out/photo.png"))])
        }
    }

    @Test func aWriteDuringTheQuietPeriodStartsItAgain() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        try await rig.running {
            try rig.drop("photo.png")
            try await rig.timers(1)
            rig.clock.advance(by: .seconds(3))
            try rig.drop("photo.png", Self.twoPixels)
            try await rig.timers(2)
            // The first period ends at 5 s, but the file was written at 3 s: its ticket is stale.
            rig.clock.advance(by: .seconds(2))
            try await rig.timers(1)
            #expect(try await rig.recorded() == 0)
            rig.clock.advance(by: .seconds(3))
            let ended = try await rig.ended(1)
            #expect(ended.first?.job.fingerprint.size == Int64(Self.twoPixels.count))
        }
    }

    @Test func whatTheIntakeKnowsOfAFileGoesWithTheFile() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        try await rig.running {
            try rig.drop("photo.png")
            try rig.drop("notes.txt", Data("no rule takes this".utf8))
            try await rig.timers(2)
            rig.clock.advance(by: .seconds(5))
            try await rig.ended(1)
            try await waitUntil("both files to be decided") {
                await rig.intake.remembered["quietPeriods"] == 0 ? true : nil
            }
            let known = await rig.intake.remembered
            #expect(known["handled"] == 1 && known["unmatched"] == 1, "\(known)")
            try rig.remove("photo.png")
            try rig.remove("notes.txt")
            try await waitUntil("the intake to forget both files") {
                await rig.intake.remembered.values.allSatisfy { $0 == 0 } ? true : nil
            }
        }
    }

    @Test func aFileThatStaysEmptyWaitsForIncompleteTimeoutThenFails() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        try await rig.running {
            try rig.drop("scan.png", Data())
            try await rig.timers(1)
            // Found not ready at 5 s; looked at again every quiet period until 60 s after that.
            for _ in 0..<12 {
                rig.clock.advance(by: .seconds(5))
                try await rig.timers(1)
                #expect(await rig.intake.remembered["waitingSince"] == 1)
            }
            #expect(try await rig.recorded() == 0)
            rig.clock.advance(by: .seconds(5))
            let ended = try await rig.ended(1)
            guard case .failed(let failure) = ended.first?.outcome else {
                Issue.record("the empty file did not fail: \(ended)")
                return
            }
            #expect(failure.code == .corruptInput && failure.message.contains("empty"), "\(failure)")
            #expect(await rig.intake.remembered["waitingSince"] == 0)
        }
    }

    @Test func aPostponedFileIsTriedAgainAfterARetryDelayThatDoubles() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        try await rig.running {
            let path = rig.inbox.appending("photo.png")
            try Self.onePixel.write(to: URL(fileURLWithPath: path.string))
            let rule = try #require(rig.config.rules.first)
            let status = try SourceInspector.status(of: path)
            let job = Job(
                source: path,
                root: rig.inbox,
                rule: rule,
                plan: OutputPlan(directory: rig.directory.appending("out"), name: "photo.png"),
                fingerprint: status.fingerprint,
                sniffed: .png
            )
            // Postponed twice in a row: 30 s, then twice that.
            let full = ConversionFailure(.diskFull, "No space left on device")
            #expect(await rig.intake.jobFinished(job, outcome: .postponed(full)) == rig.start + 30)
            #expect(await rig.intake.jobFinished(job, outcome: .postponed(full)) == rig.start + 60)
            try await rig.timers(2)
            rig.clock.advance(by: .milliseconds(29_900))
            try await rig.timers(2)
            #expect(await rig.intake.remembered["postponed"] == 1)
            // The first retry is due at 30 s; then the file's quiet period.
            rig.clock.advance(by: .milliseconds(100))
            try await waitUntil("the retry to take the file in") {
                await rig.intake.remembered["postponed"] == 0 ? true : nil
            }
            try await rig.timers(2)
            rig.clock.advance(by: .seconds(5))
            let ended = try await rig.ended(1)
            #expect(ended.first?.job.attempt == 3)
            #expect(await rig.intake.remembered["postponements"] == 0)
            // The second retry finds the version handled: no second job.
            rig.clock.advance(by: .seconds(25))
            try await rig.timers(1)
            rig.clock.advance(by: .seconds(5))
            try await rig.timers(0)
            #expect(try await rig.recorded() == 1)
        }
    }

    @Test func aPausedIntakeHoldsAFileUntilItResumes() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        try await rig.running {
            await rig.intake.pause()
            try rig.drop("photo.png")
            try await rig.timers(1)
            rig.clock.advance(by: .seconds(5))
            try await waitUntil("the file to be held") { await rig.intake.remembered["held"] == 1 ? true : nil }
            #expect(try await rig.recorded() == 0)
            await rig.intake.resume()
            try await rig.timers(1)
            rig.clock.advance(by: .seconds(5))
            try await rig.ended(1)
            #expect(await rig.intake.remembered["held"] == 0)
        }
    }

    @Test func aFileYoungerThanMinAgeWaitsOnTheClock() async throws {
        let rig = try Rig(rule: "    minAge: 1h")
        defer { rig.directory.remove() }
        try await rig.running {
            try rig.drop("photo.png")
            try await rig.timers(1)
            rig.clock.advance(by: .seconds(5))
            // Quiet at 5 s, then waits until the file is an hour old by the clock's date.
            try await waitUntil("the minAge wait") { rig.clock.sleepers == 1 ? true : nil }
            rig.clock.advance(by: .seconds(3590))
            try await rig.timers(1)
            #expect(try await rig.recorded() == 0)
            rig.clock.advance(by: .seconds(10))
            let ended = try await rig.ended(1)
            #expect(ended.count == 1)
        }
    }
}
