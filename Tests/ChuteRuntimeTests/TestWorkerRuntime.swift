import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Logging
import ServiceLifecycle
import SystemPackage
import Testing

/// A runtime of two image lanes over a real store in `directory`, whose workers are `chute-test-worker` (the real
/// protocol, no C library), with its submitter and the tickets' register; on the machine's clock, or on a
/// ``ManualClock`` that a test moves.
struct TestWorkerRuntime {
    let directory: TemporaryDirectory
    let store: SQLiteJobStore
    let submitter: JobSubmitter
    let tickets: JobTickets
    let cancellations: JobCancellations
    let events: JobEvents
    let workers: WorkerCensus
    let runtime: JobRuntime
    let rule: Rule

    /// - Parameters:
    ///   - clock: the queue's and the runtime's time; the machine's when `nil`.
    ///   - settings: the runtime's settings (grace period, idle workers).
    ///   - log: where the runtime's log records go; nowhere when `nil`.
    init(clock: ManualClock? = nil, settings: Settings = Settings(), log: RecordingLogHandler.Box? = nil) throws {
        self.directory = try TemporaryDirectory(prefix: "runtime")
        let logger = Logger(label: "test") { _ in
            log.map { RecordingLogHandler(box: $0) as any LogHandler } ?? SwiftLogNoOpLogHandler()
        }
        let time = clock.map { clock in
            RuntimeClock(clock) {
                Date(timeIntervalSince1970: 1_800_000_000 + Double(clock.now.offset / .milliseconds(1)) / 1000)
            }
        }
        self.store = try SQLiteJobStore(path: self.directory.appending("journal.sqlite"))
        let queue = JobQueue(clock: time ?? .system)
        self.tickets = JobTickets()
        self.cancellations = JobCancellations()
        self.events = JobEvents()
        self.workers = WorkerCensus()
        self.submitter = JobSubmitter(store: self.store, queue: queue, tickets: self.tickets, logger: logger)
        let worker = ChuteProcess.executable.removingLastComponent().appending("chute-test-worker")
        self.runtime = JobRuntime(
            queue: queue,
            completions: JobCompletions(watched: [], tickets: self.tickets),
            watchedFolders: [],
            launcher: WorkerLauncher(
                executable: { _ in worker },
                arguments: { engine in ["--engine", engine.rawValue] }
            ),
            journal: self.store,
            settings: settings,
            lanes: [.image: 2],
            logger: logger,
            events: self.events,
            cancellations: self.cancellations,
            workers: self.workers,
            clock: time ?? .system
        )
        self.rule = Rule(
            name: "copy",
            match: [try GlobPattern("*")],
            to: try #require(Engines.registry.format(named: "png")),
            output: self.directory.appending("out"),
            onDuplicate: .convert
        )
    }

    /// A job of a source in `in/` holding `content`.
    func job(_ name: String, content: String) throws -> Job {
        let folder = self.directory.appending("in")
        try FileManager.default.createDirectory(atPath: folder.string, withIntermediateDirectories: true)
        let source = folder.appending("\(name).png")
        try Data(content.utf8).write(to: URL(fileURLWithPath: source.string))
        let status = try SourceInspector.status(of: source)
        return Job(
            source: source,
            root: folder,
            rule: self.rule,
            plan: OutputPlan(directory: self.directory.appending("out"), name: FilePath.Component("\(name).png")!),
            fingerprint: status.fingerprint,
            sniffed: .png
        )
    }

    /// Runs `body` with the runtime running, then shuts it down; `body` may start the shutdown itself, through the
    /// service group it is given.
    func running(_ body: (ServiceGroup) async throws -> Void) async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [self.runtime],
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            )
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // A body that throws cancels the group's task, and so the runtime, on its way out.
            try await body(group)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
