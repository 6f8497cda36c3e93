import ChuteCore
import ChuteTestSupport
import Foundation
import Glibc
import Logging
import SystemPackage
import Testing

@testable import ChuteWatch

/// Drives the watch loop by hand, without its thread, to make the kernel's event queue overflow for real.
@Suite(.timeLimit(.minutes(1)))
struct WatchLoopTests {
    @Test func queueOverflowIsLoggedOnceAndEveryFileIsFoundAgain() async throws {
        let directory = try TemporaryDirectory(prefix: "watch-overflow")
        defer { directory.remove() }
        let root = try directory.makeDirectory("inbox")
        let logs = LogCapture()
        let (stream, continuation) = AsyncStream.makeStream(of: FileEvent.self, bufferingPolicy: .unbounded)
        var loop = WatchLoop(
            inotify: try Inotify(),
            specs: [WatchSpec(root: root, recursive: true, ignore: IgnoreRules(), excluded: [])],
            logger: logs.logger,
            continuation: continuation
        )
        loop.watchAllRoots()

        // Each new file queues IN_CREATE and IN_CLOSE_WRITE; nothing reads the queue meanwhile, so it overflows.
        let limitText = try String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8)
        let limit = try #require(Int(limitText.trimmingCharacters(in: .whitespacesAndNewlines)))
        let files = (0..<(limit / 2 + 64)).map { root.appending("file-\($0).jpg") }
        for file in files { try Files.write(file) }

        let overflowWarning = "queue overflow"
        while logs.records(containing: overflowWarning).isEmpty {
            var ready = pollfd(fd: loop.inotify.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            try #require(poll(&ready, 1, 0) == 1, "the queue drained without an overflow")
            try loop.handleQueuedEvents()
        }
        continuation.finish()

        #expect(logs.records(containing: overflowWarning).map(\.level) == [.warning])
        var found = Set<FilePath>()
        for await event in stream where event.kind == .found { found.insert(event.path) }
        #expect(found == Set(files))
    }
}
