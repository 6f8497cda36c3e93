import ChuteCore
import ChuteTestSupport
import ChuteWatch
import Foundation
import SystemPackage
import Testing

/// A temporary folder with an `inbox` that a ``DirectoryWatcher`` watches and an `outside` folder on the same file
/// system that it does not, plus the watcher's events.
struct WatchFixture {
    /// The watched root, `<temp>/inbox`.
    let root: FilePath
    /// A folder outside the tree, `<temp>/outside`.
    let outside: FilePath
    let watcher: DirectoryWatcher
    let events: EventCollector
    /// Whether the root is polled: a new file is then reported as found, not written.
    let isPolled: Bool
    /// What the watcher logged.
    let logs: LogCapture

    /// Runs `body` with a started watcher on a fresh `inbox`, then stops the watcher and removes the folder.
    ///
    /// Nothing a test does here is a problem for an operator: the watcher must log no warning or error but those the
    /// test expects.
    ///
    /// - Parameters:
    ///   - recursive: the spec's `recursive`.
    ///   - excluded: folders below the root (relative to it) that the spec excludes.
    ///   - poll: the spec's `poll` (`always` to poll the root every 100 ms).
    ///   - expectedProblems: the warnings and errors the test causes on purpose, by message.
    ///   - prepare: makes what exists before the watcher starts; gets the root and the outside folder.
    ///   - body: the test; the watcher has finished its start-up scan when it runs.
    static func run(
        recursive: Bool = true,
        excluded: [String] = [],
        poll: PollMode = .auto,
        expectedProblems: [String] = [],
        prepare: (_ root: FilePath, _ outside: FilePath) throws -> Void = { _, _ in },
        _ body: (WatchFixture) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "watch")
        defer { directory.remove() }
        let root = try directory.makeDirectory("inbox")
        let outside = try directory.makeDirectory("outside")
        try prepare(root, outside)
        let spec = WatchSpec(
            root: root,
            recursive: recursive,
            ignore: IgnoreRules(),
            excluded: excluded.map { root.appending($0) },
            poll: poll,
            pollInterval: .milliseconds(100)
        )
        let logs = LogCapture()
        let watcher = try DirectoryWatcher(specs: [spec], logger: logs.logger)
        let fixture = WatchFixture(
            root: root,
            outside: outside,
            watcher: watcher,
            events: EventCollector(watcher.events()),
            isPolled: poll == .always,
            logs: logs
        )
        do {
            try await fixture.sync()
            try await body(fixture)
        } catch {
            await fixture.shutDown()
            throw error
        }
        await fixture.shutDown()
        #expect(logs.problems.map(\.message).filter { !expectedProblems.contains($0) } == [])
    }

    /// Writes a new marker file in the root and waits until the watcher reports it as written (as found, when
    /// polled). Events are handled in queue order, and a listing sees everything at once, so everything that happened
    /// before the call has then been handled.
    ///
    /// The first call also waits out the start-up scan: events are read only after it, so a marker reported as
    /// found is written again, and its `written` event comes once the scan is over.
    func sync() async throws {
        let marker = self.root.appending("sync-\(UUID().uuidString).marker")
        let written = FileEvent(kind: self.isPolled ? .found : .written, path: marker, root: self.root)
        try Files.write(marker)
        let seen = await self.events.events(containing: { $0.path == marker })
        if !seen.contains(written) {
            try Files.write(marker)
            await self.events.events(containing: { $0 == written })
        }
        try #require(self.events.all.contains(written), "the watcher did not report \(marker)")
    }

    /// The events about `path`, in order.
    func events(about path: FilePath) -> [FileEvent] {
        self.events.all.filter { $0.path == path }
    }

    /// Waits until `path` is reported as `kind`.
    ///
    /// - Returns: the events about `path`.
    @discardableResult
    func wait(for kind: FileEvent.Kind, _ path: FilePath) async -> [FileEvent] {
        let expected = FileEvent(kind: kind, path: path, root: self.root)
        await self.events.events(containing: { $0 == expected })
        return self.events(about: path)
    }

    /// Waits until every one of `paths` is reported as found or written.
    func waitForFoundOrWritten(_ paths: [FilePath]) async {
        await self.events.events(until: { events in
            paths.allSatisfy { path in events.contains { $0.path == path && ($0.kind == .found || $0.kind == .written) }
            }
        })
    }

    private func shutDown() async {
        self.watcher.stop()
        await self.events.finished()
    }
}
