import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon with `poll: always`, as on a network share: every way a file lands is processed exactly once.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PollingEndToEndTests {
    @Test func copyMoveAndRenameIntoAPolledFolderAreEachProcessedOnce() async throws {
        let harness = try DaemonHarness(watchOptions: "    poll: always\n    pollInterval: 200ms")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        #expect(daemon.logLines(containing: "Watching folder by polling").count == 1)
        let staging = try harness.directory.makeDirectory("staging")
        for name in ["copied.png", "moved.png", "renamed.png"] {
            try Fixtures.makeImage(at: staging.appending(name), width: 320, height: 240)
        }

        try FileManager.default.copyItem(
            atPath: staging.appending("copied.png").string,
            toPath: harness.inbox.appending("copied.png").string
        )
        try FileManager.default.moveItem(
            atPath: staging.appending("moved.png").string,
            toPath: harness.inbox.appending("moved.png").string
        )
        // rsync writes a hidden temporary name, then renames it into place.
        let temporary = harness.inbox.appending(".renamed.png.Xq81zT")
        try FileManager.default.copyItem(atPath: staging.appending("renamed.png").string, toPath: temporary.string)
        try FileManager.default.moveItem(
            atPath: temporary.string,
            toPath: harness.inbox.appending("renamed.png").string
        )
        let sidecars = try await harness.waitForSidecars(3)
        #expect(
            sidecars.keys.sorted() == [
                "copied.jpg.chute.json", "moved.jpg.chute.json", "renamed.jpg.chute.json",
            ]
        )
        #expect(sidecars.values.allSatisfy { $0.status == .completed }, "\(sidecars.mapValues(\.error))")
        #expect(harness.temporaryFiles().isEmpty)
    }
}
