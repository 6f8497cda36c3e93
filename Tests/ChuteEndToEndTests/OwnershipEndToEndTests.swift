import ChuteCore
import ChuteTestSupport
import Foundation
import Glibc
import SystemPackage
import Testing

/// The real daemon gives outputs and sidecars the rule's owner, group and mode, as NAS shares need. Giving files
/// away needs root, which CI is.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: geteuid() == 0, "changing owners needs root"))
struct OwnershipEndToEndTests {
    @Test func outputsAndSidecarsGetTheRulesOwnerGroupAndMode() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    owner: 1026
                    group: 100
                    mode: "0604"
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("shared.png"))
        try FileManager.default.moveItem(
            atPath: staging.appending("shared.png").string,
            toPath: harness.inbox.appending("shared.png").string
        )

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["shared.jpg.chute.json"]?.status == .completed)
        for name in ["shared.jpg", "shared.jpg.chute.json"] {
            var info = stat()
            try #require(stat(harness.outbox.appending(name).string, &info) == 0)
            #expect(info.st_uid == 1026 && info.st_gid == 100, "\(name): \(info.st_uid):\(info.st_gid)")
            #expect(UInt32(info.st_mode) & 0o777 == 0o604, "\(name): \(String(info.st_mode & 0o777, radix: 8))")
        }
        // The folder Chute created for them can be searched by whoever may read them.
        var folder = stat()
        try #require(stat(harness.outbox.string, &folder) == 0)
        #expect(UInt32(folder.st_mode) & 0o777 == 0o705)
    }
}
