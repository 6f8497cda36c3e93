import ChuteCore
import ChuteTestSupport
import ChuteWatch
import Logging
import SystemPackage
import Testing

@Suite(.timeLimit(.minutes(1)))
struct DirectoryWatcherLifecycleTests {
    @Test func missingRootIsLoggedAndTheOtherRootsAreWatched() async throws {
        let directory = try TemporaryDirectory(prefix: "watch-missing")
        defer { directory.remove() }
        let missing = directory.appending("missing")
        let present = try directory.makeDirectory("present")
        try Files.write(present.appending("before.jpg"))
        let logs = LogCapture()
        let watcher = try DirectoryWatcher(
            specs: [
                WatchSpec(root: missing, recursive: true, ignore: IgnoreRules(), excluded: []),
                WatchSpec(root: present, recursive: true, ignore: IgnoreRules(), excluded: []),
            ],
            logger: logs.logger
        )
        let events = EventCollector(watcher.events())
        defer { watcher.stop() }

        let before = FileEvent(kind: .found, path: present.appending("before.jpg"), root: present)
        #expect(await events.events(containing: { $0 == before }).contains(before))
        let errors = logs.records(containing: "Cannot watch folder").filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.metadata["path"] == "\(missing)")

        let after = FileEvent(kind: .written, path: present.appending("after.jpg"), root: present)
        try Files.write(after.path)
        #expect(await events.events(containing: { $0 == after }).contains(after))
    }

    @Test func stopFinishesTheStreamAndMayBeRepeated() async throws {
        let directory = try TemporaryDirectory(prefix: "watch-stop")
        defer { directory.remove() }
        let watcher = try DirectoryWatcher(
            specs: [WatchSpec(root: directory.path, recursive: true, ignore: IgnoreRules(), excluded: [])],
            logger: LogCapture().logger
        )
        let events = EventCollector(watcher.events())
        watcher.stop()
        watcher.stop()
        #expect(await events.finished())
    }

    @Test func eventsAfterStopIsAFinishedStream() async throws {
        let directory = try TemporaryDirectory(prefix: "watch-stopped")
        defer { directory.remove() }
        let watcher = try DirectoryWatcher(
            specs: [WatchSpec(root: directory.path, recursive: true, ignore: IgnoreRules(), excluded: [])],
            logger: LogCapture().logger
        )
        watcher.stop()
        var iterator = watcher.events().makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }
}
