import ChuteCore
import ChuteTestSupport
import ChuteWatch
import Foundation
import Logging
import SystemPackage
import Testing

/// The `fs.inotify.max_user_watches` limit, hit for real.
///
/// Lowering the limit for this process would lower it for every process of the user, so the scenario runs in a
/// child: this test binary again, in a new user namespace (`unshare --user --map-root-user`) whose own limit,
/// `/proc/sys/user/max_inotify_watches`, is set to 3.
@Suite(.timeLimit(.minutes(1)))
struct WatchLimitTests {
    /// Set in the child's environment; the scenario runs only there.
    static let childVariable = "CHUTE_WATCH_LIMIT_CHILD"
    static let isChild = ProcessInfo.processInfo.environment[Self.childVariable] != nil
    static let watchLimit = 3
    /// Lowers the limit in the new namespace; the arguments that follow it are run there.
    static let lowerLimit = "echo \(Self.watchLimit) > /proc/sys/user/max_inotify_watches"
    /// Whether this system lets the test create a user namespace and set its watch limit.
    static var canLowerTheLimit: Bool {
        let probe = ["unshare", "--user", "--map-root-user", "sh", "-c", Self.lowerLimit]
        return (try? CommandLineTool.run(probe, check: false).status) == 0
    }

    @Test(.enabled(if: !Self.isChild && Self.canLowerTheLimit))
    func watchLimitIsLoggedOnceAndTheFoldersBeyondItAreStillScanned() throws {
        let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let script = """
            \(Self.lowerLimit) && exec "$0" --testing-library swift-testing --filter scenarioAtTheWatchLimit
            """
        let result = try CommandLineTool.run(
            ["env", "\(Self.childVariable)=1", "unshare", "--user", "--map-root-user", "sh", "-c", script, testBinary],
            check: false
        )
        let output = result.standardOutput + result.standardError
        #expect(result.status == 0, "\(output)")
        #expect(output.contains("scenarioAtTheWatchLimit() passed"), "\(output)")
    }

    @Test(.enabled(if: Self.isChild))
    func scenarioAtTheWatchLimit() async throws {
        let directory = try TemporaryDirectory(prefix: "watch-limit")
        defer { directory.remove() }
        let root = try directory.makeDirectory("inbox")
        // The root and two sub-folders get the three watches; two sub-folders are left without one.
        let files = ["top.jpg", "a/1.jpg", "b/2.jpg", "c/3.jpg", "d/4.jpg"].map { root.appending($0) }
        for file in files {
            try Files.makeFolders(file.removingLastComponent())
            try Files.write(file)
        }
        let logs = LogCapture()
        let watcher = try DirectoryWatcher(
            specs: [WatchSpec(root: root, recursive: true, ignore: IgnoreRules(), excluded: [])],
            logger: logs.logger
        )
        let events = EventCollector(watcher.events())
        defer { watcher.stop() }

        let found = await events.events(until: { events in
            files.allSatisfy { file in events.contains(FileEvent(kind: .found, path: file, root: root)) }
        })
        #expect(Set(found.filter { $0.kind == .found }.map(\.path)) == Set(files))

        // A folder moved in later also meets the limit: still one error, and its file is found by the scan. (It is
        // moved in with its file: a file written after the scan of an unwatched folder goes unseen.)
        let outside = try directory.makeDirectory("outside/e")
        try Files.write(outside.appending("5.jpg"))
        let later = root.appending("e/5.jpg")
        try Files.rename(outside, to: later.removingLastComponent())
        let laterFound = FileEvent(kind: .found, path: later, root: root)
        let afterStart = FileEvent(kind: .written, path: root.appending("after.jpg"), root: root)
        try Files.write(afterStart.path)
        let all = await events.events(until: { $0.contains(laterFound) && $0.contains(afterStart) })
        #expect(all.contains(laterFound))
        #expect(all.contains(afterStart))

        let problems = logs.problems
        #expect(problems.count == 1)
        #expect(problems.first?.level == .error)
        #expect(problems.first?.message.contains("sysctl fs.inotify.max_user_watches=524288") == true)
        // The other two folders without a watch (one at start, the later one) are logged at debug level only.
        #expect(logs.records(containing: "Folder not watched").map(\.level) == [.debug, .debug])
    }
}
