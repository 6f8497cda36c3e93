import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon's progress records of a video transcode: the time left that they give is near the time the job
/// really has left, rather than a fraction of it that keeps the job's predicted end moving later.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ProgressEndToEndTests {
    /// Each progress record that gives a time left: when it was logged (its `time`, in whole seconds) and its `eta`
    /// seconds, in order.
    private static func estimates(in lines: [String]) -> [(logged: Date, left: Int)] {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZ"
        return lines.compactMap { line in
            // `time=2026-11-24T15:37:51+0000 level=info msg="Job progress" eta=8s …`
            guard let record = Logfmt.parse(line), let time = record["time"], let logged = format.date(from: time),
                let eta = record["eta"], eta.hasSuffix("s"), let left = Int(eta.dropLast())
            else {
                return nil
            }
            return (logged, left)
        }
    }

    /// A short 1080p transcode at a slow preset: the encoder takes in dozens of frames (its look-ahead) before it
    /// gives out the first, so the input is read far ahead of what has been encoded in the first seconds.
    /// Measured by what was read, the job looks fast at first and slower later, and each time left is too short.
    @Test func timeLeftIsNearTheRealTimeLeft() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                  - name: videos
                    match: "*.mkv"
                    to: mp4
                    height: 1080
                    preset: slower
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try MediaFixtures.makeClip(
            at: staging.appending("party.mkv"),
            width: 2560,
            height: 1440,
            seconds: 12,
            rate: 30,
            codecArguments: MediaFixtures.h264AAC
        )
        try harness.moveIn(["party.mkv"], from: staging)

        let sidecars = try await harness.waitForSidecars(1, timeout: 240)

        #expect(sidecars["party.mp4.chute.json"]?.status == .completed)
        let records = daemon.logLines(containing: "Job progress", "party.mkv")
        print("progress records:\n\(records.joined(separator: "\n"))")
        let estimates = Self.estimates(in: records)
        let ended = try #require(
            sidecars["party.mp4.chute.json"].flatMap { sidecar in
                let format = ISO8601DateFormatter()
                format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                return format.date(from: sidecar.endedAt)
            }
        )
        try #require(estimates.count >= 2, "too few estimates to judge: \(records)")
        // Each estimate against the time the job really had left. The pace on a shared machine is not steady, so
        // an estimate may be off, but not by half: one measured by what was read, ahead of what was encoded, gives a
        // fraction of the real time, and is shorter the more frames the encoder holds.
        for estimate in estimates {
            let real = ended.timeIntervalSince(estimate.logged)
            #expect(
                Double(estimate.left) >= real / 2 - 2 && Double(estimate.left) <= real * 2 + 5,
                "\(estimate.left) s left when \(Int(real.rounded())) s were; estimates \(estimates.map(\.left))"
            )
        }
    }
}
