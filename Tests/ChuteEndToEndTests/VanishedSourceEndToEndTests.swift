import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// A source deleted while its job runs gets no output: a user who deletes a file to stop its conversion is obeyed.
@Suite(.timeLimit(.minutes(3)))
struct VanishedSourceEndToEndTests {
    @Test func aSourceDeletedWhileItsJobRunsGetsNoOutput() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: videos
                    match: "*.mkv"
                    to: mp4
                    preset: veryslow
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try MediaFixtures.makeClip(
            at: staging.appending("film.mkv"),
            width: 640,
            height: 360,
            seconds: 6,
            codecArguments: ["-c:v", "mpeg4", "-q:v", "5", "-c:a", "aac"]
        )
        try harness.moveIn(["film.mkv"], from: staging)
        let daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Job started", "rule.name=videos")
        try FileManager.default.removeItem(atPath: harness.inbox.appending("film.mkv").string)

        let ended = try await waitUntil("the film's job to end", timeout: 120) {
            let lines =
                daemon.logLines(containing: "rule.name=videos", "Source vanished")
                + daemon.logLines(containing: "rule.name=videos", "Job completed")
            return lines.isEmpty ? nil : lines
        }
        print("vanished: \(ended)")
        try await harness.waitForSidecars(0)
        #expect(ended.allSatisfy { $0.contains("Source vanished while its job ran") })
        let left = harness.directory.files(below: "outbox").filter { !$0.contains("zz-sentinel-") }
        print("vanished: outbox holds \(left)")
        #expect(left.isEmpty)
        #expect(harness.temporaryFiles().isEmpty)
    }
}
