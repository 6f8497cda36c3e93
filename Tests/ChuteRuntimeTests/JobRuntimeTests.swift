import ChuteCatalog
import ChuteCore
import ChuteFFmpeg
import ChuteMagick
import ChuteRuntime
import ChuteTestSupport
import Logging
import Synchronization
import SystemPackage
import Testing

@Suite(.timeLimit(.minutes(1)))
struct JobRuntimeTests {
    /// A `ServiceGroup` cancels its services outright (no graceful shutdown) when one of them returns or throws: the
    /// runtime must then return too, with its lanes parked in ``JobQueue/next(for:)`` woken, not hang the group.
    @Test func aCancelledRuntimeReturnsWithItsLanesIdle() async throws {
        let directory = try TemporaryDirectory(prefix: "runtime")
        defer { directory.remove() }
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let journal = try SQLiteJobStore(path: directory.appending("journal.sqlite"))
        let queue = JobQueue()
        let settings = Settings()
        let runtime = JobRuntime(
            queue: queue,
            completions: JobCompletions(watched: [], tickets: JobTickets()),
            watchedFolders: [],
            launcher: WorkerLauncher(executable: { _ in "/bin/false" }, arguments: { _ in [] }),
            journal: journal,
            settings: settings,
            lanes: [.image: 2, .audio: 1],
            logger: logger
        )
        let lanes = 3
        let returned = Atomic<Bool>(false)
        let task = Task {
            try? await runtime.run()
            returned.store(true, ordering: .sequentiallyConsistent)
        }
        try await waitUntil("\(lanes) lanes waiting for work") { await queue.waitingLanes == lanes ? true : nil }

        task.cancel()
        try await waitUntil("the cancelled runtime to return", timeout: 10) {
            returned.load(ordering: .sequentiallyConsistent) ? true : nil
        }
        #expect(await queue.waitingLanes == 0)
    }

    /// A lane waiting for work whose task is cancelled gets `nil` at once, and leaves no waiter behind.
    @Test func aCancelledWaitForWorkEndsWithNil() async throws {
        let queue = JobQueue()
        let waiting = Task { await queue.next(for: .video) }
        try await waitUntil("the lane to wait") { await queue.waitingLanes == 1 ? true : nil }
        waiting.cancel()
        let job = try await waitUntil("the cancelled wait to end", timeout: 10) { () async -> Job?? in
            // `value` is awaited only once the wait has no waiter left, so a hang shows as this deadline.
            await queue.waitingLanes == 0 ? .some(await waiting.value) : nil
        }
        #expect(job == nil)
    }
}
