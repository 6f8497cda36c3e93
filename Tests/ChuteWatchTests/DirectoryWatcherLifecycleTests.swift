import ChuteCore
import ChuteTestSupport
import ChuteWatch
import Foundation
import Logging
import SystemPackage
import Testing

@Suite(.timeLimit(.minutes(1)))
struct DirectoryWatcherLifecycleTests {
    @Test func missingRootIsWaitedForAndWatchedOnceItAppears() async throws {
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
        // Logged once the roots that exist are watched and scanned.
        try await waitUntil("the watcher to say it waits") {
            logs.records(containing: "Watcher waiting").isEmpty ? nil : true
        }
        let waiting = logs.records(containing: "Waiting for watched folder to appear")
        #expect(waiting.count == 1)
        #expect(waiting.first?.metadata["path"] == "\(missing)")
        #expect(logs.records(containing: "Watcher ready").isEmpty)
        #expect(logs.records(containing: "Watcher waiting").count == 1)

        let after = FileEvent(kind: .written, path: present.appending("after.jpg"), root: present)
        try Files.write(after.path)
        #expect(await events.events(containing: { $0 == after }).contains(after))

        // The missing folder appears, with a file already in it, then gets another.
        let staging = try directory.makeDirectory("staging")
        try Files.write(staging.appending("early.jpg"))
        try FileManager.default.moveItem(atPath: staging.string, toPath: missing.string)
        let early = FileEvent(kind: .found, path: missing.appending("early.jpg"), root: missing)
        #expect(await events.events(containing: { $0 == early }).contains(early))
        let late = FileEvent(kind: .written, path: missing.appending("late.jpg"), root: missing)
        try Files.write(late.path)
        #expect(await events.events(containing: { $0 == late }).contains(late))
        #expect(logs.records(containing: "Watcher ready").count == 1)
        #expect(logs.records(containing: "Waiting for watched folder to appear").count == 1)
    }

    @Test func aDeletedRootIsWaitedForAgain() async throws {
        let directory = try TemporaryDirectory(prefix: "watch-deleted")
        defer { directory.remove() }
        let root = try directory.makeDirectory("root")
        let logs = LogCapture()
        let watcher = try DirectoryWatcher(
            specs: [WatchSpec(root: root, recursive: true, ignore: IgnoreRules(), excluded: [])],
            logger: logs.logger
        )
        let events = EventCollector(watcher.events())
        defer { watcher.stop() }
        try await waitUntil("the watcher to be ready") {
            logs.records(containing: "Watcher ready").isEmpty ? nil : true
        }
        let first = FileEvent(kind: .written, path: root.appending("first.jpg"), root: root)
        try Files.write(first.path)
        #expect(await events.events(containing: { $0 == first }).contains(first))

        try FileManager.default.removeItem(atPath: root.string)
        try await waitUntil("the watcher to wait for the deleted root") {
            logs.records(containing: "Waiting for watched folder to appear").isEmpty ? nil : true
        }
        try FileManager.default.createDirectory(atPath: root.string, withIntermediateDirectories: false)
        try await waitUntil("the root to be watched again") {
            logs.records(containing: "Watcher ready").count == 2 ? true : nil
        }
        let second = FileEvent(kind: .written, path: root.appending("second.jpg"), root: root)
        try Files.write(second.path)
        #expect(await events.events(containing: { $0 == second }).contains(second))
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
